// The softnic: a software model of the mlx5 NIC interface (a PRM subset), and the default provider.
//
// It reads the same WQE bytes a ConnectX reads, validates them as hardware does, moves payloads,
// writes CQEs (error CQEs with the PRM syndrome included) and keeps per-QP counters. An engine
// consumes doorbells:
//   - EngineKind::host_thread: `engine_threads` host threads poll the QPs' doorbell registers (QP i
//     on thread i % engine_threads) and execute windows of up to 32 WQEs (engine/window.h). Queues
//     and payloads must be in host memory (pinned and mapped to the GPU when CUDA is present).
//   - EngineKind::gpu_kernel: a persistent kernel (GPU builds only; see gpu_engine.h).
// QPs of two SoftNic instances in one process can be connected to each other; each instance's
// engine serves the send queues of its own QPs. QPs created with nic::DoorbellPath::cpu_assisted are
// rung through a mailbox that the instance's doorbell forwarder thread forwards (nic.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/impl/context.h"
#include "dissect/softnic/profile.h"

namespace dissect::softnic {

class ModelCounterSource;  // src/softnic/model_counter_source.h
class HostEngine;          // src/softnic/engine/host_engine.h
class DoorbellForwarder;   // src/softnic/doorbell_forwarder.h

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

struct SoftNicOptions {
  uint32_t max_qps = 1024;
  uint32_t max_mrs = 4096;
  uint32_t max_dcts = 256;  // DC targets (slots are not reused while the NIC lives)
  EngineKind engine = EngineKind::host_thread;
  uint32_t engine_threads = 1;  // host engine threads; QP i is served by thread i % engine_threads
  TimingProfile profile = timing_profile("fast");  // what the model adds (softnic/profile.h)
  bool start_engine = true;  // start the engine on construction
};

class SoftNic : public nic::Nic {
 public:
  explicit SoftNic(const SoftNicOptions& options = {});
  ~SoftNic() override;
  SoftNic(const SoftNic&) = delete;
  SoftNic& operator=(const SoftNic&) = delete;

  std::string provider() const override { return "softnic"; }
  std::unique_ptr<nic::ProtectionDomain> create_pd() override;
  void* allocate(size_t bytes, nic::Placement placement) override;
  void release(void* address) override;

  // The engine. start() after stop() resumes where the queues are; stop() returns once the engine
  // has finished the WQE it was executing. Either may be called from any thread.
  void start();
  void stop();
  bool running() const { return running_.load(std::memory_order_acquire); }
  uint32_t engine_threads() const { return options_.engine_threads; }

  uint32_t nic_id() const { return tables_.nic_id; }
  NicTables& tables() { return tables_; }
  // Counters of one QP (by QPN), read while the engine may run: each field is a snapshot.
  ModelCounters counters(uint32_t qpn) const;
  QpContext& context(uint32_t qpn);
  // The context of DCT `dctn` (its rx counters), read while the engine may run; throws naming it.
  DctContext dct_context(uint32_t dctn) const;
  // Per-QP model counters summed over every QP, as a NIC's port counters would count them.
  ModelCounters port_counters() const;
  // The connection-state model's lookups and misses on this NIC (profile.h); zero without it.
  ContextCacheCounters context_cache_counters() const;
  // The doorbell forwarder's counters of a cpu-assisted QP; throws InvalidArgument naming a QP
  // that is not cpu-assisted (or no longer exists).
  ForwarderCounters forwarder_counters(uint32_t qpn) const;
  int telemetry_device() const { return telemetry_device_; }

  // Lookup used by connect(): the process's SoftNic with this id, or throws naming it.
  static SoftNic& find(uint32_t nic_id);

 private:
  friend class SoftProtectionDomain;
  friend class SoftQueuePair;
  friend class SoftDcTarget;
  // Pauses and resumes the engine of every NIC of the process that has a DCI, so that none is
  // inside a DC WQE when it returns: after a DCT or a NIC left the fabric, nothing reaches it.
  static void quiesce_dc_initiators_locked();
  static void quiesce_dc_initiators();
  // Writes and publishes a new DCT context under lock_; returns its index (throws when full).
  uint32_t add_dct(uint32_t pd, uint64_t dc_key);
  // Stops the engine if it runs; returns whether it ran, for resume_engine().
  bool pause_engine();
  void resume_engine(bool was_running);
  // Clears `remote_nic` of every QP of every SoftNic in the process connected to QP `qp_index` of
  // `target` (every QP of it when `qp_index` is ALL_QPS), each NIC's engine stopped around it,
  // so no engine is inside a WQE aimed at that QP when it returns: after it the QP's queues (or
  // the whole NIC) may be freed, and a WQE to it completes with TRANSPORT_RETRY_EXC_ERR.
  static constexpr uint32_t ALL_QPS = ~0u;
  static void disconnect_peers_of(const NicTables& target, uint32_t qp_index);
  static void disconnect_peers_locked(const NicTables& target, uint32_t qp_index);
  uint32_t allocate_mr_slot();
  uint32_t allocate_qp_slot();
  DoorbellForwarder& doorbell_forwarder();  // made with the first cpu-assisted QP

  SoftNicOptions options_;
  NicTables tables_{};
  std::vector<MrEntry> mrs_;
  std::vector<QpContext> qps_;
  std::vector<DctContext> dcts_;
  std::vector<uint32_t> qp_cache_;  // the connection-state model's tags (NicTables::qp_cache)
  std::atomic<bool> has_dci_{false};
  std::mutex lock_;  // serialises control-path calls (registration, QP creation)
  uint32_t next_pd_ = 1;
  uint32_t mr_tag_ = 0;
  std::mutex engine_lock_;  // serialises start/stop; taken after registry_lock, never before
  std::atomic<bool> running_{false};
  std::unique_ptr<HostEngine> engine_;
  std::vector<void*> allocations_;
  int telemetry_device_ = -1;  // this NIC in telemetry's tables; -1 when telemetry is off
  ModelCounterSource* model_counters_ = nullptr;  // owned by telemetry
  std::unique_ptr<DoorbellForwarder> forwarder_;  // under lock_; stopped before anything is freed
};

}  // namespace dissect::softnic
