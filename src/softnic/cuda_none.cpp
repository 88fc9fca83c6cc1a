// A build without CUDA (DISSECT_WITH_CUDA=OFF): the GPU strategies of SoftNic and the GPU engine's
// runtime helpers answer that they are not built, naming what asked for them.
#include <string>

#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "engine_runner.h"
#include "gpu_slot.h"
#include "table_memory.h"

namespace dissect::softnic {
namespace {

[[noreturn]] void not_built(const std::string& what) {
  throw Error(what + ": this build has no CUDA (configured with DISSECT_WITH_CUDA=OFF or without a toolkit)");
}

}  // namespace

std::unique_ptr<TableMemory> cuda_table_memory(const SoftNicOptions& options, IpcArena*) {
  not_built("softnic on CUDA device " + std::to_string(options.device));
}
std::unique_ptr<EngineRunner> gpu_runner(const SoftNicOptions& options, uint32_t, TableMemory&) {
  not_built("softnic GPU engine on device " + std::to_string(options.device));
}

int gpu_runtime_init() { return 0; }
void preload_kernel(const void*, const char* what) { not_built(std::string("preload_kernel (") + what + ")"); }
void reserve_local_memory(size_t) { not_built("reserve_local_memory"); }
bool enable_peer_access(int a, int b) { return a == b; }
void check_cuda(int status, const char* what) {
  if (status != 0) not_built(std::string(what) + " returned CUDA status " + std::to_string(status));
}

void SoftNic::open_ipc_arena() { not_built("softnic IPC arena"); }
IpcExport SoftNic::ipc_export() const { not_built("softnic " + std::to_string(nic_id_) + ": ipc_export"); }
uint32_t SoftNic::import_peer(const IpcExport&) { not_built("softnic " + std::to_string(nic_id_) + ": import_peer"); }
void SoftNic::close_imports() {}  // nothing was imported

GpuQpSlot::~GpuQpSlot() = default;
void GpuQpSlot::open(nic::Nic&, const std::string& device_name, int, int, uint32_t, uint32_t) {
  not_built("telemetry slot of " + device_name);
}

}  // namespace dissect::softnic
