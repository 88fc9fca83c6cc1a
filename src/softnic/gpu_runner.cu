// The GPU engine strategy (engine_runner.h): the persistent engine kernel (engine/gpu_kernel.h)
// on its own non-blocking stream, its status block in mapped host memory and a watchdog thread
// that prints it when the heartbeat stalls or the kernel fails (gpu_engine.h, HAZARDS).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "engine/gpu_kernel.h"
#include "engine_runner.h"

namespace dissect::softnic {
namespace {

class GpuRunner final : public EngineRunner {
 public:
  GpuRunner(const SoftNicOptions& options, uint32_t nic_id, TableMemory& memory)
      : options_(options), nic_id_(nic_id), memory_(memory) {
    DeviceGuard guard(options_.device);
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "softnic gpu: engine stream");
    stream_ = stream;
    // Stop flag (word 0) and counts (bytes 8..23), written and read by copies.
    control_ = static_cast<uint32_t*>(memory_.allocate(64, nic::Placement::gpu));
    check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&status_), sizeof(EngineStatus),
                             cudaHostAllocMapped | cudaHostAllocPortable),
               "softnic gpu: status block (mapped host memory)");
    std::memset(status_, 0, sizeof(EngineStatus));
    watchdog_ = std::thread([this] { watchdog_loop(); });
  }

  // The NIC stopped the engine before.
  ~GpuRunner() override {
    watchdog_stop_.store(true, std::memory_order_release);
    if (watchdog_.joinable()) watchdog_.join();
    DeviceGuard guard(options_.device);
    memory_.free(control_, nic::Placement::gpu);
    cudaFreeHost(status_);
    cudaStreamDestroy(stream_);
    cudaGetLastError();
  }

  void start(NicTables* tables, uint32_t generation) override {
    if (faulted()) throw Error("softnic gpu: engine faulted earlier: " + describe());
    __atomic_store_n(&status_->phase, uint32_t{ENGINE_NOT_STARTED}, __ATOMIC_RELEASE);
    launch(tables, generation, options_.engine_ctas, options_.engine_warps_per_cta, false);
    running_.store(true, std::memory_order_release);
  }

  void stop(uint64_t timeout_ns) override {
    // A copy on the tables' stream runs beside the engine kernel (the copy engine needs no SM).
    const uint32_t stop = 1;
    memory_.write(control_, &stop, sizeof stop);
    try {
      wait_exit("stop()", timeout_ns);
    } catch (...) {
      // A kernel that failed has ended; one that timed out may still run, and stays running so
      // that nothing frees memory behind it.
      DeviceGuard guard(options_.device);
      if (cudaStreamQuery(stream_) != cudaErrorNotReady) running_.store(false, std::memory_order_release);
      throw;
    }
    running_.store(false, std::memory_order_release);
    print_engine_phases(stream_);
  }

  void drain(NicTables* tables, uint32_t generation, uint64_t timeout_ns) override {
    launch(tables, generation, 1, 1, true);  // one warp: "a pass found no work" is then one verdict
    wait_exit("drain()", timeout_ns);
  }

  bool active() const override { return running_.load(std::memory_order_acquire); }
  bool faulted() const override { return faulted_.load(std::memory_order_acquire); }

  EngineStatus status() const override {
    EngineStatus s;
    std::memcpy(&s, const_cast<const EngineStatus*>(status_), sizeof s);
    return s;
  }

 private:
  std::string describe() const { return describe_engine_status(status(), nic_id_, options_); }

  void launch(NicTables* tables, uint32_t generation, uint32_t ctas, uint32_t warps_per_cta,
              bool until_idle) {
    DeviceGuard guard(options_.device);
    reserve_local_memory(options_.local_memory_reserve);
    const bool paced = options_.profile.enabled != 0;  // the profile the NIC's tables hold (softnic.cpp)
    preload_kernel(engine_kernel_function(paced), "loading the engine kernel");
    if (!until_idle) {
      check_cuda(launch_resource_probe(generation, stream_), "softnic gpu: launching the resource probe");
      check_cuda(cudaStreamSynchronize(stream_), "softnic gpu: resource probe (local memory, printf FIFO)");
    }
    const uint8_t cleared[24] = {};  // stop flag, WQEs executed, warps exited
    memory_.write(control_, cleared, sizeof cleared);
    EngineLaunch l{};
    l.tables = tables;
    l.stop = control_;
    l.status = status_;
    l.counts = reinterpret_cast<unsigned long long*>(control_ + 2);
    l.generation = generation;
    l.warps = ctas * warps_per_cta;
    l.until_idle = until_idle ? 1 : 0;
    l.doorbell_dates = options_.doorbell_dates || options_.profile.enabled ? 1 : 0;
    check_cuda(launch_engine_kernel(l, ctas, warps_per_cta, paced, stream_), "softnic gpu: launching the engine kernel");
  }

  // Waits (bounded) for the engine kernel to return; a failed kernel or a timeout marks the engine
  // faulted and throws with its status.
  void wait_exit(const char* during, uint64_t timeout_ns) {
    DeviceGuard guard(options_.device);
    const auto began = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) return;
      const uint64_t waited = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - began).count();
      if (q != cudaErrorNotReady || waited > timeout_ns) {
        faulted_.store(true, std::memory_order_release);
        throw Error("softnic " + std::to_string(nic_id_) + " gpu: the engine kernel " +
                    (q != cudaErrorNotReady ? "failed in " + std::string(during) + " with " + cuda_error_text(q)
                                            : "did not return in " + std::string(during) + " within " +
                                                  std::to_string(waited / 1000000) + " ms") +
                    ": " + describe());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void watchdog_loop();

  SoftNicOptions options_;
  uint32_t nic_id_;
  TableMemory& memory_;
  cudaStream_t stream_ = nullptr;
  uint32_t* control_ = nullptr;   // GPU memory: stop flag (word 0), counts (bytes 8..23)
  EngineStatus* status_ = nullptr;  // mapped host memory
  std::atomic<bool> running_{false};
  std::atomic<bool> faulted_{false};
  std::thread watchdog_;
  std::atomic<bool> watchdog_stop_{false};
};

void GpuRunner::watchdog_loop() {
  // A new thread's current device is 0: restoring it after each DeviceGuard would create a
  // context on device 0, in a process that otherwise never touches it (the two-process layout).
  cudaSetDevice(options_.device);
  uint64_t last_heartbeat = ~0ull;
  auto last_change = std::chrono::steady_clock::now();
  bool reported = false;
  while (!watchdog_stop_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!running_.load(std::memory_order_acquire)) {
      last_change = std::chrono::steady_clock::now();
      continue;
    }
    if (!reported) {
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q != cudaSuccess && q != cudaErrorNotReady) {
        faulted_.store(true, std::memory_order_release);
        std::fprintf(stderr, "dissect: softnic %u gpu watchdog: engine kernel failed with %s: %s\n",
                     nic_id_, cuda_error_text(q).c_str(), describe().c_str());
        reported = true;
        continue;
      }
    }
    const uint64_t heartbeat = __atomic_load_n(&status_->heartbeat, __ATOMIC_ACQUIRE);
    const auto now = std::chrono::steady_clock::now();
    if (heartbeat != last_heartbeat) {
      last_heartbeat = heartbeat;
      last_change = now;
      reported = false;
      continue;
    }
    const uint64_t silent = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_change).count();
    if (!reported && silent > options_.watchdog_stall_ns) {
      std::fprintf(stderr, "dissect: softnic %u gpu watchdog: no engine heartbeat for %llu ms: %s\n",
                   nic_id_, static_cast<unsigned long long>(silent / 1000000), describe().c_str());
      reported = true;
    }
  }
}

}  // namespace

std::unique_ptr<EngineRunner> gpu_runner(const SoftNicOptions& options, uint32_t nic_id,
                                         TableMemory& memory) {
  return std::make_unique<GpuRunner>(options, nic_id, memory);
}

}  // namespace dissect::softnic
