// Private: a CQ several QPs' send queues share (nic::CompletionQueue). Two halves, in two memories:
// the engine's producer counter (the NIC's engine memory: every member's window reserves its CQE
// numbers from it, engine/execute.h reserve_cqes) and, in the CQ's placement, the CQEs and what
// the pollers share (nic::SharedCqState: their consumer index and the member table a CQE's QPN is
// looked up in, gda/completion.h poll_shared_cq).
#pragma once

#include <cstdint>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"

namespace dissect::softnic {

class SoftCompletionQueue : public nic::CompletionQueue {
 public:
  SoftCompletionQueue(SoftNic& nic, const nic::CqAttributes& attributes);
  ~SoftCompletionQueue() override;
  SoftCompletionQueue(const SoftCompletionQueue&) = delete;
  SoftCompletionQueue& operator=(const SoftCompletionQueue&) = delete;

  uint32_t cqn() const override { return cqn_; }
  nic::CqHandle handle() const override;
  uint32_t members() const override { return members_; }

  const SoftNic& nic() const { return nic_; }
  nic::Placement placement() const { return attributes_.placement; }
  // The send CQ context of a member: this CQ's ring and the engine's producer counter.
  CqContext engine_context() const;
  // QP `member` (a send queue of `sq_wqebbs` WQEBBs) joins, before its first post: throws naming
  // the CQ when the members' queues would sum past its depth or its member table is full.
  void join(const nic::QpHandle& member, uint32_t sq_wqebbs);
  // What join checks of room (depth and table), before a QP is made to join.
  void check_room(uint32_t sq_wqebbs) const;
  // QP `qpn` leaves once its engine stopped writing CQEs for it; CQEs of it still in the CQ are
  // then consumed as orphans (SharedCqState::orphan_cqes).
  void leave(uint32_t qpn);

 private:
  uint32_t find_slot(uint32_t qpn) const;  // the slot holding `qpn`, or slots_ when none
  SoftNic& nic_;
  nic::CqAttributes attributes_;
  uint32_t cqn_;
  uint32_t slots_;
  uint8_t* memory_ = nullptr;  // CQEs, SharedCqState, member QPNs, member handles
  mlx5::mlx5_cqe64* cqes_ = nullptr;
  nic::SharedCqState* state_ = nullptr;
  uint32_t* member_qpns_ = nullptr;
  nic::QpHandle* member_handles_ = nullptr;
  uint64_t* produced_ = nullptr;     // the engine's counter, in its memory
  std::vector<uint32_t> qpns_;       // the host's copy of member_qpns_
  std::vector<uint32_t> depths_;     // per slot: the member's send queue depth
  uint64_t member_wqebbs_ = 0;       // the members' depths summed
  uint32_t members_ = 0;
};

}  // namespace dissect::softnic
