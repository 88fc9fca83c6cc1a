#include "host_engine.h"

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/common/wait.h"
#include "serve.h"

namespace dissect::softnic {
namespace {

// Idle passes before a thread yields its core: low latency while sharing a 2-core CI machine.
constexpr uint32_t IDLE_PASSES_BEFORE_YIELD = 256;
constexpr uint64_t HEARTBEAT_PASSES = 1024;

// The status block is shared by every engine thread: written on an error and once per heartbeat,
// never per window, so the threads do not bounce its cache line.
void note_work(EngineStatus* status, const QpContext& qp, const Served& served) {
  __atomic_store_n(&status->current_qpn, qp.qpn, __ATOMIC_RELAXED);
  __atomic_store_n(&status->consumer, qp.sq_consumer, __ATOMIC_RELAXED);
  if (served.syndrome != 0) {
    __atomic_store_n(&status->last_error_qpn, qp.qpn, __ATOMIC_RELAXED);
    __atomic_store_n(&status->last_syndrome, uint32_t{served.syndrome}, __ATOMIC_RELEASE);
  }
}

}  // namespace

void HostEngine::start(NicTables* tables, uint32_t threads, EngineStatus* status,
                       uint32_t generation) {
  if (running()) return;
  if (threads == 0 || threads > 256) {
    throw InvalidArgument("softnic host engine: " + std::to_string(threads) +
                          " engine threads (1..256)");
  }
  stop_.store(false, std::memory_order_release);
  scheduled_.store(0, std::memory_order_relaxed);
  released_.store(false, std::memory_order_relaxed);
  if (status != nullptr) {
    __atomic_store_n(&status->generation, generation, __ATOMIC_RELAXED);
    __atomic_store_n(&status->phase, uint32_t{ENGINE_RUNNING}, __ATOMIC_RELEASE);
  }
  for (uint32_t t = 0; t < threads; ++t) {
    threads_.emplace_back([this, t, threads, tables, status] {
      scheduled_.fetch_add(1, std::memory_order_acq_rel);
      for (uint32_t i = 1; !released_.load(std::memory_order_acquire); ++i) {
        if (i % 64 == 0) std::this_thread::yield();  // more threads than cores (the CI machine)
        spin_pause();
      }
      serve(t, threads, tables, status);
    });
  }
  BoundedWait startup;
  while (scheduled_.load(std::memory_order_acquire) < threads) {
    if (startup.over()) {
      const uint32_t scheduled = scheduled_.load();
      stop_.store(true, std::memory_order_release);  // the late ones return at once
      released_.store(true, std::memory_order_release);
      for (auto& t : threads_) t.join();
      threads_.clear();
      throw Error("softnic host engine: " + std::to_string(scheduled) + " of " +
                  std::to_string(threads) + " engine threads started within 5 s");
    }
    std::this_thread::yield();
  }
  released_.store(true, std::memory_order_release);
}

void HostEngine::stop() {
  if (!running()) return;
  stop_.store(true, std::memory_order_release);
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// Flattened: every window phase, lane loop and check inlined into the thread's loop. Called out of
// line, the per-lane lambdas and check_write_to cost a prologue, an epilogue and reloads of every
// captured value per WQE (callgrind, host-nic-ceiling on one QP: 535 -> 447 instructions a WQE
// with -O3, src/softnic/CMakeLists.txt; 14-16 -> 22 Mmsg/s on the 2-core CI VM).
__attribute__((flatten)) void HostEngine::serve(uint32_t index, uint32_t count, NicTables* tables, EngineStatus* status) {
  const HostLanes lanes;
  Window window{};
  use_profile(window, tables->profile);
  window.pipe = &tables->pipe_busy_until;
  window.nic = tables;
  window.qp_cache = tables->qp_cache;
  window.holds = 1;  // this loop releases held lone WQEs (in_flight.h) and windows
  HeldWindows held{};  // paced express windows in flight (held_windows.h)
  window.held = &held;
  uint32_t idle = 0;
  uint64_t passes = 0;
  uint64_t unreported = 0;  // WQEs executed since this thread last added to the status block
  while (!stop_.load(std::memory_order_acquire)) {
    const uint32_t qps = load_acquire<Scope::system>(&tables->qp_count);
    // Under a timing profile, the pass's clock before its doorbell reads: the ring dates of the
    // doorbells it sees (window.h, ring_date). The fast profile keeps no dates: a clock_gettime per
    // pass is not free on a spinning thread.
    if (window.profile.enabled) window.clock.pass_ns = now_ns();
    release_due_in_flight(lanes, window);
    release_due_held_windows(lanes, window);
    uint32_t executed = 0;
    const uint32_t budget = visit_budget(window.profile, qps <= count);
    for (uint32_t i = index; i < qps; i += count) {
      QpContext& qp = tables->qps[i];
      const uint32_t slot = i / count;  // this QP among the thread's
      QpCopy* cache = slot < CACHED_QPS ? &window.cache[slot] : nullptr;
      const Served served = serve_qp(lanes, window, qp, *tables, cache, budget);
      if (status != nullptr && served.syndrome != 0) note_work(status, qp, served);
      executed += served.executed;
      if (status != nullptr && served.executed != 0 && passes % HEARTBEAT_PASSES == 0) {
        note_work(status, qp, served);
      }
    }
    unreported += executed;
    if (status != nullptr && ++passes % HEARTBEAT_PASSES == 0) {
      __atomic_fetch_add(&status->wqes_executed, unreported, __ATOMIC_RELAXED);
      unreported = 0;
      if (index == 0) __atomic_store_n(&status->heartbeat, passes / HEARTBEAT_PASSES, __ATOMIC_RELEASE);
    }
    if (executed != 0 || window.in_flight.stage != IN_FLIGHT_NONE || !holds_no_window(lanes, window)) {
      idle = 0;  // a held WQE's or window's date may come within a pass: no yield
    } else if (++idle >= IDLE_PASSES_BEFORE_YIELD) {
      std::this_thread::yield();
      idle = 0;
    } else {
      spin_pause();
    }
  }
  settle_in_flight(lanes, window);  // stopping: a held WQE's payload and CQE still come
  settle_held_windows(lanes, window);
  if (status != nullptr) __atomic_fetch_add(&status->wqes_executed, unreported, __ATOMIC_RELAXED);
  if (status != nullptr && index == 0) {
    __atomic_store_n(&status->phase, uint32_t{ENGINE_EXITED}, __ATOMIC_RELEASE);
  }
}

}  // namespace dissect::softnic
