// mini-proxy, host side: R descriptor rings and T CPU workers that turn descriptors into RDMA
// operations on their own QPs (paper §4.2).
//
// Contract
//  - The caller creates and connects one QP per worker (any nic provider; with the softnic the
//    worker builds mlx5 WQEs in the QP's send ring and rings its doorbell, as rdma-core's mlx5
//    provider does) and registers the windows. Nothing else may submit on those QPs.
//  - Producers (GPU threads, or host threads standing in for them) get a RingHandle from ring(r)
//    and call proxy::enqueue / proxy::wait_completion (handoff.h). With Handoff::tuned a ring has
//    one producer (or producers use Sharing::shared); with baseline any number may share it.
//  - Worker w serves rings w, w + T, w + 2T, ...: it chains up to B consecutive descriptors of one
//    ring into one post (B WQEs, one doorbell, the last signalled), recycles their slots at post
//    time (tail) and advances the ring's completion counter when the signalled CQE arrives.
//  - For telemetry, a channel is one worker and its rings (create worker w's QP with
//    QpAttributes::telemetry_channel = w).
//  - start(), stop() and the destructor are for one controlling thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/nic/handles.h"
#include "dissect/proxy/config.h"
#include "dissect/proxy/poster.h"
#include "dissect/proxy/ring.h"

namespace dissect::proxy {

// One registered window: descriptor offsets are relative to these bases.
struct Window {
  uint64_t local_address;
  uint32_t lkey;
  uint64_t remote_address;
  uint32_t rkey;
};

enum class StopMode {
  drain,    // finish every published descriptor and wait for its completion (bounded)
  abandon,  // stop now; the report says what was left
};

// What a ring still holds when its worker stopped.
struct PendingRing {
  uint32_t ring = 0;
  uint32_t worker = 0;
  uint64_t first_unconsumed = 0;  // the ring's tail: the first descriptor not yet posted
  uint64_t published = 0;         // whole descriptors waiting at first_unconsumed, consecutive
  uint64_t reserved = 0;          // head - tail (reserved, published or not); = published when
                                  // the producer state is not host-readable
  uint64_t first_in_flight = 0;   // the ring's completion counter
  uint64_t in_flight = 0;         // posted, no completion yet
};

struct ShutdownReport {
  bool drained = true;               // nothing pending, nothing in flight
  std::vector<PendingRing> pending;  // only rings with something left
  std::string describe() const;      // one line per ring: "ring 3 (worker 1): 5 published ..."
};

struct WorkerStats {
  uint32_t worker = 0;
  int core = -1;                // -1: not pinned
  std::string placement;        // how the core was chosen
  uint64_t descriptors = 0;     // descriptors consumed
  uint64_t posts = 0;           // doorbells rung (chains posted)
  uint64_t passes = 0;          // polling passes
  uint64_t busy_passes = 0;     // passes that consumed or completed something
  uint64_t full_passes = 0;     // passes that ended with no send-queue room: waiting for the NIC
  uint64_t bad_descriptors = 0; // executed as NOPs and recorded on their ring
  // The worker's own posting pace: the descriptors it posted between its first post and its last
  // sampled one (every POST_STAMP_PERIOD-th post reads the clock), over that span in ns; 0 when it
  // posted fewer than two samples' worth.
  uint64_t stamped_descriptors = 0;
  uint64_t stamped_ns = 0;
};

// Posts between two clock reads of a worker's posting span (WorkerStats::stamped_ns): one read per
// 64 posts costs a B = 1 post well under 1 %.
inline constexpr uint64_t POST_STAMP_PERIOD = 64;

class Worker;
class RingStorage;

class Proxy {
 public:
  // mlx5-layout queues (softnic, mlx5 provider): the worker builds WQEs and rings the doorbell.
  Proxy(const ProxyConfig& config, std::vector<nic::QpHandle> worker_qps, std::vector<Window> windows);
  // Any provider: one poster per worker (poster.h), e.g. make_verbs_poster for ibverbs.
  Proxy(const ProxyConfig& config, std::vector<std::unique_ptr<Poster>> posters, std::vector<Window> windows);
  ~Proxy();  // stop(abandon) if running; prints the report when something was left
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  void start();  // resumes where the rings are after a stop()
  ShutdownReport stop(StopMode mode = StopMode::drain);
  bool running() const { return running_; }

  RingHandle ring(uint32_t r) const;        // the producers' handle (producer aliases)
  RingHandle host_view(uint32_t r) const;   // the same ring at host addresses (tests, tools)
  uint32_t worker_of_ring(uint32_t r) const { return r % config_.workers; }
  std::vector<WorkerStats> stats() const;
  // How worker 0 was placed ("core 3 on the GPU's NUMA node", "unpinned ..."), for result labels.
  std::string placement() const;
  const ProxyConfig& config() const { return config_; }

 private:
  std::vector<int> choose_cores(std::vector<std::string>* placements) const;
  ShutdownReport collect_report() const;

  ProxyConfig config_;
  std::vector<Window> windows_;
  std::unique_ptr<RingStorage> storage_;
  std::vector<std::unique_ptr<Worker>> workers_;
  bool running_ = false;
};

}  // namespace dissect::proxy
