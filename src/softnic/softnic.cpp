// SoftNic (softnic.h): one registry and id space, the tables laid out in the table memory, the
// control path over them, and the engine strategy started and stopped around it.
#include "dissect/softnic/softnic.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"
#include "dissect/nic/observer.h"
#include "dissect/softnic/gpu_engine.h"
#include "completion_queue.h"
#include "doorbell_forwarder.h"
#include "engine_runner.h"
#include "ipc_arena.h"
#include "model_counter_source.h"
#include "queue_pair.h"
#include "table_memory.h"

namespace dissect::softnic {
namespace {

std::mutex registry_lock;
std::map<uint32_t, SoftNic*>& registry() {
  static std::map<uint32_t, SoftNic*> instances;
  return instances;
}
uint32_t next_nic_id = 0;

// The fabric DCIs route over: every NIC of the process whose tables host threads reach, by LID
// (lid_of_nic), null where none. Entries are stored under registry_lock with release stores;
// engines acquire them.
NicTables* fabric_table[MAX_FABRIC_LIDS] = {};

size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

std::string name_of(uint32_t nic_id) { return "softnic " + std::to_string(nic_id); }

// The slot of QP `qpn` among the `qp_count` QPs softnic `nic_id` has created.
uint32_t qp_slot(uint32_t nic_id, uint32_t qp_count, uint32_t qpn) {
  const uint32_t index = qpn - QPN_BASE;
  if (qpn < QPN_BASE || index >= qp_count) {
    throw InvalidArgument(name_of(nic_id) + " has no QP " + hex(qpn));
  }
  return index;
}

void check_options(const SoftNicOptions& o) {
  if (o.engine == EngineKind::gpu_kernel && o.device < 0) {
    throw InvalidArgument("softnic: the GPU engine needs a CUDA device (SoftNicOptions::device = " +
                          std::to_string(o.device) + ")");
  }
  if (o.ipc_arena_bytes != 0 && o.engine != EngineKind::gpu_kernel) {
    throw InvalidArgument("softnic: ipc_arena_bytes = " + std::to_string(o.ipc_arena_bytes) +
                          " needs the GPU engine (the host-thread engine's tables are host memory, "
                          "which CUDA IPC does not export)");
  }
  if (o.engine == EngineKind::gpu_kernel &&
      (o.engine_warps_per_cta == 0 || o.engine_warps_per_cta > MAX_ENGINE_WARPS_PER_CTA ||
       o.engine_ctas == 0 || o.engine_ctas > 1024)) {
    throw InvalidArgument("softnic: GPU engine of " + std::to_string(o.engine_ctas) + " CTAs x " +
                          std::to_string(o.engine_warps_per_cta) + " warps (1..1024 CTAs, 1.." +
                          std::to_string(MAX_ENGINE_WARPS_PER_CTA) + " warps per CTA)");
  }
  if (o.max_qps == 0 || o.max_mrs == 0) {
    throw InvalidArgument("softnic: max_qps = " + std::to_string(o.max_qps) + ", max_mrs = " +
                          std::to_string(o.max_mrs) + " (each at least 1)");
  }
  if (o.device < 0) return;
  const int devices = gpu_runtime_init();
  if (o.device >= devices) {
    throw InvalidArgument("softnic: CUDA device " + std::to_string(o.device) + " of " +
                          std::to_string(devices) + " (SoftNicOptions::device; -1 for none)");
  }
}

}  // namespace

const char* to_string(EngineKind kind) {
  return kind == EngineKind::gpu_kernel ? "gpu-kernel" : "host-thread";
}

SoftNic::SoftNic(const SoftNicOptions& options) : options_(options) {
  check_options(options_);
  if (options_.ipc_arena_bytes != 0) open_ipc_arena();
  memory_ = options_.device >= 0 ? cuda_table_memory(options_, arena_.get()) : host_table_memory();
  {
    std::lock_guard<std::mutex> guard(registry_lock);
    nic_id_ = next_nic_id++;
    registry()[nic_id_] = this;
  }
  try {
    lay_out_tables();
    runner_ = options_.engine == EngineKind::gpu_kernel ? gpu_runner(options_, nic_id_, *memory_)
                                                        : host_runner(options_.engine_threads);
  } catch (...) {
    std::lock_guard<std::mutex> guard(registry_lock);
    registry().erase(nic_id_);
    throw;
  }
  register_in_fabric();
  // Host submitters' NICs count in telemetry as a port; GPU submitters' QPs count in their own
  // GPU-memory blocks (gpu_slot.h).
  if (options_.device < 0) {
    auto source = std::make_unique<ModelCounterSource>(*this);
    ModelCounterSource* kept = source.get();
    if (nic::Observer* observer = nic::observer()) {
      telemetry_device_ = observer->open_device(
          nic::DeviceDescription{"softnic" + std::to_string(nic_id_), "", "softnic", 1}, std::move(source));
    }
    model_counters_ = telemetry_device_ >= 0 ? kept : nullptr;  // the observer owns it when it took it
  }
  if (options_.start_engine) start();
}

// NicTables, then the MR, QP and DCT tables and the connection-state model's tags (zero: empty),
// each at a 64 B boundary of one block.
void SoftNic::lay_out_tables() {
  const uint32_t cache_entries = connection_model(options_.profile) ? options_.profile.qp_cache_entries : 0;
  const size_t mr_at = align64(sizeof(NicTables));
  const size_t qp_at = mr_at + align64(sizeof(MrEntry) * options_.max_mrs);
  const size_t dct_at = qp_at + align64(sizeof(QpContext) * options_.max_qps);
  const size_t cache_at = dct_at + align64(sizeof(DctContext) * options_.max_dcts);
  const size_t bytes = cache_at + align64(sizeof(uint32_t) * cache_entries);
  auto* p = static_cast<uint8_t*>(memory_->allocate_tables(bytes));
  tables_ = reinterpret_cast<NicTables*>(p);
  mrs_ = reinterpret_cast<MrEntry*>(p + mr_at);
  qps_ = reinterpret_cast<QpContext*>(p + qp_at);
  dcts_ = reinterpret_cast<DctContext*>(p + dct_at);
  shadow_mrs_.resize(options_.max_mrs);
  NicTables header{};
  header.nic_id = nic_id_;
  header.mr_capacity = options_.max_mrs;
  header.qp_capacity = options_.max_qps;
  header.mrs = mrs_;
  header.qps = qps_;
  header.profile = options_.profile;
  header.dcts = dcts_;
  header.dct_capacity = options_.max_dcts;
  // Host engines route DC through the process's fabric (NicTables::fabric); the GPU engine gets
  // its own with its first DCI (open_gpu_fabric): until then the pointer stays null.
  if (memory_->host_reachable()) {
    header.fabric = fabric_table;
    header.fabric_lids = MAX_FABRIC_LIDS;
  }
  if (cache_entries != 0) header.qp_cache = reinterpret_cast<uint32_t*>(p + cache_at);
  memory_->write(tables_, &header, sizeof header);
}

// In the host engines' fabric when host threads reach this NIC's tables, and in the GPU fabric
// of every NIC whose engine reaches them. The tables are complete before: an engine that finds
// the entry finds its DCTs (add_dct publishes them in order).
void SoftNic::register_in_fabric() {
  if (nic_id_ + 1 >= MAX_FABRIC_LIDS) return;
  const uint32_t lid = lid_of_nic(nic_id_);
  std::lock_guard<std::mutex> guard(registry_lock);
  if (memory_->host_reachable()) store_release<Scope::system>(&fabric_table[lid], tables_);
  for (auto& [id, nic] : registry()) {
    if (nic->gpu_fabric_ != nullptr && nic->gpu_engine_reaches(*this)) {
      nic->memory_->write(&nic->gpu_fabric_[lid], &tables_, sizeof tables_);
    }
  }
}

// Out of every fabric, then every DCI's engine paused and resumed: none is inside a WQE aimed
// at this NIC when its tables go.
void SoftNic::leave_fabric_locked() {
  if (nic_id_ + 1 >= MAX_FABRIC_LIDS) return;
  const uint32_t lid = lid_of_nic(nic_id_);
  NicTables* const none = nullptr;
  if (memory_->host_reachable()) store_release<Scope::system>(&fabric_table[lid], none);
  for (auto& [id, nic] : registry()) {
    if (nic->gpu_fabric_ != nullptr) nic->memory_->write(&nic->gpu_fabric_[lid], &none, sizeof none);
  }
  quiesce_dc_initiators_locked();
}

// GPU memory of the engine's device, or of a peer device with peer access. Narrower than
// connect's rule: tables in mapped host memory (a host-thread engine's) are left out, because a DC
// WRITE updates the DCT's counters and the connection model's pipe with atomics, and no GPU atomic
// reaches host memory over PCIe (MR_IN_HOST_MEMORY); such a DCT answers nothing
// (TRANSPORT_RETRY_EXC_ERR) rather than fault.
bool SoftNic::gpu_engine_reaches(const SoftNic& other) const {
  if (!other.memory_->gpu_reachable() || other.memory_->host_reachable()) return false;
  return other.device() == device() || enable_peer_access(device(), other.device());
}

// The entries in this NIC's GPU memory (one load of the engine's own memory per DC WQE, as the
// host engines' one load of the process's table), written whole, then the header's pointer with
// the engine stopped: a running engine kernel may hold the header it read. 384 KiB, made only for
// a NIC that has a DCI.
void SoftNic::open_gpu_fabric() {
  std::lock_guard<std::mutex> guard(registry_lock);
  if (gpu_fabric_ != nullptr) return;
  const size_t bytes = sizeof(NicTables*) * MAX_FABRIC_LIDS;
  auto* fabric = static_cast<NicTables**>(allocate(bytes, nic::Placement::gpu));
  std::vector<NicTables*> entries(MAX_FABRIC_LIDS, nullptr);
  for (auto& [id, nic] : registry()) {
    if (id + 1 < MAX_FABRIC_LIDS && gpu_engine_reaches(*nic)) entries[lid_of_nic(id)] = nic->tables_;
  }
  memory_->write(fabric, entries.data(), bytes);
  const bool was_running = pause_engine();
  NicTables* const* view = fabric;
  const uint32_t lids = MAX_FABRIC_LIDS;
  memory_->write(&tables_->fabric, &view, sizeof view);
  memory_->write(&tables_->fabric_lids, &lids, sizeof lids);
  gpu_fabric_ = fabric;
  resume_engine(was_running);
}

SoftNic::~SoftNic() {
  {
    // Out of the registry first, under its lock: no other thread's disconnect can then restart
    // this engine after the stop below. Peers on other NICs lose their connection before the
    // tables they point into are freed.
    std::lock_guard<std::mutex> guard(registry_lock);
    registry().erase(nic_id_);
    disconnect_peers_locked(tables_, ALL_QPS);
    leave_fabric_locked();
  }
  try {
    stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: %s: %s\n", name_of(nic_id_).c_str(), e.what());
  }
  // Joined before any memory goes: the thread stores to engine registers in this NIC's allocations.
  if (forwarder_) forwarder_->stop();
  if (model_counters_ != nullptr) model_counters_->detach(port_counters());
  try {
    close_imports();  // before our arena goes: a peer may be mapped into ours, never the reverse
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: %s: %s\n", name_of(nic_id_).c_str(), e.what());
  }
  for (auto& [p, placement] : allocations_) memory_->free(p, placement);
  runner_.reset();
  memory_.reset();  // the tables, and the IPC arena with them
}

SoftNic& SoftNic::find(uint32_t nic_id) {
  std::lock_guard<std::mutex> guard(registry_lock);
  auto it = registry().find(nic_id);
  if (it == registry().end()) {
    throw InvalidArgument("no softnic with id " + std::to_string(nic_id) + " in this process");
  }
  return *it->second;
}

const char* SoftNic::table_memory() const { return memory_->name(); }

std::unique_ptr<nic::ProtectionDomain> SoftNic::create_pd() {
  std::lock_guard<std::mutex> guard(lock_);
  return std::make_unique<SoftProtectionDomain>(*this, next_pd_++);
}

std::unique_ptr<nic::CompletionQueue> SoftNic::create_cq(const nic::CqAttributes& attributes) {
  return std::make_unique<SoftCompletionQueue>(*this, attributes);
}

void* SoftNic::allocate(size_t bytes, nic::Placement placement) {
  void* p = memory_->allocate(bytes, placement);
  std::lock_guard<std::mutex> guard(lock_);
  allocations_.emplace_back(p, placement);
  return p;
}

void SoftNic::release(void* address) {
  nic::Placement placement;
  {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = allocations_.begin();
    while (it != allocations_.end() && it->first != address) ++it;
    if (it == allocations_.end()) {
      throw InvalidArgument("softnic release: " + hex(reinterpret_cast<uintptr_t>(address)) +
                            " was not allocated by " + name_of(nic_id_));
    }
    placement = it->second;
    allocations_.erase(it);
  }
  const bool was_running = memory_->free_needs_engine_stopped() && pause_engine();
  memory_->free(address, placement);
  resume_engine(was_running);
}

uint32_t SoftNic::allocate_mr_slot() {
  std::lock_guard<std::mutex> guard(lock_);
  for (uint32_t i = 0; i < shadow_mrs_.size(); ++i) {
    if (shadow_mrs_[i].valid == 0 && shadow_mrs_[i].key == 0) return i;
  }
  for (uint32_t i = 0; i < shadow_mrs_.size(); ++i) {
    if (shadow_mrs_[i].valid == 0) return i;
  }
  throw Error(name_of(nic_id_) + ": all " + std::to_string(shadow_mrs_.size()) +
              " memory-key slots are in use");
}

// Every field but `valid` (the last), then `valid`, published: the engine acquires it before it
// reads the rest.
void SoftNic::write_mr(uint32_t index, const MrEntry& entry) {
  static_assert(offsetof(MrEntry, valid) + sizeof(uint32_t) == sizeof(MrEntry));
  memory_->write(&mrs_[index], &entry, offsetof(MrEntry, valid));
  memory_->publish(&mrs_[index].valid, entry.valid);
  shadow_mrs_[index] = entry;
}

void SoftNic::invalidate_mr(uint32_t index) {
  memory_->publish(&mrs_[index].valid, 0u);
  shadow_mrs_[index].valid = 0;
}

const MrEntry* SoftNic::shadow_mr(uint32_t index) const {
  return index < shadow_mrs_.size() ? &shadow_mrs_[index] : nullptr;
}

uint32_t SoftNic::allocate_qp_slot() {
  std::lock_guard<std::mutex> guard(lock_);
  if (qp_count_ >= options_.max_qps) {
    throw Error(name_of(nic_id_) + ": all " + std::to_string(options_.max_qps) + " QP slots are in use");
  }
  shadow_qps_.emplace_back();
  return qp_count_++;
}

// The context in RESET, then the table's QP count (slots are handed out in order, so the engine
// never walks onto a slot before its context), then its state.
void SoftNic::write_qp(uint32_t index, const QpContext& context) {
  QpContext unpublished = context;
  unpublished.state = QP_STATE_RESET;
  memory_->write(&qps_[index], &unpublished, sizeof unpublished);
  {
    std::lock_guard<std::mutex> guard(lock_);
    shadow_qps_[index] = unpublished;
    uint32_t published = 0;
    memory_->read(&published, &tables_->qp_count, sizeof published);
    if (published < index + 1) memory_->publish(&tables_->qp_count, index + 1);
  }
  if (context.state != QP_STATE_RESET) publish_qp_state(index, context.state);
}

void SoftNic::publish_qp_state(uint32_t index, uint32_t state) {
  memory_->publish(&qps_[index].state, state);
  std::lock_guard<std::mutex> guard(lock_);
  shadow_qps_[index].state = state;
}

// Field by field: the engine may be reading the context of a QP in RESET (it skips it on seeing
// the state), and every other field of it is the engine's.
void SoftNic::connect_qp(uint32_t index, NicTables* remote, const RemoteWindow& window,
                         uint32_t remote_index, uint32_t engine_flags) {
  QpContext& slot = qps_[index];
  memory_->write(&slot.remote_nic, &remote, sizeof remote);
  memory_->write(&slot.remote_window, &window, sizeof window);
  memory_->write(&slot.remote_qp_index, &remote_index, sizeof remote_index);
  memory_->write(&slot.engine_flags, &engine_flags, sizeof engine_flags);
  {
    std::lock_guard<std::mutex> guard(lock_);
    QpContext& shadow = shadow_qps_[index];
    shadow.remote_nic = remote;
    shadow.remote_window = window;
    shadow.remote_qp_index = remote_index;
    shadow.engine_flags = engine_flags;
  }
  publish_qp_state(index, QP_STATE_RTS);
}

uint32_t SoftNic::add_dct(uint32_t pd, uint64_t dc_key) {
  std::lock_guard<std::mutex> guard(lock_);
  const uint32_t index = dct_count_;
  if (index >= options_.max_dcts) {
    throw Error(name_of(nic_id_) + ": all " + std::to_string(options_.max_dcts) + " DCT slots are in use");
  }
  // The context, then `valid`, then the count, each published: an engine that acquires the count
  // and then `valid` sees the whole context.
  const DctContext slot{DCTN_BASE + index, 0, pd, 0, dc_key, 0, 0};
  memory_->write(&dcts_[index], &slot, sizeof slot);
  memory_->publish(&dcts_[index].valid, 1u);
  memory_->publish(&tables_->dct_count, ++dct_count_);
  return index;
}

void SoftNic::invalidate_dct(uint32_t index) { memory_->publish(&dcts_[index].valid, 0u); }

DctContext SoftNic::dct_context(uint32_t dctn) const {
  const uint32_t index = dctn - DCTN_BASE;
  if (dctn < DCTN_BASE || index >= dct_count_) {
    throw InvalidArgument(name_of(nic_id_) + " has no DCT " + hex(dctn));
  }
  DctContext out;
  memory_->read(&out, &dcts_[index], sizeof out);
  return out;
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
  if (!forwarder_) forwarder_ = std::make_unique<DoorbellForwarder>(name_of(nic_id_));
  return *forwarder_;
}

ForwarderCounters SoftNic::forwarder_counters(uint32_t qpn) const {
  if (!forwarder_) {
    throw InvalidArgument(name_of(nic_id_) + ": QP " + hex(qpn) +
                          " is not cpu-assisted: this NIC has no doorbell forwarder");
  }
  return forwarder_->counters(qpn);
}

NicTables SoftNic::table_header() const {
  NicTables out;
  memory_->read(&out, tables_, sizeof out);
  return out;
}

QpContext SoftNic::qp_context(uint32_t qpn) const {
  const uint32_t index = qp_slot(nic_id_, qp_count_, qpn);
  QpContext out;
  memory_->read(&out, &qps_[index], sizeof out);
  return out;
}

ModelCounters SoftNic::counters(uint32_t qpn) const {
  const uint32_t index = qp_slot(nic_id_, qp_count_, qpn);
  ModelCounters out;
  memory_->read(&out, &qps_[index].counters, sizeof out);
  return out;
}

ContextCacheCounters SoftNic::context_cache_counters() const {
  ContextCacheCounters out;
  memory_->read(&out, &tables_->context_cache, sizeof out);
  return out;
}

ModelCounters SoftNic::port_counters() const {
  ModelCounters total{};
  for (uint32_t i = 0; i < qp_count_; ++i) {
    const ModelCounters c = counters(QPN_BASE + i);
    total.doorbells += c.doorbells;
    total.wqes_executed += c.wqes_executed;
    total.tx_bytes += c.tx_bytes;
    total.tx_packets += c.tx_packets;
    total.rx_bytes += c.rx_bytes;
    total.rx_packets += c.rx_packets;
    total.cqes_written += c.cqes_written;
    total.error_cqes += c.error_cqes;
    total.bad_doorbells += c.bad_doorbells;
    total.deepest_backlog = std::max(total.deepest_backlog, c.deepest_backlog);
  }
  return total;
}

EngineStatus SoftNic::status() const { return runner_->status(); }
bool SoftNic::faulted() const { return runner_->faulted(); }
std::string SoftNic::describe_status() const {
  return describe_engine_status(status(), nic_id_, options_);
}

void SoftNic::start() {
  std::lock_guard<std::mutex> guard(engine_lock_);
  if (running()) return;
  if (imports_closed_) {
    throw Error(name_of(nic_id_) + ": close_imports() unmapped its peers' arenas; the engine cannot restart");
  }
  runner_->start(tables_, ++generation_);
  running_.store(true, std::memory_order_release);
}

void SoftNic::stop(uint64_t timeout_ns) {
  std::lock_guard<std::mutex> guard(engine_lock_);
  if (!running()) return;
  try {
    runner_->stop(timeout_ns);
  } catch (...) {
    running_.store(runner_->active(), std::memory_order_release);
    throw;
  }
  running_.store(false, std::memory_order_release);
}

void SoftNic::drain(uint64_t timeout_ns) {
  std::lock_guard<std::mutex> guard(engine_lock_);
  if (running()) throw Error(name_of(nic_id_) + ": drain() needs the engine stopped: " + describe_status());
  runner_->drain(tables_, ++generation_, timeout_ns);
}

bool SoftNic::pause_engine() {
  if (!running()) return false;
  stop();
  return true;
}

void SoftNic::resume_engine(bool was_running) {
  if (was_running) start();
}

void SoftNic::disconnect_peers_of(const NicTables* target, uint32_t qp_index) {
  std::lock_guard<std::mutex> guard(registry_lock);
  disconnect_peers_locked(target, qp_index);
}

// Only a stopped engine can be known to be outside its QPs' windows: the stop orders everything
// the engine did before the stores below, and the start orders those stores before anything it
// does next, so the engine never reads a half-cleared connection and never follows one after it
// is cleared. Connections to another process (remote_window.base != 0) name owner-space tables.
void SoftNic::disconnect_peers_locked(const NicTables* target, uint32_t qp_index) {
  for (auto& [id, nic] : registry()) {
    auto aimed_at_target = [&](const QpContext& qp) {
      return qp.remote_nic == target && qp.remote_window.base == 0 &&
             (qp_index == ALL_QPS || qp.remote_qp_index == qp_index);
    };
    bool connected = false;
    for (uint32_t i = 0; i < nic->qp_count_ && !connected; ++i) connected = aimed_at_target(nic->shadow_qps_[i]);
    if (!connected) continue;
    const bool was_running = nic->pause_engine();
    for (uint32_t i = 0; i < nic->qp_count_; ++i) {
      if (!aimed_at_target(nic->shadow_qps_[i])) continue;
      NicTables* const none = nullptr;
      nic->memory_->write(&nic->qps_[i].remote_nic, &none, sizeof none);
      nic->shadow_qps_[i].remote_nic = nullptr;
    }
    nic->resume_engine(was_running);
  }
}

const SoftNic::Import* SoftNic::find_import(uint32_t alias) const {
  for (const Import& i : imports_) {
    if (i.alias == alias) return &i;
  }
  return nullptr;
}

}  // namespace dissect::softnic
