// The worker's posting step for mlx5-layout queues (softnic, or the mlx5 provider's host-memory
// queues): the worker stands where rdma-core's mlx5 provider stands.
#include "dissect/gda/gda.h"
#include "dissect/common/error.h"
#include "dissect/proxy/poster.h"

namespace dissect::proxy {
namespace {

// System-scope release stores order the WQEs before the doorbell record and the doorbell for a
// NIC (or softnic engine) that reads host memory. Counted: a worker's posts are what telemetry
// shows of the proxy path (one predictable branch per hook on a host thread when it is off).
using Ordering = gda::counted<gda::ordering::system_release_store>;
constexpr auto kExclusive = gda::Sharing::exclusive;

class Mlx5RingPoster final : public Poster {
 public:
  explicit Mlx5RingPoster(const nic::QpHandle& qp) : qp_(qp) {}

  std::string describe() const override { return "QP " + hex(qp_.qpn); }

  // One WQEBB per request (write and fetch-add WQEs fit one basic block).
  uint32_t room() const override {
    return static_cast<uint32_t>(qp_.sq.wqebb_count - (qp_.state->resv_head - qp_.state->cons_idx));
  }

  bool supports(Operation) const override { return true; }

  uint64_t post(const PostItem* items, uint32_t count) override {
    uint64_t base = 0;
    gda::reserve<Ordering, kExclusive>(qp_, count, &base);  // count <= room(): never waits
    for (uint32_t i = 0; i < count; ++i) build(items[i], base + i, i + 1 == count);
    gda::publish_and_ring<Ordering, kExclusive>(qp_, base, count);
    return base + count;
  }

  uint64_t poll() override {
    gda::poll_cq<Ordering, kExclusive>(qp_);
    return qp_.state->cons_idx;
  }

  uint32_t error() const override {
    return qp_.state->error == 0 ? 0 : 0x100 | nic::send_queue_error_syndrome(qp_.state->error);
  }

 private:
  void build(const PostItem& item, uint64_t index, bool last) {
    gda::note_post<Ordering>(qp_, index, build_wqe(item, index, last));
  }

  gda::PostNote build_wqe(const PostItem& item, uint64_t index, bool last) {
    const auto completion = last ? gda::Completion::signaled : gda::Completion::unsignaled;
    if (item.operation == Operation::write) {
      return gda::write_rdma_write_wqe(
          qp_, index, {item.local_address, item.lkey, item.length, item.remote_address, item.rkey},
          completion);
    }
    if (item.operation == Operation::fetch_add) {
      return gda::write_fetch_add_wqe(
          qp_, index, {item.remote_address, item.rkey, item.length, item.local_address, item.lkey},
          completion);
    }
    return gda::write_nop_wqe(qp_, index, completion);
  }

  nic::QpHandle qp_;
};

}  // namespace

std::unique_ptr<Poster> make_mlx5_ring_poster(const nic::QpHandle& qp) {
  return std::make_unique<Mlx5RingPoster>(qp);
}

}  // namespace dissect::proxy
