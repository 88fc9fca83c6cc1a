// The softnic: a software model of the mlx5 NIC interface (a PRM subset), and the default provider.
//
// It reads the same WQE bytes a ConnectX reads, validates them as hardware does, moves payloads,
// writes CQEs (error CQEs with the PRM syndrome included) and keeps per-QP counters. One class,
// two strategies chosen by SoftNicOptions:
//
//   engine         tables live in (TableMemory)      queues (Placement)         payloads
//   host_thread    host memory (device = -1)         host only                  host memory
//   host_thread    mapped host memory (device >= 0)  host only                  mapped host memory
//   gpu_kernel     GPU memory of `device`            gpu: cudaMalloc            own GPU, peer GPU
//                                                    host: cudaHostAlloc mapped (peer access), mapped host
//
//   - EngineKind::host_thread: `engine_threads` host threads poll the QPs' doorbell registers (QP i
//     on thread i % engine_threads) and execute windows of up to 32 WQEs (engine/window.h).
//   - EngineKind::gpu_kernel: a persistent kernel of engine_ctas CTAs of engine_warps_per_cta warps,
//     each warp serving a fixed set of QPs (engine/gpu_kernel.h; its hazards: gpu_engine.h).
// Every NIC of the process is in one registry and id space: QPs of any two can be connected where
// the local engine reaches the remote tables (a host thread never reaches GPU memory, the GPU engine
// never reaches pageable host memory). QPs created with nic::DoorbellPath::cpu_assisted are rung
// through a mailbox that the NIC's doorbell forwarder thread forwards (nic.h).
//
// Contract: the control path (create_pd, register_memory, create_qp, connect, allocate) is
// host-thread only, serialised by the caller as for every nic::Nic. The engine sees a QP only once
// its state is published RTS; table updates reach GPU memory through an ordered private stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/impl/context.h"
#include "dissect/softnic/ipc.h"
#include "dissect/softnic/profile.h"

namespace dissect::softnic {

class ModelCounterSource;  // src/softnic/model_counter_source.h
class DoorbellForwarder;   // src/softnic/doorbell_forwarder.h
class TableMemory;         // src/softnic/table_memory.h
class EngineRunner;        // src/softnic/engine_runner.h
class IpcArena;            // src/softnic/ipc_arena.h

// What the doorbell forwarder did for one QP with nic::DoorbellPath::cpu_assisted (nic.h). Each
// mailbox update seen stands for one or more submitter doorbells, and each forwarded doorbell for
// one or more updates: doorbells rung >= mailbox_updates >= doorbells_forwarded, the differences
// being what the mailbox and the forwarder coalesced.
struct ForwarderCounters {
  uint64_t mailbox_updates;      // distinct mailbox values the forwarder read
  uint64_t doorbells_forwarded;  // release stores to the engine's doorbell register
};

enum class EngineKind { host_thread, gpu_kernel };
const char* to_string(EngineKind kind);

// The engine kernel takes about 255 registers a thread (ptxas -v: serve_qp inlines a window for
// each of three scope pairs): 8 warps of 32 threads fill an SM's 65,536 registers, so a CTA of
// more warps could not launch.
inline constexpr uint32_t MAX_ENGINE_WARPS_PER_CTA = 8;

struct SoftNicOptions {
  EngineKind engine = EngineKind::host_thread;
  // The CUDA device whose kernels submit to and observe this NIC, or -1 for none: host submitters,
  // tables and queues in pageable host memory. With the GPU engine (which needs one) the engine
  // runs there and Placement::gpu memory is its; with host threads the tables and queues are
  // mapped host memory its kernels reach, and each QP's telemetry block lives in its memory.
  int device = -1;
  uint32_t engine_threads = 1;  // host-thread engine: QP i on thread i % engine_threads
  // The GPU engine's size: `engine_ctas` CTAs (one per SM) of `engine_warps_per_cta` warps
  // (1..MAX_ENGINE_WARPS_PER_CTA); warp w of W serves QPs w, w + W, ... A warp serving one QP
  // executes up to 32 of its WQEs at once. Reported in every result.
  uint32_t engine_ctas = 4;
  uint32_t engine_warps_per_cta = 8;
  TimingProfile profile = timing_profile("fast");  // what the model adds (softnic/profile.h)
  // GPU engine under `fast`: date every doorbell (its ring and its sighting) as a timing profile
  // does, so that CQEs carry the hops of softnic/cqe_times.h. It costs a clock read and a warp
  // barrier every pass and two QpContext stores every doorbell, which the 64-QP ceiling pays
  // (docs/softnic-engine.md, "Doorbell dates"): off unless a diagnostic asks. A profile always
  // dates them (it paces from the ring date).
  bool doorbell_dates = false;
  uint32_t max_qps = 1024;
  uint32_t max_mrs = 4096;
  uint32_t max_dcts = 256;  // DC targets (slots are not reused while the NIC lives)
  bool start_engine = true;  // start the engine on construction
  // GPU engine: heartbeat silent this long -> the watchdog prints the status block.
  uint64_t watchdog_stall_ns = 2'000'000'000ull;
  // GPU engine: per-thread local memory (cudaLimitStackSize) reserved before it starts. A kernel
  // whose local frame exceeds the reservation makes the driver grow it, which waits for the device
  // to go idle: behind a running engine that never happens (measured on the H200: any kernel with
  // a local array hung while the engine ran). preload_kernel() checks it.
  size_t local_memory_reserve = 8192;
  // GPU engine, > 0: tables, GPU-placed queues and allocate(..., Placement::gpu) come from one
  // exportable cudaMalloc arena of this many bytes, so another process can connect (softnic/ipc.h).
  size_t ipc_arena_bytes = 0;
};

// Options for the GPU engine on `device`, the rest as SoftNicOptions has them.
inline SoftNicOptions gpu_engine_options(int device = 0) {
  SoftNicOptions o;
  o.engine = EngineKind::gpu_kernel;
  o.device = device;
  return o;
}

class SoftNic : public nic::Nic {
 public:
  explicit SoftNic(const SoftNicOptions& options = {});
  ~SoftNic() override;
  SoftNic(const SoftNic&) = delete;
  SoftNic& operator=(const SoftNic&) = delete;

  std::string provider() const override { return "softnic"; }
  std::unique_ptr<nic::ProtectionDomain> create_pd() override;
  // A CQ this NIC's QPs may share (nic.h; src/softnic/completion_queue.h).
  std::unique_ptr<nic::CompletionQueue> create_cq(const nic::CqAttributes& attributes) override;
  // Zero-filled memory in `placement`, reachable by this NIC's engine and submitters.
  void* allocate(size_t bytes, nic::Placement placement) override;
  void release(void* address) override;  // stops the engine around a free that needs it

  // The engine. start() after stop() resumes where the queues are; stop() returns once the engine
  // has finished the WQE it was executing, and throws (with the engine's status) if it does not
  // within `timeout_ns`. Either may be called from any thread.
  void start();
  void stop(uint64_t timeout_ns = 5'000'000'000ull);
  // GPU engine, stopped: runs the engine kernel until one pass over every QP finds no work. For
  // tools that serialise kernel launches (compute-sanitizer), under which a persistent engine and
  // a submitter kernel never run together: post from one kernel, drain(), poll from the next.
  void drain(uint64_t timeout_ns = 30'000'000'000ull);
  bool running() const { return running_.load(std::memory_order_acquire); }

  EngineKind engine() const { return options_.engine; }
  uint32_t engine_threads() const { return options_.engine_threads; }
  const TimingProfile& profile() const { return options_.profile; }
  int device() const { return options_.device; }
  uint32_t nic_id() const { return nic_id_; }
  // Where the tables live, in words ("host memory", "mapped host memory", "GPU memory").
  const char* table_memory() const;
  // The tables' address as the engine (and any connected engine) sees them.
  NicTables* engine_tables() const { return tables_; }
  // Snapshots, read while the engine may run (each field is one).
  NicTables table_header() const;
  QpContext qp_context(uint32_t qpn) const;  // throws naming a QP this NIC does not have
  ModelCounters counters(uint32_t qpn) const;
  // The context of DCT `dctn` (its rx counters); throws naming it.
  DctContext dct_context(uint32_t dctn) const;
  // Per-QP model counters summed over every QP, as a NIC's port counters would count them.
  ModelCounters port_counters() const;
  // The connection-state model's lookups and misses on this NIC (profile.h); zero without it.
  ContextCacheCounters context_cache_counters() const;
  // The doorbell forwarder's counters of a cpu-assisted QP; throws InvalidArgument naming a QP
  // that is not cpu-assisted (or no longer exists).
  ForwarderCounters forwarder_counters(uint32_t qpn) const;
  EngineStatus status() const;          // snapshot of the engine's status block
  std::string describe_status() const;  // one line for error messages
  // Set by the GPU engine's watchdog when the heartbeat stalled or the engine kernel failed.
  bool faulted() const;
  int telemetry_device() const { return telemetry_device_; }

  // Lookup used by connect(): the process's SoftNic with this id, or throws naming it.
  static SoftNic& find(uint32_t nic_id);

  // Cross-process connections (softnic/ipc.h; GPU engine). ipc_export throws unless
  // ipc_arena_bytes > 0. import_peer maps a peer process's arena on this NIC's device (the engine
  // is stopped around the open) and returns an id to put in nic::QpEndpoint::nic_id when
  // connecting this NIC's QPs to that peer's QPs; importing the same arena again returns the same
  // id. close_imports stops the engine for good and unmaps every imported arena: call it once
  // every peer's engine has stopped, before any peer destroys its NIC. The destructor calls it too.
  IpcExport ipc_export() const;
  uint32_t import_peer(const IpcExport& peer);
  void close_imports();
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
  friend class SoftProtectionDomain;
  friend class SoftQueuePair;
  friend class SoftDcTarget;
  friend class SoftCompletionQueue;
  void lay_out_tables();
  void register_in_fabric();
  void leave_fabric_locked();
  // The GPU engine's fabric (NicTables::fabric of its DCIs; the host engines share the process's
  // one, which never reaches GPU memory): one entry per LID in this NIC's GPU memory, made with its
  // first DCI and kept by every NIC's arrival (register_in_fabric) and departure.
  void open_gpu_fabric();
  // Whether this NIC's GPU engine's DCIs reach `other`'s tables (GPU memory only: softnic.cpp).
  bool gpu_engine_reaches(const SoftNic& other) const;
  // Pauses and resumes the engine of every NIC of the process that has a DCI, so that none is
  // inside a DC WQE when it returns: after a DCT or a NIC left the fabric, nothing reaches it.
  static void quiesce_dc_initiators_locked();
  static void quiesce_dc_initiators();
  // Control path over the table memory: each write is visible to the engine when it returns, in
  // the order written.
  uint32_t allocate_mr_slot();
  uint32_t allocate_qp_slot();
  void write_mr(uint32_t index, const MrEntry& entry);  // publishes `valid` last
  void invalidate_mr(uint32_t index);
  const MrEntry* shadow_mr(uint32_t index) const;        // the host's copy; null past the table
  void write_qp(uint32_t index, const QpContext& context);  // published in context.state
  void publish_qp_state(uint32_t index, uint32_t state);
  // The connection of QP `index` (RESET): its responder, how this engine reaches it, then RTS.
  void connect_qp(uint32_t index, NicTables* remote, const RemoteWindow& window,
                  uint32_t remote_index, uint32_t engine_flags);
  // Writes and publishes a new DCT context; returns its index (throws when full).
  uint32_t add_dct(uint32_t pd, uint64_t dc_key);
  void invalidate_dct(uint32_t index);
  // Stops the engine if it runs; returns whether it ran, for resume_engine().
  bool pause_engine();
  void resume_engine(bool was_running);
  // Clears the connection of every QP of every SoftNic in the process connected to QP `qp_index`
  // of `target` (every QP of it when `qp_index` is ALL_QPS), each NIC's engine stopped around it,
  // so no engine is inside a WQE aimed at that QP when it returns: after it the QP's queues (or
  // the whole NIC) may be freed, and a WQE to it completes with TRANSPORT_RETRY_EXC_ERR.
  static constexpr uint32_t ALL_QPS = ~0u;
  static void disconnect_peers_of(const NicTables* target, uint32_t qp_index);
  static void disconnect_peers_locked(const NicTables* target, uint32_t qp_index);
  DoorbellForwarder& doorbell_forwarder();  // made with the first cpu-assisted QP
  void open_ipc_arena();

  SoftNicOptions options_;
  uint32_t nic_id_ = 0;
  std::unique_ptr<TableMemory> memory_;
  std::unique_ptr<EngineRunner> runner_;
  NicTables* tables_ = nullptr;  // in the table memory, as the engine reaches it
  MrEntry* mrs_ = nullptr;
  QpContext* qps_ = nullptr;
  DctContext* dcts_ = nullptr;
  NicTables** gpu_fabric_ = nullptr;  // open_gpu_fabric; under the registry's lock
  std::vector<MrEntry> shadow_mrs_;   // the host's copies, written before the table's
  std::vector<QpContext> shadow_qps_;
  uint32_t qp_count_ = 0;
  uint32_t dct_count_ = 0;
  uint32_t cq_count_ = 0;  // shared CQs made (their CQNs)
  std::atomic<bool> has_dci_{false};
  std::mutex lock_;  // serialises control-path calls (registration, QP creation)
  uint32_t next_pd_ = 1;
  uint32_t mr_tag_ = 0;
  std::mutex engine_lock_;  // serialises start/stop; taken after the registry's lock, never before
  std::atomic<bool> running_{false};
  uint32_t generation_ = 0;
  std::vector<std::pair<void*, nic::Placement>> allocations_;
  int telemetry_device_ = -1;  // this NIC in telemetry's tables; -1 when telemetry is off
  ModelCounterSource* model_counters_ = nullptr;  // owned by telemetry
  std::unique_ptr<DoorbellForwarder> forwarder_;  // under lock_; stopped before anything is freed
  // Cross-process (gpu_ipc.cu).
  std::unique_ptr<IpcArena> arena_;  // null unless options_.ipc_arena_bytes > 0
  uint8_t ipc_handle_[64] = {};      // cudaIpcMemHandle_t of the arena
  std::vector<Import> imports_;
  bool imports_closed_ = false;
};

}  // namespace dissect::softnic
