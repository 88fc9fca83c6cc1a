// One proxy worker: a thread, its QP and the rings it serves.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include "dissect/nic/handles.h"
#include "dissect/proxy/poster.h"
#include "dissect/proxy/proxy.h"

namespace dissect::proxy {

class Worker {
 public:
  Worker(uint32_t id, std::unique_ptr<Poster> poster, const ProxyConfig& config, const std::vector<Window>& windows,
         std::vector<RingHandle> rings, bool producer_state_host_readable);
  ~Worker();

  void start(int core, std::string placement);  // throws Error naming the worker and the core
  void request_stop(StopMode mode);
  void join();
  std::vector<PendingRing> pending() const;  // call after join()
  WorkerStats stats() const;

 private:
  struct Served {
    RingHandle ring;
    uint64_t tail = 0;       // mirrors ring.consumer->tail
    uint64_t completed = 0;  // mirrors *ring.completed
  };
  struct PostedChain {
    uint32_t served = 0;  // index into served_
    uint32_t count = 0;   // descriptors (= WQEBBs) in the chain
    uint64_t end = 0;     // the poster's token after it: retired when poll() reaches it
  };

  void run();
  bool retire_completions();
  uint32_t service(uint32_t index);
  bool service_round_robin();
  bool can_post() const;
  PostItem resolve(Served& s, uint64_t descriptor_index, const Request& request);
  void record_error(Served& s, uint64_t descriptor_index, uint32_t code);
  uint64_t published_from(const Served& s, uint64_t limit) const;
  bool idle() const;

  uint32_t id_;
  std::unique_ptr<Poster> poster_;
  const ProxyConfig& config_;
  const std::vector<Window>& windows_;
  std::vector<Served> served_;
  bool producer_state_host_readable_;
  std::vector<PostedChain> chains_;  // a FIFO: one chain per post, at most one per WQEBB
  uint64_t chains_head_ = 0;
  uint64_t chains_tail_ = 0;
  uint32_t first_ = 0;  // where the next pass over served_ starts (round robin)
  std::vector<Request> batch_;
  std::vector<PostItem> items_;
  std::atomic<int> stop_mode_{-1};  // -1 running, else StopMode
  std::thread thread_;
  int core_ = -1;
  std::string placement_;
  std::atomic<uint64_t> descriptors_{0}, posts_{0}, passes_{0}, busy_passes_{0}, full_passes_{0}, bad_{0};
  // The first post's clock and descriptor count, and the last sampled post's (WorkerStats).
  std::atomic<uint64_t> first_stamp_ns_{0}, first_stamp_descriptors_{0}, last_stamp_ns_{0},
      last_stamp_descriptors_{0};
};

}  // namespace dissect::proxy
