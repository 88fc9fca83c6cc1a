// Cross-process SoftNic (GPU engine): the exported arena and the imported peers (softnic/ipc.h).
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "engine/execute.h"
#include "dissect/softnic/gpu_engine.h"
#include "ipc_arena.h"
#include "table_memory.h"

namespace dissect::softnic {
namespace {

// Alias ids for imported NICs: apart from every in-process id (SoftNic's count from 0),
// process-wide so an alias never names two imports.
std::atomic<uint32_t> next_alias{0x80000001u};


std::string describe(const IpcExport& peer) {
  return "softnic " + std::to_string(peer.nic_id) + " of process " + std::to_string(peer.pid) +
         " (its device " + std::to_string(peer.device) + ", arena " +
         std::to_string(peer.arena_bytes) + " B at " + hex(peer.arena_base) + ")";
}

}  // namespace

void SoftNic::open_ipc_arena() {
  const std::string owner = "softnic on device " + std::to_string(options_.device);
  DeviceGuard guard(options_.device);
  void* base = nullptr;
  check_cuda(cudaMalloc(&base, options_.ipc_arena_bytes), "IPC arena (cudaMalloc)");
  cudaIpcMemHandle_t handle{};
  const cudaError_t e = cudaIpcGetMemHandle(&handle, base);
  if (e != cudaSuccess) {
    cudaFree(base);
    check_cuda(e, "exporting the IPC arena (cudaIpcGetMemHandle)");
  }
  static_assert(sizeof(handle) == sizeof(ipc_handle_));
  std::memcpy(ipc_handle_, &handle, sizeof handle);
  arena_ = std::make_unique<IpcArena>(static_cast<uint8_t*>(base), options_.ipc_arena_bytes,
                                      owner);
}

IpcExport SoftNic::ipc_export() const {
  if (!arena_) {
    throw InvalidArgument("softnic " + std::to_string(nic_id_) +
                          " has no IPC arena: create it with SoftNicOptions::ipc_arena_bytes "
                          "> 0 to connect it to another process");
  }
  IpcExport out;
  out.nic_id = nic_id_;
  out.device = options_.device;
  out.pid = static_cast<int32_t>(getpid());
  out.arena_base = reinterpret_cast<uintptr_t>(arena_->base());
  out.arena_bytes = arena_->bytes();
  out.tables = reinterpret_cast<uintptr_t>(tables_);
  std::memcpy(out.handle, ipc_handle_, sizeof out.handle);
  return out;
}

uint32_t SoftNic::import_peer(const IpcExport& peer) {
  const std::string me = "softnic " + std::to_string(nic_id_) + " (device " +
                         std::to_string(options_.device) + ")";
  if (peer.magic != IPC_EXPORT_MAGIC || peer.version != IPC_EXPORT_VERSION) {
    throw Error(me + ": peer export has magic " + hex(peer.magic) + " version " +
                std::to_string(peer.version) + ", expected " + hex(IPC_EXPORT_MAGIC) + " version " +
                std::to_string(IPC_EXPORT_VERSION) + " (built from another commit?)");
  }
  if (options_.engine != EngineKind::gpu_kernel) {
    throw InvalidArgument(me + ": importing " + describe(peer) +
                          " needs the GPU engine (a host thread cannot reach GPU memory)");
  }
  if (imports_closed_) throw Error(me + ": close_imports() was called; cannot import " + describe(peer));
  if (peer.pid == static_cast<int32_t>(getpid())) {
    throw InvalidArgument(me + ": " + describe(peer) +
                          " is in this process: connect to it by its nic_id instead");
  }
  if (peer.tables < peer.arena_base || peer.arena_bytes < sizeof(NicTables) ||
      peer.tables - peer.arena_base > peer.arena_bytes - sizeof(NicTables)) {
    throw Error(me + ": " + describe(peer) + " has its tables at " + hex(peer.tables) +
                ", outside its arena");
  }
  for (const Import& i : imports_) {
    if (i.peer.pid == peer.pid && i.peer.arena_base == peer.arena_base) return i.alias;
  }

  // Opening maps memory and may enable peer access: never behind our running engine.
  const bool was_running = running();
  if (was_running) stop();
  DeviceGuard guard(options_.device);
  cudaIpcMemHandle_t handle{};
  std::memcpy(&handle, peer.handle, sizeof handle);
  void* mapped = nullptr;
  const cudaError_t e = cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (was_running) start();
    throw Error(me + ": opening the IPC arena of " + describe(peer) +
                " failed: " + cuda_error_text(e) +
                "; the processes need different GPUs with peer access");
  }
  Import import{};
  import.alias = next_alias.fetch_add(1);
  import.peer = peer;
  import.mapped = mapped;
  // Unsigned wrap-around: the delta is negative when the mapping lies below the owner's base.
  import.window = RemoteWindow{peer.arena_base, peer.arena_bytes,
                               reinterpret_cast<uintptr_t>(mapped) - peer.arena_base};
  std::string failure;
  try {
    memory_->read(&import.tables, through(import.window, reinterpret_cast<const NicTables*>(peer.tables)),
                  sizeof(NicTables));
    if (import.tables.nic_id != peer.nic_id) failure = "name softnic " + std::to_string(import.tables.nic_id);
  } catch (const std::exception& e) {
    failure = std::string("failed: ") + e.what();
  }
  if (!failure.empty()) {
    cudaIpcCloseMemHandle(mapped);
    if (was_running) start();
    throw Error(me + ": the tables of " + describe(peer) + " read through the mapping " + failure);
  }
  imports_.push_back(import);
  if (was_running) start();
  return import.alias;
}

void SoftNic::close_imports() {
  if (imports_.empty()) return;
  stop();
  imports_closed_ = true;  // QPs connected through the imports now point at unmapped memory
  DeviceGuard guard(options_.device);
  std::string failures;
  for (const Import& i : imports_) {
    const cudaError_t e = cudaIpcCloseMemHandle(i.mapped);
    if (e != cudaSuccess) {
      cudaGetLastError();
      failures += " " + describe(i.peer) + ": " + cuda_error_text(e) + ";";
    }
  }
  imports_.clear();
  if (!failures.empty()) {
    throw Error("softnic " + std::to_string(nic_id_) + ": closing imported arenas failed:" +
                failures);
  }
}

}  // namespace dissect::softnic
