// The softnic on a GPU machine: `GpuSoftNic`, a nic::Nic whose engine is either a persistent
// kernel of many warps (EngineKind::gpu_kernel) or host threads (EngineKind::host_thread), both
// executing windows of WQEs (src/softnic/engine/window.h) through src/softnic/engine/execute.h over tables
// the engine can reach.
//
//   engine        tables live in                  queues (Placement)           payloads
//   gpu_kernel    GPU memory of `device`          gpu: cudaMalloc              own GPU, peer GPU
//                                                 host: cudaHostAlloc, mapped   (peer access), mapped host
//   host_thread   cudaHostAlloc'ed, mapped        host only                    mapped host memory
//
// Contract
//  - Control path (create_pd, register_memory, create_qp, connect, allocate) is host-thread only,
//    serialised by the caller as for every nic::Nic. Table updates travel on a private
//    non-blocking control stream; the engine sees a QP only once its state is published RTS.
//  - The engine kernel runs on its own non-blocking stream until stop(): engine_ctas CTAs of
//    engine_warps_per_cta warps, each warp serving a fixed set of QPs (engine/gpu_kernel.h).
//
// HAZARDS (measured on the lent H200; DESIGN.md "Where the softnic engine runs"):
//  - NEVER call cudaDeviceSynchronize() (or anything that synchronises the whole device: the legacy
//    default stream with blocking streams, cudaFree / cudaFreeHost of memory, cudaDeviceReset)
//    while an engine kernel runs: it never returns. Launch your kernels on your own
//    cudaStreamNonBlocking stream and wait with cudaStreamSynchronize / events. The library itself
//    never does. release() and QP destruction stop the engine around the free and restart it.
//  - Modules must be loaded eagerly, or the first launch of a never-launched kernel deadlocks
//    behind the running engine. The library sets CUDA_MODULE_LOADING=EAGER before the process's
//    first CUDA call (a static initialiser and gpu_runtime_init()), and force-loads its own kernels
//    with cudaFuncGetAttributes before starting an engine. If your program touches CUDA before the
//    library does, set CUDA_MODULE_LOADING=EAGER yourself or call preload_kernel() on each of your
//    kernels before start().
//  - Per-context resources a kernel needs at its first launch (local memory, the printf FIFO) are
//    set up before the engine starts: start() launches a probe kernel using both and waits for it.
//    Measured on the H200 without it: a kernel with a local array and gda's timeout printf never
//    started while the engine ran, a kernel with neither did. With the probe, the GPU tier's
//    submitter kernels (local arrays, gda's timeout printf) launch beside a running engine on the
//    H200 (docs/results/h200/engine/ctest_gpu.log).
//  - Local memory is reserved before the engine starts (GpuSoftNicOptions::local_memory_reserve,
//    through cudaDeviceSetLimit(cudaLimitStackSize)): a kernel needing more per-thread local memory
//    than reserved would make the driver wait for an idle device, i.e. forever. Do not lower the
//    stack limit or launch kernels with larger frames while an engine runs.
//  - A fault inside the engine is never a silent hang: the engine writes a status block (current
//    QP, consumer index, last syndrome, heartbeat) into mapped host memory, and a host watchdog
//    prints it when the heartbeat stalls or the engine kernel fails; stop() gives up after a
//    timeout with that status in its exception.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/impl/context.h"
#include "dissect/softnic/ipc.h"
#include "dissect/softnic/softnic.h"

namespace dissect::softnic {

// The engine kernel takes about 255 registers a thread (ptxas -v: serve_qp inlines a window for
// each of three scope pairs): 8 warps of 32 threads fill an SM's 65,536 registers, so a CTA of
// more warps could not launch.
inline constexpr uint32_t MAX_ENGINE_WARPS_PER_CTA = 8;

struct GpuSoftNicOptions {
  int device = 0;                          // CUDA device of the engine and of Placement::gpu memory
  EngineKind engine = EngineKind::gpu_kernel;
  // The engine kernel's size: `engine_ctas` CTAs (one per SM) of `engine_warps_per_cta` warps
  // (1..8, engine/gpu_kernel.h says why); warp w of W serves QPs w, w + W, ... A warp serving one QP executes up to 32 of its
  // WQEs at once. Reported in every result.
  uint32_t engine_ctas = 4;
  uint32_t engine_warps_per_cta = 8;
  uint32_t engine_threads = 1;  // host-thread engine: QP i on thread i % engine_threads
  TimingProfile profile = timing_profile("fast");  // what the model adds (softnic/profile.h)
  uint32_t max_qps = 64;
  uint32_t max_mrs = 256;
  bool start_engine = true;
  uint64_t watchdog_stall_ns = 2'000'000'000ull;  // heartbeat silent this long -> report
  // Per-thread local memory (cudaLimitStackSize) reserved before the engine starts. A kernel
  // whose local frame exceeds the current reservation makes the driver grow it, which waits for
  // the device to go idle: behind a running engine that never happens (measured on the H200:
  // any kernel with a local array hung while the engine ran). preload_kernel() checks it.
  size_t local_memory_reserve = 8192;
  // > 0: tables, GPU-placed queues and allocate(..., Placement::gpu) come from one exportable
  // cudaMalloc arena of this many bytes, so another process can connect (softnic/ipc.h). GPU
  // engine only.
  size_t ipc_arena_bytes = 0;
};

class IpcArena;
class HostEngine;
class DoorbellForwarder;

// Sets CUDA_MODULE_LOADING=EAGER (unless already EAGER) and initialises the runtime. Returns the
// device count; 0 (and no exception) when there is no usable CUDA device.
int gpu_runtime_init();
// Loads a kernel's module now (cudaFuncGetAttributes), so launching it later cannot deadlock
// behind a running engine, and checks its local frame fits the reserved stack size. Throws naming
// `what` on failure.
void preload_kernel(const void* kernel, const char* what);
// Grows the per-thread local memory reservation (cudaLimitStackSize) to at least `bytes`. Call it
// before any engine on the device starts, then preload_kernel() the kernels that need it.
void reserve_local_memory(size_t bytes);
// Enables peer access both ways between two devices; false when they cannot reach each other.
bool enable_peer_access(int a, int b);
// Throws dissect::Error naming `what` when `status` (a cudaError_t) is not success.
void check_cuda(int status, const char* what);

class GpuSoftNic : public nic::Nic {
 public:
  explicit GpuSoftNic(const GpuSoftNicOptions& options = {});
  ~GpuSoftNic() override;
  GpuSoftNic(const GpuSoftNic&) = delete;
  GpuSoftNic& operator=(const GpuSoftNic&) = delete;

  std::string provider() const override { return "softnic"; }
  std::unique_ptr<nic::ProtectionDomain> create_pd() override;
  // Zero-filled memory: Placement::gpu = cudaMalloc on `device`; host = cudaHostAlloc mapped.
  void* allocate(size_t bytes, nic::Placement placement) override;
  void release(void* address) override;  // stops the engine around the free when it runs

  void start();
  // Returns once the engine has finished the WQE it was executing; throws (with the engine's
  // status) if it does not exit within `timeout_ns`.
  void stop(uint64_t timeout_ns = 5'000'000'000ull);
  // With the engine stopped: runs the engine kernel until one pass over every QP finds no work.
  // For tools that serialise kernel launches (compute-sanitizer), under which a persistent engine
  // and a submitter kernel never run together: post from one kernel, drain(), poll from the next.
  void drain(uint64_t timeout_ns = 30'000'000'000ull);
  bool running() const { return running_.load(std::memory_order_acquire); }

  EngineKind engine() const { return options_.engine; }
  const TimingProfile& profile() const { return options_.profile; }
  int device() const { return options_.device; }
  uint32_t nic_id() const { return nic_id_; }
  // The tables' address as the engine (and any connected engine) sees them.
  NicTables* engine_tables() const { return engine_tables_; }
  ModelCounters counters(uint32_t qpn) const;  // snapshot, read while the engine may run
  // The connection-state model's lookups and misses on this NIC (profile.h); zero without it.
  ContextCacheCounters context_cache_counters() const;
  // The doorbell forwarder's counters of a cpu-assisted QP (nic::DoorbellPath::cpu_assisted);
  // throws InvalidArgument naming a QP that is not cpu-assisted (or no longer exists).
  ForwarderCounters forwarder_counters(uint32_t qpn) const;
  EngineStatus status() const;                 // snapshot of the status block
  std::string describe_status() const;         // one line for error messages
  // Set by the watchdog when the heartbeat stalled or the engine kernel failed.
  bool faulted() const { return faulted_.load(std::memory_order_acquire); }

  static GpuSoftNic& find(uint32_t nic_id);

  // Cross-process connections (softnic/ipc.h). ipc_export throws unless ipc_arena_bytes > 0.
  // import_peer maps a peer process's arena on this NIC's device (the engine is stopped around
  // the open) and returns an id to put in nic::QpEndpoint::nic_id when connecting this NIC's QPs
  // to that peer's QPs; importing the same arena again returns the same id. close_imports stops
  // the engine for good and unmaps every imported arena: call it once every peer's engine has
  // stopped, before any peer destroys its NIC. The destructor calls it too.
  IpcExport ipc_export() const;
  uint32_t import_peer(const IpcExport& peer);
  void close_imports();

  // Control path used by the PD / QP objects (public for them; not for users).
  uint32_t allocate_mr_slot();
  uint32_t allocate_qp_slot();
  void write_mr(uint32_t index, const MrEntry& entry);    // publishes valid last
  void invalidate_mr(uint32_t index);
  void write_qp(uint32_t index, const QpContext& context);  // state must be RESET
  void publish_qp_state(uint32_t index, uint32_t state);
  // The host copy of memory-key slot `index`; null past the table.
  const MrEntry* shadow_mr(uint32_t index) const {
    return index < shadow_mrs_.size() ? &shadow_mrs_[index] : nullptr;
  }
  void upload(void* engine_address, const void* source, size_t bytes);  // ordered, waits
  // The host thread forwarding cpu-assisted QPs' doorbells; made with the first such QP, stopped
  // in the destructor before any memory is freed.
  DoorbellForwarder& doorbell_forwarder();
  // A peer process's arena mapped on this NIC's device, under its alias id (import_peer).
  struct Import {
    uint32_t alias;
    IpcExport peer;
    void* mapped;         // this process's address of the peer's arena
    RemoteWindow window;  // what a QpContext connected to that peer carries
    NicTables tables;     // the peer's table header when imported (its QPs exist by then)
  };
  const Import* find_import(uint32_t alias) const;  // null when `alias` names no import

 private:
  void watchdog_loop();
  void wait_engine_exit(const char* during, uint64_t timeout_ns);
  void launch_engine(uint32_t ctas, uint32_t warps_per_cta, bool until_idle);
  bool engine_in_device_memory() const { return options_.engine == EngineKind::gpu_kernel; }

  GpuSoftNicOptions options_;
  uint32_t nic_id_ = 0;
  NicTables* engine_tables_ = nullptr;  // device (gpu_kernel) or mapped host (host_thread)
  MrEntry* engine_mrs_ = nullptr;
  QpContext* engine_qps_ = nullptr;
  std::vector<MrEntry> shadow_mrs_;
  uint32_t qp_count_ = 0;
  uint32_t next_pd_ = 1;
  std::mutex lock_;
  void* control_stream_ = nullptr;  // cudaStream_t
  void* engine_stream_ = nullptr;   // cudaStream_t
  uint32_t* engine_control_ = nullptr;  // GPU memory: stop flag (word 0), counts (bytes 8..23)
  EngineStatus* status_ = nullptr;  // mapped host memory
  uint32_t generation_ = 0;
  std::atomic<bool> running_{false};
  std::atomic<bool> faulted_{false};
  std::unique_ptr<HostEngine> host_engine_;
  std::thread watchdog_;
  std::atomic<bool> watchdog_stop_{false};
  std::vector<std::pair<void*, nic::Placement>> allocations_;
  std::unique_ptr<DoorbellForwarder> forwarder_;  // under lock_

  // Cross-process (gpu_ipc.cu).
  void open_ipc_arena();
  std::unique_ptr<IpcArena> arena_;   // null unless options_.ipc_arena_bytes > 0
  uint8_t ipc_handle_[64] = {};       // cudaIpcMemHandle_t of the arena
  std::vector<Import> imports_;
  bool imports_closed_ = false;
};

}  // namespace dissect::softnic
