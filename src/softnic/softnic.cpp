#include "dissect/softnic/softnic.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "dissect/common/error.h"
#include "dissect/nic/observer.h"
#include "engine/execute.h"
#include "doorbell_forwarder.h"
#include "engine/host_engine.h"
#include "model_counter_source.h"
#include "placement_memory.h"
#include "queue_pair.h"

namespace dissect::softnic {
namespace {

std::mutex registry_lock;
std::map<uint32_t, SoftNic*>& registry() {
  static std::map<uint32_t, SoftNic*> instances;
  return instances;
}
uint32_t next_nic_id = 0;

// The fabric DCIs route over: every NIC of the process by LID (lid_of_nic), null where none.
// Entries are stored under registry_lock with release stores; engines acquire them.
NicTables* fabric_table[MAX_FABRIC_LIDS] = {};

}  // namespace

const char* to_string(EngineKind kind) {
  return kind == EngineKind::gpu_kernel ? "gpu-kernel" : "host-thread";
}

SoftNic::SoftNic(const SoftNicOptions& options) : options_(options) {
  if (options_.engine != EngineKind::host_thread) {
    throw InvalidArgument(std::string("softnic engine '") + to_string(options_.engine) +
                          "' is not available through SoftNic; use the GPU engine API");
  }
  mrs_.resize(options_.max_mrs);
  qps_.resize(options_.max_qps);
  dcts_.resize(options_.max_dcts);
  tables_.dcts = dcts_.data();
  tables_.dct_capacity = options_.max_dcts;
  tables_.dct_count = 0;
  tables_.fabric = fabric_table;
  tables_.fabric_lids = MAX_FABRIC_LIDS;
  {
    std::lock_guard<std::mutex> guard(registry_lock);
    tables_.nic_id = next_nic_id++;
    registry()[tables_.nic_id] = this;
    const uint32_t lid = lid_of_nic(tables_.nic_id);
    if (tables_.nic_id + 1 < MAX_FABRIC_LIDS) store_release<Scope::system>(&fabric_table[lid], &tables_);
  }
  tables_.mr_capacity = options_.max_mrs;
  tables_.qp_capacity = options_.max_qps;
  tables_.qp_count = 0;
  tables_.mrs = mrs_.data();
  tables_.qps = qps_.data();
  tables_.profile = options_.profile;
  if (connection_model(options_.profile)) {
    qp_cache_.assign(options_.profile.qp_cache_entries, 0);
    tables_.qp_cache = qp_cache_.data();
  }
  auto source = std::make_unique<ModelCounterSource>(*this);
  ModelCounterSource* kept = source.get();
  if (nic::Observer* observer = nic::observer()) {
    telemetry_device_ = observer->open_device(
        nic::DeviceDescription{"softnic" + std::to_string(tables_.nic_id), "", "softnic", 1},
        std::move(source));
  }
  model_counters_ = telemetry_device_ >= 0 ? kept : nullptr;  // the observer owns it when it took it
  if (options_.start_engine) start();
}

SoftNic::~SoftNic() {
  {
    // Out of the registry first, under its lock: no other thread's disconnect can then restart
    // this engine after the stop below. Peers on other NICs lose their connection before the
    // tables they point into are freed.
    std::lock_guard<std::mutex> guard(registry_lock);
    registry().erase(tables_.nic_id);
    disconnect_peers_locked(tables_, ALL_QPS);
    if (tables_.nic_id + 1 < MAX_FABRIC_LIDS) {
      store_release<Scope::system>(&fabric_table[lid_of_nic(tables_.nic_id)],
                                   static_cast<NicTables*>(nullptr));
      quiesce_dc_initiators_locked();
    }
  }
  stop();
  // Joined before any memory goes: the thread stores to engine registers in this NIC's allocations.
  if (forwarder_) forwarder_->stop();
  if (model_counters_ != nullptr) model_counters_->detach(port_counters());
  for (void* p : allocations_) free_placement(p);
}

SoftNic& SoftNic::find(uint32_t nic_id) {
  std::lock_guard<std::mutex> guard(registry_lock);
  auto it = registry().find(nic_id);
  if (it == registry().end()) {
    throw InvalidArgument("no softnic with id " + std::to_string(nic_id) + " in this process");
  }
  return *it->second;
}

std::unique_ptr<nic::ProtectionDomain> SoftNic::create_pd() {
  std::lock_guard<std::mutex> guard(lock_);
  return std::make_unique<SoftProtectionDomain>(*this, next_pd_++);
}

void* SoftNic::allocate(size_t bytes, nic::Placement placement) {
  void* p = allocate_placement(bytes, placement);
  std::lock_guard<std::mutex> guard(lock_);
  allocations_.push_back(p);
  return p;
}

void SoftNic::release(void* address) {
  std::lock_guard<std::mutex> guard(lock_);
  for (auto it = allocations_.begin(); it != allocations_.end(); ++it) {
    if (*it == address) {
      free_placement(address);
      allocations_.erase(it);
      return;
    }
  }
  throw InvalidArgument("softnic release: " + hex(reinterpret_cast<uintptr_t>(address)) +
                        " was not allocated by softnic " + std::to_string(tables_.nic_id));
}

uint32_t SoftNic::allocate_mr_slot() {
  std::lock_guard<std::mutex> guard(lock_);
  for (uint32_t i = 0; i < mrs_.size(); ++i) {
    if (load_acquire<Scope::system>(&mrs_[i].valid) == 0 && mrs_[i].key == 0) return i;
  }
  for (uint32_t i = 0; i < mrs_.size(); ++i) {
    if (load_acquire<Scope::system>(&mrs_[i].valid) == 0) return i;
  }
  throw Error("softnic " + std::to_string(tables_.nic_id) + ": all " +
              std::to_string(mrs_.size()) + " memory-key slots are in use");
}

uint32_t SoftNic::allocate_qp_slot() {
  std::lock_guard<std::mutex> guard(lock_);
  const uint32_t index = tables_.qp_count;
  if (index >= tables_.qp_capacity) {
    throw Error("softnic " + std::to_string(tables_.nic_id) + ": all " +
                std::to_string(tables_.qp_capacity) + " QP slots are in use");
  }
  store_release<Scope::system>(&tables_.qp_count, index + 1);
  return index;
}

uint32_t SoftNic::add_dct(uint32_t pd, uint64_t dc_key) {
  std::lock_guard<std::mutex> guard(lock_);
  const uint32_t index = tables_.dct_count;
  if (index >= tables_.dct_capacity) {
    throw Error("softnic " + std::to_string(tables_.nic_id) + ": all " +
                std::to_string(tables_.dct_capacity) + " DCT slots are in use");
  }
  // The context, then `valid`, then the count, each published with a release store: an engine
  // that acquires the count and then `valid` sees the whole context.
  DctContext& slot = dcts_[index];
  slot = DctContext{DCTN_BASE + index, 0, pd, 0, dc_key, 0, 0};
  store_release<Scope::system>(&slot.valid, 1u);
  store_release<Scope::system>(&tables_.dct_count, index + 1);
  return index;
}

DctContext SoftNic::dct_context(uint32_t dctn) const {
  const uint32_t index = dctn - DCTN_BASE;
  if (dctn < DCTN_BASE || index >= load_acquire<Scope::system>(&tables_.dct_count)) {
    throw InvalidArgument("softnic " + std::to_string(tables_.nic_id) + " has no DCT " + hex(dctn));
  }
  return dcts_[index];
}

void SoftNic::quiesce_dc_initiators() {
  std::lock_guard<std::mutex> guard(registry_lock);
  quiesce_dc_initiators_locked();
}

// As disconnect_peers_locked: a stopped engine is outside every WQE, and the join orders what it
// did before whatever the caller frees next.
void SoftNic::quiesce_dc_initiators_locked() {
  for (auto& [id, nic] : registry()) {
    if (!nic->has_dci_.load(std::memory_order_acquire)) continue;
    nic->resume_engine(nic->pause_engine());
  }
}

DoorbellForwarder& SoftNic::doorbell_forwarder() {
  std::lock_guard<std::mutex> guard(lock_);
  if (!forwarder_) {
    forwarder_ = std::make_unique<DoorbellForwarder>("softnic " + std::to_string(tables_.nic_id));
  }
  return *forwarder_;
}

ForwarderCounters SoftNic::forwarder_counters(uint32_t qpn) const {
  if (!forwarder_) {
    throw InvalidArgument("softnic " + std::to_string(tables_.nic_id) + ": QP " + hex(qpn) +
                          " is not cpu-assisted: this NIC has no doorbell forwarder");
  }
  return forwarder_->counters(qpn);
}

QpContext& SoftNic::context(uint32_t qpn) {
  const uint32_t index = qpn - QPN_BASE;
  if (qpn < QPN_BASE || index >= load_acquire<Scope::system>(&tables_.qp_count)) {
    throw InvalidArgument("softnic " + std::to_string(tables_.nic_id) + " has no QP " + hex(qpn));
  }
  return qps_[index];
}

ModelCounters SoftNic::counters(uint32_t qpn) const {
  return const_cast<SoftNic*>(this)->context(qpn).counters;
}

ContextCacheCounters SoftNic::context_cache_counters() const {
  const ContextCacheCounters& c = tables_.context_cache;
  return ContextCacheCounters{__atomic_load_n(&c.send_lookups, __ATOMIC_RELAXED),
                              __atomic_load_n(&c.send_misses, __ATOMIC_RELAXED),
                              __atomic_load_n(&c.receive_lookups, __ATOMIC_RELAXED),
                              __atomic_load_n(&c.receive_misses, __ATOMIC_RELAXED)};
}

ModelCounters SoftNic::port_counters() const {
  ModelCounters total{};
  const uint32_t count = __atomic_load_n(&tables_.qp_count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < count; ++i) {
    const ModelCounters& c = qps_[i].counters;
    total.doorbells += c.doorbells;
    total.wqes_executed += c.wqes_executed;
    total.tx_bytes += c.tx_bytes;
    total.tx_packets += c.tx_packets;
    total.rx_bytes += c.rx_bytes;
    total.rx_packets += c.rx_packets;
    total.cqes_written += c.cqes_written;
    total.error_cqes += c.error_cqes;
    total.bad_doorbells += c.bad_doorbells;
  }
  return total;
}

void SoftNic::start() {
  std::lock_guard<std::mutex> guard(engine_lock_);
  if (running_.exchange(true, std::memory_order_acq_rel)) return;
  if (!engine_) engine_ = std::make_unique<HostEngine>();
  try {
    engine_->start(&tables_, options_.engine_threads, nullptr, 0);
  } catch (...) {
    running_.store(false, std::memory_order_release);
    throw;
  }
}

void SoftNic::stop() { pause_engine(); }

bool SoftNic::pause_engine() {
  std::lock_guard<std::mutex> guard(engine_lock_);
  if (!running_.load(std::memory_order_acquire)) return false;
  engine_->stop();
  running_.store(false, std::memory_order_release);
  return true;
}

void SoftNic::resume_engine(bool was_running) {
  if (was_running) start();
}

void SoftNic::disconnect_peers_of(const NicTables& target, uint32_t qp_index) {
  std::lock_guard<std::mutex> guard(registry_lock);
  disconnect_peers_locked(target, qp_index);
}

// Only a stopped engine can be known to be outside service_qp: the join in pause_engine() orders
// everything the engine did before the stores below, and the thread start in resume_engine()
// orders those stores before anything it does next, so the engine never reads a half-cleared
// connection and never follows one after it is cleared.
void SoftNic::disconnect_peers_locked(const NicTables& target, uint32_t qp_index) {
  for (auto& [id, nic] : registry()) {
    auto aimed_at_target = [&](const QpContext& qp) {
      return qp.remote_nic == &target && (qp_index == ALL_QPS || qp.remote_qp_index == qp_index);
    };
    const uint32_t count = load_acquire<Scope::system>(&nic->tables_.qp_count);
    bool connected = false;
    for (uint32_t i = 0; i < count && !connected; ++i) connected = aimed_at_target(nic->qps_[i]);
    if (!connected) continue;
    const bool was_running = nic->pause_engine();
    for (uint32_t i = 0; i < count; ++i) {
      if (aimed_at_target(nic->qps_[i])) nic->qps_[i].remote_nic = nullptr;
    }
    nic->resume_engine(was_running);
  }
}

}  // namespace dissect::softnic
