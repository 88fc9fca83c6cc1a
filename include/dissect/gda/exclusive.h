// A QP driven by one thread, with its progress counters in registers.
//
// SendQueueState lives in the queue's memory so that threads can share it; a thread that owns the
// QP alone need not pay a dependent global-memory round trip for every counter it reads (reserve,
// room check, publish, ring and poll each touch one). ExclusiveQp copies the state into a local
// that the compiler keeps in registers, hands out a QpHandle pointing at it, and writes it back
// when the thread is done, so the next user of the QP (or the host) sees where it stopped.
//
//   gda::ExclusiveQp mine(qp);                           // load the counters once
//   gda::put<Policy>(mine.handle(), request, ...);        // Sharing::exclusive only
//   mine.write_back();                                    // before another thread uses the QP
#pragma once

#include "dissect/nic/handles.h"

namespace dissect::gda {

class ExclusiveQp {
 public:
  DISSECT_HD explicit ExclusiveQp(const nic::QpHandle& qp)
      : shared_state_(qp.state), state_(*qp.state), handle_(qp) {
    handle_.state = &state_;
  }
  ExclusiveQp(const ExclusiveQp&) = delete;
  ExclusiveQp& operator=(const ExclusiveQp&) = delete;

  DISSECT_HD const nic::QpHandle& handle() const { return handle_; }
  DISSECT_HD void write_back() const { *shared_state_ = state_; }

 private:
  nic::SendQueueState* shared_state_;
  nic::SendQueueState state_;
  nic::QpHandle handle_;
};

}  // namespace dissect::gda
