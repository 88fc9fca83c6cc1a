// Private: the softnic's doorbell forwarder, for QPs with nic::DoorbellPath::cpu_assisted. Shared by
// the softnic's QPs (queue_pair.cpp) on every table memory; host code only.
//
// A cpu-assisted QP has two doorbell words in host memory (mapped to the GPU for the GPU softnic):
// the mailbox, which the submitter stores its 8-byte doorbell value to (QpHandle::doorbell), and
// the engine's register (QpContext::doorbell). One host thread per softnic instance polls every
// cpu-assisted QP's mailbox and, when the value changed, stores the latest value to the register:
// NVSHMEM's CPU-assisted mode (IBGDA_NIC_HANDLER_CPU), the mlx5 provider's forwarder.
//
// Memory ordering, submitter -> forwarder -> engine:
//   1. The submitter orders its WQE and payload stores before its mailbox store at system scope
//      (gda::ordering::system_fence / system_release_store; nic.h): the mailbox's observer is this
//      host thread, outside the GPU, so a GPU-scope fence would order nothing for it.
//   2. The forwarder acquires the mailbox value, then stores it to the register with a release
//      store: release is cumulative, so the WQE stores it acquired are ordered before the register.
//   3. The engine acquires the register (the host engine: an acquire load; the GPU engine: system
//      scope, ENGINE_QUEUES_IN_HOST_MEMORY) before it reads the WQEs the doorbell announces.
//
// Doorbells never go backwards: one thread reads each mailbox and stores the values it forwards in
// the order it read them, so the register takes a subsequence of the mailbox's values, in order.
// Coalescing (several submitter doorbells reaching the engine as one) is expected: the counters
// say how much of it happened (mailbox updates seen >= doorbells forwarded).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"
#include "queue_memory.h"

namespace dissect::softnic {

class DoorbellForwarder {
 public:
  // `owner` names the softnic in messages ("softnic 3").
  explicit DoorbellForwarder(std::string owner);
  ~DoorbellForwarder();  // stop()
  DoorbellForwarder(const DoorbellForwarder&) = delete;
  DoorbellForwarder& operator=(const DoorbellForwarder&) = delete;

  // Starts forwarding QP `qpn`'s mailbox to `engine_register` (the thread starts with the first
  // QP). Throws InvalidArgument when `qpn` is already forwarded, Error after stop().
  void add(uint32_t qpn, const uint64_t* mailbox, uint64_t* engine_register);
  // Stops forwarding `qpn`. On return the thread no longer touches its words: they may be freed.
  // Throws InvalidArgument naming a QP that is not forwarded.
  void remove(uint32_t qpn);
  ForwarderCounters counters(uint32_t qpn) const;  // throws InvalidArgument naming an unknown QP
  // Stops and joins the thread; no QP is forwarded afterwards. Idempotent.
  void stop();

 private:
  struct Entry {
    uint32_t qpn;
    const uint64_t* mailbox;
    uint64_t* engine_register;
    uint64_t last;  // the last value forwarded (the mailbox's value when added)
    ForwarderCounters counters;
  };
  // Takes the lock without starving behind the polling thread (it lets go while anyone waits).
  std::unique_lock<std::mutex> lock_control() const;
  const Entry& find_locked(uint32_t qpn, const char* during) const;
  void run();
  bool poll_locked();  // one pass over every QP; whether it forwarded anything
  static bool forward(Entry& e);

  std::string owner_;
  mutable std::mutex mutex_;  // the set of QPs, their counters; held by the thread during a pass
  mutable std::atomic<uint32_t> waiters_{0};  // control-path callers waiting for mutex_
  std::condition_variable wake_;  // the thread sleeps on it while no QP is forwarded
  std::vector<Entry> entries_;
  bool stopping_ = false;  // under mutex_
  bool stopped_ = false;   // under mutex_: stop() ran
  std::thread thread_;
};

// A cpu-assisted QP's doorbell words: two 64 B lines of one host allocation from its NIC (mapped to
// the GPU for the GPU softnic), the mailbox first, then the engine's register.
struct AssistedDoorbell {
  void* memory = nullptr;  // null for DoorbellPath::direct
  uint64_t* mailbox = nullptr;
  uint64_t* engine_register = nullptr;
};

// For a.doorbell == cpu_assisted: allocates the words from `nic` (Placement::host), points
// `m` at them (the engine's register replaces the one in the queue memory, the submitter gets the
// mailbox) and returns them; for direct: returns an empty AssistedDoorbell and leaves `m` alone.
AssistedDoorbell route_doorbell(nic::Nic& nic, const nic::QpAttributes& a, QueueMemory& m);

}  // namespace dissect::softnic
