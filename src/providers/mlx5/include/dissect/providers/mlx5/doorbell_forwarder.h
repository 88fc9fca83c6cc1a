// CPU-assisted doorbells: when the GPU may not store to the UAR (cudaHostRegisterIoMemory refused),
// the GPU stores its doorbell value into a shadow word in mapped host memory instead, and one host
// thread forwards it (NVSHMEM's CPU NIC handler, DOCA's CPU proxy; docs/mlx5_sources.md §2.6, §4.5).
//
// Per watched queue the thread does, whenever the shadow's WQE index moved:
//   1. dbrec[MLX5_SND_DBR] = BE32(index)      -- the NIC reads the producer counter from here
//   2. release fence                          -- the DBR is visible before the doorbell
//   3. one 8-byte store of the shadow value to the UAR register
// The doorbell value carries the QP number and the next free WQEBB index (doorbell.h), so the
// thread needs no other state. Stores by the GPU to WQEs are ordered before its shadow store by the
// GPU's system-scope fence; the thread's acquire load of the shadow orders them before step 1.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "dissect/mlx5/doorbell.h"

namespace dissect::mlx5provider {

struct ForwardedQueue {
  const volatile uint64_t* shadow;  // written by the GPU: the doorbell value
  mlx5::be32* dbrec_send;           // the NIC's DBR word MLX5_SND_DBR
  volatile uint64_t* uar_register;  // the doorbell register (CPU mapping)
};

class DoorbellForwarder {
 public:
  DoorbellForwarder();
  ~DoorbellForwarder();
  DoorbellForwarder(const DoorbellForwarder&) = delete;
  DoorbellForwarder& operator=(const DoorbellForwarder&) = delete;

  void add(const ForwardedQueue& queue);
  void remove(const volatile uint64_t* shadow);
  // One pass over every queue; the thread calls it in a loop, tests call it directly.
  // Returns the number of doorbells rung.
  int poll_once();

 private:
  struct Entry {
    ForwardedQueue queue;
    uint64_t last;  // last value forwarded
  };
  void run();
  std::mutex mutex_;
  std::vector<Entry> entries_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The three stores of one forwarded doorbell, exposed for unit tests.
void forward_doorbell(const ForwardedQueue& queue, uint64_t doorbell);

}  // namespace dissect::mlx5provider
