// The CUDA runtime helpers of the GPU engine (gpu_engine.h): eager module loading, kernel
// preloading, the local-memory reservation, peer access.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"

namespace dissect::softnic {
namespace {

// Set before main(): the first CUDA call of the process (ours or the user's) then creates its
// context with eager module loading. gpu_runtime_init() repeats it for programs that load the
// library late.
struct EagerModuleLoading {
  EagerModuleLoading() { setenv("CUDA_MODULE_LOADING", "EAGER", 1); }
} eager_module_loading;

}  // namespace

void check_cuda(int status, const char* what) {
  dissect::check_cuda(static_cast<cudaError_t>(status), std::string("softnic gpu: ") + what);
}

int gpu_runtime_init() {
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  if (loading == nullptr || std::strcmp(loading, "EAGER") != 0) setenv("CUDA_MODULE_LOADING", "EAGER", 1);
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
                "to grow local memory; raise SoftNicOptions::local_memory_reserve");
  }
}

// Grows the reservation now, while no engine of ours runs on the device.
void reserve_local_memory(size_t bytes) {
  size_t current = 0;
  check_cuda(cudaDeviceGetLimit(&current, cudaLimitStackSize), "reading cudaLimitStackSize");
  if (current < bytes) check_cuda(cudaDeviceSetLimit(cudaLimitStackSize, bytes), "reserving local memory");
}

bool enable_peer_access(int a, int b) {
  if (a == b) return true;
  int ab = 0, ba = 0;
  if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess || cudaDeviceCanAccessPeer(&ba, b, a) != cudaSuccess ||
      !ab || !ba) {
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

}  // namespace dissect::softnic
