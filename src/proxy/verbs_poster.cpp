// Proxy posting over verbs: the same worker, a different last step (DESIGN.md: one worker code for
// every provider).
#include "dissect/proxy/verbs_poster.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "dissect/common/error.h"
#include "dissect/providers/ibverbs/endpoint.h"

namespace dissect::proxy {
namespace {

class VerbsPoster final : public Poster {
 public:
  VerbsPoster(ibverbs::Endpoint& endpoint, uint32_t max_send_wr)
      : endpoint_(endpoint), max_send_wr_(max_send_wr) {}

  std::string describe() const override { return "ibverbs endpoint on " + endpoint_.device_name(); }

  uint32_t room() const override { return static_cast<uint32_t>(max_send_wr_ - (posted_ - retired_)); }

  bool supports(Operation operation) const override { return operation == Operation::write; }

  // A bad descriptor travels as a zero-length write (no SGE, no key checked) so the chain's
  // wr_id accounting stays one request, one work request.
  uint64_t post(const PostItem* items, uint32_t count) override {
    writes_.clear();
    for (uint32_t i = 0; i < count; ++i) {
      const PostItem& item = items[i];
      if (item.operation == Operation::write) {
        writes_.push_back({item.local_address, item.length, item.lkey, item.remote_address, item.rkey});
      } else {
        writes_.push_back({0, 0, 0, 0, 0});
      }
    }
    const uint64_t last_id = endpoint_.post_write_chain(writes_);
    posted_ += count;
    last_id_ = last_id;
    return posted_;
  }

  // wr_ids are consecutive, so the signalled last id of a chain retires every request up to it.
  uint64_t poll() override {
    try {
      for (uint64_t id : endpoint_.poll(16)) retired_ = std::max(retired_, posted_ - (last_id_ - id));
    } catch (const Error& e) {
      // The QP is in error: every outstanding request is flushed.
      if (error_ == 0) std::fprintf(stderr, "dissect: proxy %s: %s\n", describe().c_str(), e.what());
      error_ = 0x100 | 0xff;
      retired_ = posted_;
    }
    return retired_;
  }

  uint32_t error() const override { return error_; }

 private:
  ibverbs::Endpoint& endpoint_;
  uint32_t max_send_wr_;
  uint64_t posted_ = 0;   // requests posted
  uint64_t retired_ = 0;  // requests retired
  uint64_t last_id_ = 0;  // wr_id of the last request posted (corresponds to posted_ - 1)
  uint32_t error_ = 0;
  std::vector<ibverbs::RdmaWrite> writes_;
};

}  // namespace

std::unique_ptr<Poster> make_verbs_poster(ibverbs::Endpoint& endpoint, uint32_t max_send_wr) {
  if (max_send_wr == 0) throw InvalidArgument("proxy: verbs poster with max_send_wr = 0");
  return std::make_unique<VerbsPoster>(endpoint, max_send_wr);
}

}  // namespace dissect::proxy
