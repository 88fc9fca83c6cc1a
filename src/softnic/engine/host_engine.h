// The parallel host engine: N threads serve one NIC's QPs, QP i on thread i % N, each executing
// windows of WQEs (window.h) with HostLanes. The host-thread engine of a SoftNic
// (host_runner.cpp): tables and queues in host memory, mapped to the GPU when it has a device.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "dissect/softnic/impl/context.h"

namespace dissect::softnic {

class HostEngine {
 public:
  HostEngine() = default;
  ~HostEngine() { stop(); }
  HostEngine(const HostEngine&) = delete;
  HostEngine& operator=(const HostEngine&) = delete;

  // Starts `threads` (>= 1) engine threads over `tables` and returns once every one of them is
  // scheduled and released into its loop together, so that a measurement timing from its return
  // does not time the operating system's thread start (tens to hundreds of microseconds on the H200
  // host, which host-nic-ceiling's short rounds counted as engine time). `status` (may be null)
  // receives the heartbeat, the WQE count and the last error.
  void start(NicTables* tables, uint32_t threads, EngineStatus* status, uint32_t generation);
  // Returns once every thread has finished the window it was executing.
  void stop();
  bool running() const { return !threads_.empty(); }
  uint32_t threads() const { return static_cast<uint32_t>(threads_.size()); }

 private:
  void serve(uint32_t index, uint32_t count, NicTables* tables, EngineStatus* status);

  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> scheduled_{0};  // threads waiting at the start line
  std::atomic<bool> released_{false};
};

}  // namespace dissect::softnic
