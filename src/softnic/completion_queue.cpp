#include "completion_queue.h"

#include <cstdio>
#include <string>

#include "dissect/common/error.h"
#include "dissect/mlx5/cqe.h"
#include "table_memory.h"

namespace dissect::softnic {

namespace {

constexpr uint32_t MAX_MEMBERS = 4096;
constexpr uint32_t SHARED_CQN_BASE = 0x400000;  // own send CQs take the QPN, receive CQs QPN | 2^23

size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

// The member table: at least twice the members, so that a probe stays short.
uint32_t member_slots(uint32_t max_members) {
  uint32_t slots = 1;
  while (slots < 2 * max_members) slots <<= 1;
  return slots;
}

const nic::CqAttributes& checked(const SoftNic& nic, const nic::CqAttributes& a) {
  const std::string me = "create_cq on softnic " + std::to_string(nic.nic_id());
  nic::check_queue_depth("shared CQ depth (cqe_entries)", a.cqe_entries, 1u << 22);
  if (a.max_members == 0 || a.max_members > MAX_MEMBERS) {
    throw InvalidArgument(me + ": max_members = " + std::to_string(a.max_members) +
                          ": must be in [1, " + std::to_string(MAX_MEMBERS) + "]");
  }
  if (nic.engine() == EngineKind::host_thread && a.placement == nic::Placement::gpu) {
    throw InvalidArgument(me + ": placement 'gpu' needs the GPU engine (host threads cannot "
                          "write CQEs into GPU memory)");
  }
  return a;
}

}  // namespace

SoftCompletionQueue::SoftCompletionQueue(SoftNic& nic, const nic::CqAttributes& attributes)
    : nic_(nic),
      attributes_(checked(nic, attributes)),
      cqn_(SHARED_CQN_BASE + nic.cq_count_++),
      slots_(member_slots(attributes.max_members)),
      qpns_(slots_, nic::EMPTY_MEMBER),
      depths_(slots_, 0) {
  const size_t cqe_bytes = size_t{attributes_.cqe_entries} * mlx5::MLX5_CQE_SIZE;
  const size_t state_bytes = align64(sizeof(nic::SharedCqState));
  const size_t qpn_bytes = align64(size_t{slots_} * sizeof(uint32_t));
  const size_t handle_bytes = size_t{slots_} * sizeof(nic::QpHandle);
  const size_t bytes = cqe_bytes + state_bytes + qpn_bytes + handle_bytes;
  memory_ = static_cast<uint8_t*>(nic_.allocate(bytes, attributes_.placement));
  try {
    produced_ = static_cast<uint64_t*>(nic_.allocate(
        64, nic_.engine() == EngineKind::gpu_kernel ? nic::Placement::gpu : nic::Placement::host));
  } catch (...) {
    nic_.release(memory_);
    throw;
  }
  cqes_ = reinterpret_cast<mlx5::mlx5_cqe64*>(memory_);
  state_ = reinterpret_cast<nic::SharedCqState*>(memory_ + cqe_bytes);
  member_qpns_ = reinterpret_cast<uint32_t*>(memory_ + cqe_bytes + state_bytes);
  member_handles_ = reinterpret_cast<nic::QpHandle*>(memory_ + cqe_bytes + state_bytes + qpn_bytes);
  // Every CQE owned by the NIC, and the pollers' state (the table empty: zero-filled).
  std::vector<uint8_t> image(cqe_bytes + state_bytes, 0);
  auto* cqes = reinterpret_cast<mlx5::mlx5_cqe64*>(image.data());
  for (uint32_t i = 0; i < attributes_.cqe_entries; ++i) cqes[i].op_own = mlx5::MLX5_CQE_INITIAL_OP_OWN;
  auto* state = reinterpret_cast<nic::SharedCqState*>(image.data() + cqe_bytes);
  state->member_mask = slots_ - 1;
  state->member_qpns = member_qpns_;
  state->members = member_handles_;
  nic_.memory_->write(memory_, image.data(), image.size());
}

SoftCompletionQueue::~SoftCompletionQueue() {
  // A member's engine would go on writing CQEs here: keep the memory (and say so) rather than
  // let it write into freed memory.
  if (members_ != 0) {
    std::fprintf(stderr, "dissect: softnic %u: CQ 0x%x destroyed with %u member QPs: its memory is "
                 "kept (destroy the QPs first)\n", nic_.nic_id(), cqn_, members_);
    return;
  }
  try {
    nic_.release(produced_);
    nic_.release(memory_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: softnic %u: destroying CQ 0x%x: %s\n", nic_.nic_id(), cqn_, e.what());
  }
}

nic::CqHandle SoftCompletionQueue::handle() const {
  return nic::CqHandle{cqes_, attributes_.cqe_entries, cqn_, nullptr, 0, state_};
}

CqContext SoftCompletionQueue::engine_context() const {
  return CqContext{cqes_, attributes_.cqe_entries, cqn_, 0, 0, 0, produced_};
}

uint32_t SoftCompletionQueue::find_slot(uint32_t qpn) const {
  uint32_t slot = nic::member_slot(qpn, slots_ - 1);
  for (uint32_t probes = 0; probes < slots_; ++probes, slot = (slot + 1) & (slots_ - 1)) {
    if (qpns_[slot] == qpn) return slot;
    if (qpns_[slot] == nic::EMPTY_MEMBER) return slots_;
  }
  return slots_;
}

void SoftCompletionQueue::check_room(uint32_t sq_wqebbs) const {
  const std::string me = "softnic " + std::to_string(nic_.nic_id()) + " CQ " + hex(cqn_) +
                         ": a QP cannot join";
  if (members_ == attributes_.max_members) {
    throw InvalidArgument(me + ": the CQ has its max_members = " +
                          std::to_string(attributes_.max_members) + " members");
  }
  if (member_wqebbs_ + sq_wqebbs > attributes_.cqe_entries) {
    throw InvalidArgument(me + ": its " + std::to_string(sq_wqebbs) + " WQEBBs and the members' " +
                          std::to_string(member_wqebbs_) + " exceed the CQ's " +
                          std::to_string(attributes_.cqe_entries) + " entries: the CQ could overrun");
  }
}

void SoftCompletionQueue::join(const nic::QpHandle& member, uint32_t sq_wqebbs) {
  if (find_slot(member.qpn) != slots_) {
    throw InvalidArgument("softnic " + std::to_string(nic_.nic_id()) + " CQ " + hex(cqn_) +
                          ": QP " + hex(member.qpn) + " is a member already");
  }
  check_room(sq_wqebbs);
  uint32_t slot = nic::member_slot(member.qpn, slots_ - 1);
  while (qpns_[slot] != nic::EMPTY_MEMBER && qpns_[slot] != nic::LEFT_MEMBER) slot = (slot + 1) & (slots_ - 1);
  // The handle first, then the QPN that makes a poller look at it.
  nic_.memory_->write(&member_handles_[slot], &member, sizeof member);
  nic_.memory_->publish(&member_qpns_[slot], member.qpn);
  qpns_[slot] = member.qpn;
  depths_[slot] = sq_wqebbs;
  member_wqebbs_ += sq_wqebbs;
  ++members_;
}

void SoftCompletionQueue::leave(uint32_t qpn) {
  const uint32_t slot = find_slot(qpn);
  if (slot == slots_) {
    throw InvalidArgument("softnic " + std::to_string(nic_.nic_id()) + " CQ " + hex(cqn_) +
                          ": QP " + hex(qpn) + " is not a member");
  }
  nic_.memory_->publish(&member_qpns_[slot], nic::LEFT_MEMBER);
  qpns_[slot] = nic::LEFT_MEMBER;
  member_wqebbs_ -= depths_[slot];
  depths_[slot] = 0;
  --members_;
}

}  // namespace dissect::softnic
