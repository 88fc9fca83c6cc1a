#include "dissect/bootstrap/in_process.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>

namespace dissect::bootstrap {
namespace {

enum class Op { allgather, barrier, broadcast };
const char* op_name(Op op) {
  switch (op) {
    case Op::allgather: return "allgather";
    case Op::barrier: return "barrier";
    case Op::broadcast: return "broadcast";
  }
  return "?";
}

// Collective number r uses slot r % 2. A PE can enter round r + 1 while slower PEs still copy the
// result of round r out of the other slot; it cannot enter round r + 2 before every PE has finished
// round r (round r + 1 completes only once all of them arrived there), so two slots suffice.
struct Slot {
  int arrived = 0;
  std::vector<char> present;
  Op op = Op::barrier;
  size_t bytes = 0;
  int root = 0;
  int first = -1;  // rank that opened the round (named in mismatch errors)
  std::vector<uint8_t> buffer;
};

struct Group {
  int size = 0;
  double timeout_s = 0;
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t completed = 0;  // rounds completed
  Slot slots[2];
  std::string broken;      // non-empty after a failure: every later call throws it
};

std::string describe_round(Op op, uint64_t round, size_t bytes, int root) {
  std::ostringstream out;
  out << op_name(op) << " #" << round;
  if (op == Op::allgather) out << " (" << bytes << " bytes)";
  if (op == Op::broadcast) out << " (" << bytes << " bytes from rank " << root << ")";
  return out.str();
}

class InProcess : public Bootstrap {
 public:
  InProcess(std::shared_ptr<Group> group, int rank) : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int world_size() const override { return group_->size; }
  int local_rank() const override { return rank_; }
  int local_size() const override { return group_->size; }
  std::string kind() const override { return "in-process"; }

  std::vector<uint8_t> allgather(const void* data, size_t bytes) override {
    std::vector<uint8_t> out;
    collective(Op::allgather, data, bytes, 0, &out, nullptr);
    return out;
  }
  void barrier() override { collective(Op::barrier, nullptr, 0, 0, nullptr, nullptr); }
  void broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= group_->size) {
      throw InvalidArgument("broadcast root " + std::to_string(root) + " is not a rank of " +
                            std::to_string(group_->size));
    }
    collective(Op::broadcast, data, bytes, root, nullptr, data);
  }

 private:
  void collective(Op op, const void* in, size_t bytes, int root, std::vector<uint8_t>* gathered,
                  void* broadcast_out) {
    Group& g = *group_;
    const uint64_t round = round_++;
    Slot& s = g.slots[round % 2];
    std::unique_lock<std::mutex> lock(g.mutex);
    const std::string who = "in-process rank " + std::to_string(rank_);
    if (!g.broken.empty()) throw Error(who + ": the group failed earlier: " + g.broken);

    if (s.arrived == 0) {
      s.op = op;
      s.bytes = bytes;
      s.root = root;
      s.first = rank_;
      s.present.assign(static_cast<size_t>(g.size), 0);
      if (op == Op::allgather) s.buffer.resize(bytes * static_cast<size_t>(g.size));
      if (op == Op::broadcast) s.buffer.resize(bytes);
    } else if (s.op != op || s.bytes != bytes || s.root != root) {
      g.broken = who + " called " + describe_round(op, round, bytes, root) + " while rank " +
                 std::to_string(s.first) + " called " +
                 describe_round(s.op, round, s.bytes, s.root);
      g.cv.notify_all();
      throw Error(g.broken);
    }
    if (op == Op::allgather && bytes > 0) {
      std::memcpy(s.buffer.data() + static_cast<size_t>(rank_) * bytes, in, bytes);
    }
    if (op == Op::broadcast && rank_ == root && bytes > 0) std::memcpy(s.buffer.data(), in, bytes);
    s.present[static_cast<size_t>(rank_)] = 1;

    if (++s.arrived == g.size) {
      s.arrived = 0;
      g.completed = round + 1;
      g.cv.notify_all();
    } else {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(g.timeout_s));
      const bool done = g.cv.wait_until(lock, deadline, [&] {
        return g.completed > round || !g.broken.empty();
      });
      if (g.completed <= round) {
        if (!done) {
          std::ostringstream missing;
          int count = 0;
          for (int r = 0; r < g.size; ++r) {
            if (!s.present[static_cast<size_t>(r)]) missing << (count++ ? ", " : "") << r;
          }
          std::ostringstream msg;
          msg << who << ": timed out after " << g.timeout_s << " s in "
              << describe_round(op, round, bytes, root) << " waiting for rank"
              << (count > 1 ? "s " : " ") << missing.str() << " (" << (g.size - count) << " of "
              << g.size << " arrived)";
          g.broken = msg.str();
          g.cv.notify_all();
          throw BootstrapTimeout(g.broken);
        }
        throw Error(who + ": " + g.broken);
      }
    }
    // Round complete: copy the result out (the slot is not reused before every PE did).
    if (gathered) *gathered = s.buffer;
    if (broadcast_out && rank_ != root && bytes > 0) std::memcpy(broadcast_out, s.buffer.data(), bytes);
  }

  std::shared_ptr<Group> group_;
  int rank_;
  uint64_t round_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<Bootstrap>> InProcessGroup::create(int world_size, double timeout_s) {
  if (world_size < 1 || world_size > 4096) {
    throw InvalidArgument("in-process world size " + std::to_string(world_size) +
                          " is not in 1..4096");
  }
  if (!(timeout_s > 0)) {
    throw InvalidArgument("in-process bootstrap timeout " + std::to_string(timeout_s) +
                          " s is not positive");
  }
  auto group = std::make_shared<Group>();
  group->size = world_size;
  group->timeout_s = timeout_s;
  std::vector<std::unique_ptr<Bootstrap>> pes;
  for (int r = 0; r < world_size; ++r) pes.push_back(std::make_unique<InProcess>(group, r));
  return pes;
}

}  // namespace dissect::bootstrap
