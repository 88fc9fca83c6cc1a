// The softnic on a GPU machine: the control path of GpuSoftNic (tables, QPs, PDs, MRs) and its
// engines: the parallel engine kernel (engine/gpu_kernel.cu) or host threads (engine/host_engine.h)
// over tables in engine-reachable memory. See include/dissect/softnic/gpu_engine.h for the contract
// and the hazards it designs around.
#include "dissect/softnic/gpu_engine.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "dissect/common/atomic.h"
#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "doorbell_forwarder.h"
#include "engine/gpu_kernel.h"
#include "engine/host_engine.h"
#include "gpu_slot.h"
#include "ipc_arena.h"
#include "memory_registration.h"
#include "queue_memory.h"

namespace dissect::softnic {
namespace {

// Set before main(): the first CUDA call of the process (ours or the user's) then creates its
// context with eager module loading. gpu_runtime_init() repeats it for programs that load the
// library late.
struct EagerModuleLoading {
  EagerModuleLoading() { setenv("CUDA_MODULE_LOADING", "EAGER", 1); }
} eager_module_loading;

std::mutex registry_lock;
std::map<uint32_t, GpuSoftNic*>& registry() {
  static std::map<uint32_t, GpuSoftNic*> instances;
  return instances;
}
uint32_t next_nic_id = 0x1000;  // apart from SoftNic's ids, which start at 0

template <typename T>
void status_store(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

std::string cuda_message(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace

void check_cuda(int status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(std::string("softnic gpu: ") + what + " failed: " +
                cuda_message(static_cast<cudaError_t>(status)));
  }
}

int gpu_runtime_init() {
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  if (loading == nullptr || std::strcmp(loading, "EAGER") != 0) {
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void preload_kernel(const void* kernel, const char* what) {
  cudaFuncAttributes attributes{};
  check_cuda(cudaFuncGetAttributes(&attributes, kernel), what);
  size_t stack = 0;
  check_cuda(cudaDeviceGetLimit(&stack, cudaLimitStackSize), "reading cudaLimitStackSize");
  if (attributes.localSizeBytes > stack) {
    throw Error(std::string("softnic gpu: ") + what + " needs " +
                std::to_string(attributes.localSizeBytes) +
                " B of local memory per thread, more than the " + std::to_string(stack) +
                " B reserved: launching it while an engine runs would wait forever for the driver "
                "to grow local memory; raise GpuSoftNicOptions::local_memory_reserve");
  }
}

// Grows the reservation now, while no engine of ours runs on the device.
void reserve_local_memory(size_t bytes) {
  size_t current = 0;
  check_cuda(cudaDeviceGetLimit(&current, cudaLimitStackSize), "reading cudaLimitStackSize");
  if (current < bytes) {
    check_cuda(cudaDeviceSetLimit(cudaLimitStackSize, bytes), "reserving local memory");
  }
}

bool enable_peer_access(int a, int b) {
  if (a == b) return true;
  int ab = 0, ba = 0;
  if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess || cudaDeviceCanAccessPeer(&ba, b, a) !=
                                                               cudaSuccess || !ab || !ba) {
    cudaGetLastError();
    return false;
  }
  for (auto [from, to] : {std::pair<int, int>{a, b}, std::pair<int, int>{b, a}}) {
    DeviceGuard guard(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
    } else if (e != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Protection domain and queue pair

namespace {

size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

class GpuQueuePair : public nic::QueuePair {
 public:
  GpuQueuePair(GpuSoftNic& nic, uint32_t pd, const nic::QpAttributes& attributes)
      : nic_(nic), attributes_(checked_queue_attributes(attributes)) {
    const auto& a = attributes_;
    if (nic.engine() == EngineKind::host_thread && a.placement == nic::Placement::gpu) {
      throw InvalidArgument(
          "softnic host-thread engine: queue placement 'gpu' needs the GPU engine");
    }
    // The post stamps live in the telemetry slot (GPU memory, for GPU submitters).
    memory_ = allocate_queue_memory(nic_, a, PostStamps::elsewhere);
    doorbell_ = route_doorbell(nic_, a, memory_);  // mapped host memory (allocate, Placement::host)
    // The queues may be in GPU memory: their initial bytes are built here and uploaded.
    std::vector<uint8_t> image(memory_.bytes, 0);
    mark_cqes_invalid(memory_, a, image.data());
    nic_.upload(memory_.base, image.data(), memory_.bytes);
    index_ = nic_.allocate_qp_slot();
    qpn_ = QPN_BASE + index_;
    context_ = make_queue_context(memory_, a, qpn_, pd);
    // Host-resident queues are rung by host threads or over PCIe, and their CQ is observed there.
    if (a.placement == nic::Placement::host) {
      context_.engine_flags = ENGINE_QUEUES_IN_HOST_MEMORY | ENGINE_SYSTEM_COMPLETION;
    }
    // A cpu-assisted doorbell is stored by the forwarder, a host thread, into mapped host memory:
    // only a system-scope acquire of it synchronises with that release store and so carries the
    // submitter's WQE stores (doorbell_forwarder.h, steps 1-3). The <system, system> window is the
    // one instantiation with a system-scope doorbell; its system-scope CQE release is stronger
    // than a GPU-resident CQ needs, and a fourth instantiation would not fit the engine kernel's
    // registers (gpu_engine.h).
    if (doorbell_.memory != nullptr) context_.engine_flags |= ENGINE_QUEUES_IN_HOST_MEMORY;
    nic_.write_qp(index_, context_);
    if (doorbell_.memory != nullptr) {
      nic_.doorbell_forwarder().add(qpn_, doorbell_.mailbox, doorbell_.engine_register);
    }
    telemetry_.open(nic_, "softnic-gpu" + std::to_string(nic_.nic_id()), nic_.device(),
                    a.telemetry_channel, qpn_, a.sq_wqebbs);  // GPU memory: for GPU submitters
  }

  ~GpuQueuePair() override {
    try {
      nic_.publish_qp_state(index_, QP_STATE_RESET);
      // remove() returns once the forwarder cannot touch the doorbell words; the engine, which
      // reads the register, is stopped around their free by release().
      if (doorbell_.memory != nullptr) nic_.doorbell_forwarder().remove(qpn_);
      nic_.release(memory_.base);  // stops the engine around the free: it may be inside this QP
      if (doorbell_.memory != nullptr) nic_.release(doorbell_.memory);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dissect: softnic gpu: destroying QP 0x%x: %s\n", qpn_, e.what());
    }
  }

  uint32_t qpn() const override { return qpn_; }

  nic::QpHandle handle() const override {
    return make_send_handle(memory_, attributes_, qpn_, telemetry_.counters(),
                            telemetry_.post_stamps(), telemetry_.sample_mask());
  }

  nic::RecvQueueHandle recv_handle() const override {
    return make_recv_handle(memory_, attributes_, qpn_);
  }

  nic::QpEndpoint endpoint() const override {
    nic::QpEndpoint e;
    e.qpn = qpn_;
    e.nic_id = nic_.nic_id();
    return e;
  }

  void connect(const nic::QpEndpoint& remote) override {
    if (const GpuSoftNic::Import* peer = nic_.find_import(remote.nic_id)) {
      connect_to_process(*peer, remote.qpn);
      return;
    }
    GpuSoftNic& remote_nic = GpuSoftNic::find(remote.nic_id);
    if (remote.qpn < QPN_BASE) {
      throw InvalidArgument("connect qpn " + hex(qpn_) + ": no QP " + hex(remote.qpn));
    }
    if (nic_.engine() == EngineKind::host_thread && remote_nic.engine() == EngineKind::gpu_kernel) {
      throw InvalidArgument("connect qpn " + hex(qpn_) +
                            ": a host-thread engine cannot reach the GPU-resident tables of "
                            "softnic " + std::to_string(remote.nic_id));
    }
    if (remote_nic.device() != nic_.device() && nic_.engine() == EngineKind::gpu_kernel &&
        !enable_peer_access(nic_.device(), remote_nic.device())) {
      throw Error("connect qpn " + hex(qpn_) + ": devices " + std::to_string(nic_.device()) +
                  " and " + std::to_string(remote_nic.device()) + " have no peer access");
    }
    context_.remote_nic = remote_nic.engine_tables();
    context_.remote_window = RemoteWindow{};
    // A responder on another GPU observes its payloads there: the CQE's release must cover it.
    if (remote_nic.device() != nic_.device()) context_.engine_flags |= ENGINE_SYSTEM_COMPLETION;
    context_.remote_qp_index = remote.qpn - QPN_BASE;
    nic_.write_qp(index_, context_);
    nic_.publish_qp_state(index_, QP_STATE_RTS);
  }

 private:
  // The peer's tables and QPs are reached through its imported arena (softnic/ipc.h).
  void connect_to_process(const GpuSoftNic::Import& peer, uint32_t remote_qpn) {
    if (remote_qpn < QPN_BASE || remote_qpn - QPN_BASE >= peer.tables.qp_count) {
      throw InvalidArgument("connect qpn " + hex(qpn_) + ": softnic " +
                            std::to_string(peer.peer.nic_id) + " of process " +
                            std::to_string(peer.peer.pid) + " had no QP " + hex(remote_qpn) +
                            " when imported (" + std::to_string(peer.tables.qp_count) +
                            " QPs): import after the peer created its QPs");
    }
    context_.remote_nic = reinterpret_cast<NicTables*>(peer.peer.tables);
    context_.remote_window = peer.window;
    context_.engine_flags |= ENGINE_SYSTEM_COMPLETION;  // the responder is another process's GPU
    context_.remote_qp_index = remote_qpn - QPN_BASE;
    nic_.write_qp(index_, context_);
    nic_.publish_qp_state(index_, QP_STATE_RTS);
  }

  GpuSoftNic& nic_;
  nic::QpAttributes attributes_;
  uint32_t index_ = 0;
  uint32_t qpn_ = 0;
  QpContext context_{};
  QueueMemory memory_;
  AssistedDoorbell doorbell_;  // empty unless DoorbellPath::cpu_assisted
  GpuQpSlot telemetry_;  // gathered and freed after the destructor's body
};

class GpuProtectionDomain : public nic::ProtectionDomain {
 public:
  GpuProtectionDomain(GpuSoftNic& nic, uint32_t pd) : nic_(nic), pd_(pd) {}

  nic::MemoryRegion register_memory(void* address, size_t length, uint32_t access) override {
    const MrEntry entry = make_mr_entry(address, length, access, pd_, [this] {
      return MrSlot{nic_.allocate_mr_slot(), next_tag()};
    });
    MrEntry published = entry;
    cudaPointerAttributes where{};
    if (cudaPointerGetAttributes(&where, address) != cudaSuccess) cudaGetLastError();
    if (where.type != cudaMemoryTypeDevice && where.type != cudaMemoryTypeManaged) {
      published.access |= MR_IN_HOST_MEMORY;
    }
    nic_.write_mr(mr_index(entry.key), published);
    return memory_region(entry);
  }

  void deregister_memory(const nic::MemoryRegion& region) override {
    const uint32_t index = mr_index(region.lkey);
    const MrEntry* entry = nic_.shadow_mr(index);
    if (entry == nullptr || entry->key != region.lkey) {
      throw InvalidArgument("deregister_memory: unknown lkey " + hex(region.lkey));
    }
    nic_.invalidate_mr(index);
  }

  std::unique_ptr<nic::QueuePair> create_qp(const nic::QpAttributes& attributes) override {
    return std::make_unique<GpuQueuePair>(nic_, pd_, attributes);
  }

 private:
  uint32_t next_tag() { return ++tag_ * 37 + pd_; }
  GpuSoftNic& nic_;
  uint32_t pd_;
  uint32_t tag_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// GpuSoftNic

GpuSoftNic::GpuSoftNic(const GpuSoftNicOptions& options) : options_(options) {
  const int devices = gpu_runtime_init();
  if (devices == 0) throw Error("softnic gpu: no CUDA device");
  if (options_.device < 0 || options_.device >= devices) {
    throw InvalidArgument("softnic gpu: device " + std::to_string(options_.device) + " of " +
                          std::to_string(devices));
  }
  DeviceGuard guard(options_.device);
  cudaStream_t control = nullptr, engine = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&control, cudaStreamNonBlocking), "control stream");
  check_cuda(cudaStreamCreateWithFlags(&engine, cudaStreamNonBlocking), "engine stream");
  control_stream_ = control;
  engine_stream_ = engine;
  if (options_.engine_warps_per_cta == 0 ||
      options_.engine_warps_per_cta > MAX_ENGINE_WARPS_PER_CTA || options_.engine_ctas == 0 ||
      options_.engine_ctas > 1024) {
    throw InvalidArgument("softnic gpu: engine of " + std::to_string(options_.engine_ctas) +
                          " CTAs x " + std::to_string(options_.engine_warps_per_cta) +
                          " warps (1..1024 CTAs, 1.." + std::to_string(MAX_ENGINE_WARPS_PER_CTA) +
                          " warps per CTA)");
  }
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&engine_control_), 64),
             "engine stop flag and counts (GPU memory)");
  check_cuda(cudaHostAlloc(reinterpret_cast<void**>(&status_), sizeof(EngineStatus),
                           cudaHostAllocMapped | cudaHostAllocPortable),
             "status block (mapped host memory)");
  std::memset(status_, 0, sizeof(EngineStatus));

  // The connection-state model's tags after the QPs (zero: empty), only under a profile with it.
  const uint32_t cache_entries =
      connection_model(options_.profile) ? options_.profile.qp_cache_entries : 0;
  const size_t table_bytes = align64(sizeof(NicTables)) +
                             align64(sizeof(MrEntry) * options_.max_mrs) +
                             align64(sizeof(QpContext) * options_.max_qps) +
                             align64(sizeof(uint32_t) * cache_entries);
  void* tables = nullptr;
  if (options_.ipc_arena_bytes != 0) {
    open_ipc_arena();
    tables = arena_->take(table_bytes, "engine tables");
  } else if (engine_in_device_memory()) {
    check_cuda(cudaMalloc(&tables, table_bytes), "engine tables (GPU memory)");
  } else {
    check_cuda(cudaHostAlloc(&tables, table_bytes, cudaHostAllocMapped | cudaHostAllocPortable),
               "engine tables (mapped host memory)");
  }
  uint8_t* p = static_cast<uint8_t*>(tables);
  engine_tables_ = reinterpret_cast<NicTables*>(p);
  engine_mrs_ = reinterpret_cast<MrEntry*>(p + align64(sizeof(NicTables)));
  engine_qps_ = reinterpret_cast<QpContext*>(p + align64(sizeof(NicTables)) +
                                             align64(sizeof(MrEntry) * options_.max_mrs));
  shadow_mrs_.resize(options_.max_mrs);
  {
    std::lock_guard<std::mutex> g(registry_lock);
    nic_id_ = next_nic_id++;
    registry()[nic_id_] = this;
  }
  std::vector<uint8_t> image(table_bytes, 0);
  NicTables header{};
  header.nic_id = nic_id_;
  header.mr_capacity = options_.max_mrs;
  header.qp_capacity = options_.max_qps;
  header.qp_count = 0;
  header.mrs = engine_mrs_;
  header.qps = engine_qps_;
  header.profile = options_.profile;
  if (cache_entries != 0) {
    header.qp_cache = reinterpret_cast<uint32_t*>(
        p + align64(sizeof(NicTables)) + align64(sizeof(MrEntry) * options_.max_mrs) +
        align64(sizeof(QpContext) * options_.max_qps));
  }
  std::memcpy(image.data(), &header, sizeof header);
  upload(tables, image.data(), table_bytes);
  watchdog_ = std::thread([this] { watchdog_loop(); });
  if (options_.start_engine) start();
}

GpuSoftNic::~GpuSoftNic() {
  watchdog_stop_.store(true, std::memory_order_release);
  if (watchdog_.joinable()) watchdog_.join();
  try {
    stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: softnic gpu: %s\n", e.what());
  }
  // Joined before any memory goes: the thread stores to doorbell words in this NIC's allocations.
  if (forwarder_) forwarder_->stop();
  try {
    close_imports();  // before our arena goes: a peer may be mapped into ours, never the reverse
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: softnic gpu: %s\n", e.what());
  }
  DeviceGuard guard(options_.device);
  for (auto& [p, placement] : allocations_) {
    if (arena_ && arena_->owns(p)) continue;
    if (placement == nic::Placement::gpu) cudaFree(p); else cudaFreeHost(p);
  }
  if (arena_) {
    cudaFree(arena_->base());
  } else if (engine_in_device_memory()) {
    cudaFree(engine_tables_);
  } else {
    cudaFreeHost(engine_tables_);
  }
  cudaFree(engine_control_);
  cudaFreeHost(status_);
  cudaStreamDestroy(static_cast<cudaStream_t>(control_stream_));
  cudaStreamDestroy(static_cast<cudaStream_t>(engine_stream_));
  cudaGetLastError();
  std::lock_guard<std::mutex> g(registry_lock);
  registry().erase(nic_id_);
}

GpuSoftNic& GpuSoftNic::find(uint32_t nic_id) {
  std::lock_guard<std::mutex> g(registry_lock);
  auto it = registry().find(nic_id);
  if (it == registry().end()) {
    throw InvalidArgument("no GPU softnic with id " + std::to_string(nic_id) + " in this process");
  }
  return *it->second;
}

std::unique_ptr<nic::ProtectionDomain> GpuSoftNic::create_pd() {
  std::lock_guard<std::mutex> g(lock_);
  return std::make_unique<GpuProtectionDomain>(*this, next_pd_++);
}

void GpuSoftNic::upload(void* engine_address, const void* source, size_t bytes) {
  DeviceGuard guard(options_.device);
  auto stream = static_cast<cudaStream_t>(control_stream_);
  check_cuda(cudaMemcpyAsync(engine_address, source, bytes, cudaMemcpyDefault, stream),
             "control-path copy");
  check_cuda(cudaStreamSynchronize(stream), "control-path copy (synchronise)");
}

void* GpuSoftNic::allocate(size_t bytes, nic::Placement placement) {
  DeviceGuard guard(options_.device);
  const size_t rounded = (bytes + 4095) & ~size_t{4095};
  void* p = nullptr;
  if (placement == nic::Placement::gpu && arena_) {
    {
      std::lock_guard<std::mutex> g(lock_);
      p = arena_->take(rounded, "allocate (Placement::gpu)");
    }
    const std::vector<uint8_t> zeros(rounded, 0);  // a reused block holds old bytes
    upload(p, zeros.data(), rounded);
  } else if (placement == nic::Placement::gpu) {
    check_cuda(cudaMalloc(&p, rounded), "cudaMalloc (Placement::gpu)");
    // Zero-filled by a copy (copy engine), not cudaMemset (a runtime kernel, which could be
    // launched for the first time behind a running engine).
    const std::vector<uint8_t> zeros(rounded, 0);
    upload(p, zeros.data(), rounded);
  } else {
    check_cuda(cudaHostAlloc(&p, rounded, cudaHostAllocMapped | cudaHostAllocPortable),
               "cudaHostAlloc (Placement::host, mapped)");
    std::memset(p, 0, rounded);
  }
  std::lock_guard<std::mutex> g(lock_);
  allocations_.emplace_back(p, placement);
  return p;
}

void GpuSoftNic::release(void* address) {
  nic::Placement placement;
  {
    std::lock_guard<std::mutex> g(lock_);
    auto it = allocations_.begin();
    for (; it != allocations_.end() && it->first != address; ++it) {
    }
    if (it == allocations_.end()) {
      throw InvalidArgument("softnic gpu release: " + hex(reinterpret_cast<uintptr_t>(address)) +
                            " was not allocated by softnic " + std::to_string(nic_id_));
    }
    placement = it->second;
    allocations_.erase(it);
  }
  // cudaFree / cudaFreeHost may synchronise the device, which never returns behind the engine.
  const bool was_running = running();
  if (was_running) stop();
  {
    DeviceGuard guard(options_.device);
    if (arena_ && arena_->owns(address)) {
      std::lock_guard<std::mutex> g(lock_);
      arena_->give_back(address);
    } else if (placement == nic::Placement::gpu) {
      cudaFree(address);
    } else {
      cudaFreeHost(address);
    }
  }
  if (was_running) start();
}

uint32_t GpuSoftNic::allocate_mr_slot() {
  std::lock_guard<std::mutex> g(lock_);
  for (uint32_t i = 0; i < shadow_mrs_.size(); ++i) {
    if (shadow_mrs_[i].valid == 0 && shadow_mrs_[i].key == 0) return i;
  }
  for (uint32_t i = 0; i < shadow_mrs_.size(); ++i) {
    if (shadow_mrs_[i].valid == 0) return i;
  }
  throw Error("softnic " + std::to_string(nic_id_) + ": all " +
              std::to_string(shadow_mrs_.size()) + " memory-key slots are in use");
}

uint32_t GpuSoftNic::allocate_qp_slot() {
  std::lock_guard<std::mutex> g(lock_);
  if (qp_count_ >= options_.max_qps) {
    throw Error("softnic " + std::to_string(nic_id_) + ": all " +
                std::to_string(options_.max_qps) + " QP slots are in use");
  }
  return qp_count_++;
}

void GpuSoftNic::write_mr(uint32_t index, const MrEntry& entry) {
  MrEntry unpublished = entry;
  unpublished.valid = 0;
  upload(&engine_mrs_[index], &unpublished, sizeof unpublished);
  const uint32_t valid = 1;
  upload(&engine_mrs_[index].valid, &valid, sizeof valid);  // published last
  shadow_mrs_[index] = entry;
}

void GpuSoftNic::invalidate_mr(uint32_t index) {
  const uint32_t invalid = 0;
  upload(&engine_mrs_[index].valid, &invalid, sizeof invalid);
  shadow_mrs_[index].valid = 0;
}

void GpuSoftNic::write_qp(uint32_t index, const QpContext& context) {
  QpContext unpublished = context;
  unpublished.state = QP_STATE_RESET;
  upload(&engine_qps_[index], &unpublished, sizeof unpublished);
  // Grow qp_count after the context is in place (slots are handed out in order).
  const uint32_t count = index + 1;
  uint32_t current = 0;
  {
    DeviceGuard guard(options_.device);
    auto stream = static_cast<cudaStream_t>(control_stream_);
    check_cuda(cudaMemcpyAsync(&current, &engine_tables_->qp_count, sizeof current,
                               cudaMemcpyDefault, stream), "read qp_count");
    check_cuda(cudaStreamSynchronize(stream), "read qp_count (synchronise)");
  }
  if (current < count) upload(&engine_tables_->qp_count, &count, sizeof count);
}

void GpuSoftNic::publish_qp_state(uint32_t index, uint32_t state) {
  upload(&engine_qps_[index].state, &state, sizeof state);
}

ModelCounters GpuSoftNic::counters(uint32_t qpn) const {
  const uint32_t index = qpn - QPN_BASE;
  if (qpn < QPN_BASE || index >= qp_count_) {
    throw InvalidArgument("softnic " + std::to_string(nic_id_) + " has no QP " + hex(qpn));
  }
  ModelCounters out{};
  DeviceGuard guard(options_.device);
  auto stream = static_cast<cudaStream_t>(control_stream_);
  check_cuda(cudaMemcpyAsync(&out, &engine_qps_[index].counters, sizeof out, cudaMemcpyDefault,
                             stream), "read counters");
  check_cuda(cudaStreamSynchronize(stream), "read counters (synchronise)");
  return out;
}

ContextCacheCounters GpuSoftNic::context_cache_counters() const {
  ContextCacheCounters out{};
  DeviceGuard guard(options_.device);
  auto stream = static_cast<cudaStream_t>(control_stream_);
  check_cuda(cudaMemcpyAsync(&out, &engine_tables_->context_cache, sizeof out, cudaMemcpyDefault,
                             stream), "read context cache counters");
  check_cuda(cudaStreamSynchronize(stream), "read context cache counters (synchronise)");
  return out;
}

DoorbellForwarder& GpuSoftNic::doorbell_forwarder() {
  std::lock_guard<std::mutex> g(lock_);
  if (!forwarder_) forwarder_ = std::make_unique<DoorbellForwarder>("softnic " + std::to_string(nic_id_));
  return *forwarder_;
}

ForwarderCounters GpuSoftNic::forwarder_counters(uint32_t qpn) const {
  if (!forwarder_) {
    throw InvalidArgument("softnic " + std::to_string(nic_id_) + ": QP " + hex(qpn) +
                          " is not cpu-assisted: this NIC has no doorbell forwarder");
  }
  return forwarder_->counters(qpn);
}

EngineStatus GpuSoftNic::status() const {
  EngineStatus s;
  std::memcpy(&s, const_cast<const EngineStatus*>(status_), sizeof s);
  return s;
}

std::string GpuSoftNic::describe_status() const {
  const EngineStatus s = status();
  const char* phase = s.phase == ENGINE_RUNNING ? "running" :
                      s.phase == ENGINE_EXITED ? "exited" : "not started";
  char line[320];
  std::snprintf(line, sizeof line,
                "softnic %u (%s engine, device %d): phase %s, generation %u, heartbeat %llu, "
                "WQEs executed %llu, last QP 0x%x at consumer index %llu, last error syndrome "
                "0x%x on QP 0x%x",
                nic_id_, to_string(options_.engine), options_.device, phase, s.generation,
                static_cast<unsigned long long>(s.heartbeat),
                static_cast<unsigned long long>(s.wqes_executed), s.current_qpn,
                static_cast<unsigned long long>(s.consumer), s.last_syndrome, s.last_error_qpn);
  return line;
}

void GpuSoftNic::start() {
  if (running()) return;
  if (faulted()) throw Error("softnic gpu: engine faulted earlier: " + describe_status());
  if (imports_closed_) {
    throw Error("softnic " + std::to_string(nic_id_) +
                ": close_imports() unmapped its peers' arenas; the engine cannot restart");
  }
  ++generation_;
  status_store(&status_->phase, uint32_t{ENGINE_NOT_STARTED});
  if (options_.engine == EngineKind::gpu_kernel) {
    launch_engine(options_.engine_ctas, options_.engine_warps_per_cta, false);
  } else {
    if (!host_engine_) host_engine_ = std::make_unique<HostEngine>();
    host_engine_->start(engine_tables_, options_.engine_threads, status_, generation_);
  }
  running_.store(true, std::memory_order_release);
}

void GpuSoftNic::launch_engine(uint32_t ctas, uint32_t warps_per_cta, bool until_idle) {
  DeviceGuard guard(options_.device);
  reserve_local_memory(options_.local_memory_reserve);
  preload_kernel(engine_kernel_function(), "loading the engine kernel");
  auto stream = static_cast<cudaStream_t>(engine_stream_);
  if (!until_idle) {
    check_cuda(launch_resource_probe(generation_, stream), "launching the resource probe");
    check_cuda(cudaStreamSynchronize(stream), "resource probe (local memory, printf FIFO)");
  }
  const uint8_t cleared[24] = {};  // stop flag, WQEs executed, warps exited
  upload(engine_control_, cleared, sizeof cleared);
  EngineLaunch launch{};
  launch.tables = engine_tables_;
  launch.stop = engine_control_;
  launch.status = status_;
  launch.counts = reinterpret_cast<unsigned long long*>(engine_control_ + 2);
  launch.generation = generation_;
  launch.warps = ctas * warps_per_cta;
  launch.until_idle = until_idle ? 1 : 0;
  check_cuda(launch_engine_kernel(launch, ctas, warps_per_cta, stream), "launching the engine kernel");
}

// Waits (bounded) for the engine kernel to return; a failed kernel or a timeout marks the engine
// faulted and throws with its status.
void GpuSoftNic::wait_engine_exit(const char* during, uint64_t timeout_ns) {
  DeviceGuard guard(options_.device);
  auto stream = static_cast<cudaStream_t>(engine_stream_);
  const auto began = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(stream);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) {
      faulted_.store(true, std::memory_order_release);
      throw Error(std::string("softnic gpu: the engine kernel failed in ") + during + " (" +
                  cuda_message(q) + "): " + describe_status());
    }
    const uint64_t waited = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - began).count();
    if (waited > timeout_ns) {
      faulted_.store(true, std::memory_order_release);
      throw Error(std::string("softnic gpu: the engine kernel did not return in ") + during +
                  " within " + std::to_string(waited / 1000000) + " ms: " + describe_status());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void GpuSoftNic::drain(uint64_t timeout_ns) {
  if (running()) throw Error("softnic gpu: drain() needs the engine stopped: " + describe_status());
  if (options_.engine != EngineKind::gpu_kernel) {
    throw InvalidArgument("softnic gpu: drain() runs the engine kernel; this softnic's engine is a host thread");
  }
  ++generation_;
  launch_engine(1, 1, true);  // one warp: "a pass found no work" is then one warp's verdict
  wait_engine_exit("drain()", timeout_ns);
}

void GpuSoftNic::stop(uint64_t timeout_ns) {
  if (!running()) return;
  if (options_.engine == EngineKind::host_thread) {
    host_engine_->stop();
    running_.store(false, std::memory_order_release);
    return;
  }
  // A copy on the control stream runs beside the engine kernel (the copy engine needs no SM).
  const uint32_t stop = 1;
  upload(engine_control_, &stop, sizeof stop);
  try {
    wait_engine_exit("stop()", timeout_ns);
  } catch (...) {
    // A kernel that failed has ended; one that timed out may still run, and stays "running" so
    // that nothing frees memory behind it.
    DeviceGuard guard(options_.device);
    if (cudaStreamQuery(static_cast<cudaStream_t>(engine_stream_)) != cudaErrorNotReady) {
      running_.store(false, std::memory_order_release);
    }
    throw;
  }
  running_.store(false, std::memory_order_release);
  print_engine_phases(static_cast<cudaStream_t>(control_stream_));
}

void GpuSoftNic::watchdog_loop() {
  // A new thread's current device is 0: restoring it after each DeviceGuard would create a
  // context on device 0, in a process that otherwise never touches it (the two-process layout).
  cudaSetDevice(options_.device);
  uint64_t last_heartbeat = ~0ull;
  auto last_change = std::chrono::steady_clock::now();
  bool reported = false;
  while (!watchdog_stop_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!running()) {
      last_change = std::chrono::steady_clock::now();
      continue;
    }
    if (options_.engine == EngineKind::gpu_kernel && !reported) {
      DeviceGuard guard(options_.device);
      const cudaError_t q = cudaStreamQuery(static_cast<cudaStream_t>(engine_stream_));
      if (q != cudaSuccess && q != cudaErrorNotReady) {
        faulted_.store(true, std::memory_order_release);
        std::fprintf(stderr, "dissect: softnic gpu watchdog: engine kernel failed (%s): %s\n",
                     cuda_message(q).c_str(), describe_status().c_str());
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
    const uint64_t silent =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_change).count();
    if (!reported && silent > options_.watchdog_stall_ns) {
      std::fprintf(stderr, "dissect: softnic gpu watchdog: no engine heartbeat for %llu ms: %s\n",
                   static_cast<unsigned long long>(silent / 1000000), describe_status().c_str());
      reported = true;
    }
  }
}

}  // namespace dissect::softnic
