// The CUDA side of the provider (compiled only when DISSECT_HAVE_CUDA).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "dissect/common/cuda.h"
#include "dissect/providers/mlx5/gpu_memory.h"

namespace dissect::mlx5provider {
namespace {

// Driver-API entry points through the runtime, so nothing links libcuda.so.1: a binary built with
// CUDA must still start (and skip its GPU work) on a machine with no NVIDIA driver, such as CI.
template <typename Function>
Function driver_function(const char* symbol) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    throw std::runtime_error(std::string("CUDA driver entry point ") + symbol + " not found");
  }
  return reinterpret_cast<Function>(function);
}

}  // namespace

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void* gpu_allocate(size_t bytes, size_t alignment) {
  // cudaMalloc returns 256 B alignment; over-allocate and align up as NVSHMEM does (64 KiB pages).
  void* raw = nullptr;
  check_cuda(cudaMalloc(&raw, bytes + alignment), "cudaMalloc");
  const uintptr_t aligned = (reinterpret_cast<uintptr_t>(raw) + alignment - 1) & ~(alignment - 1);
  // Memory the NIC writes must not be reordered against CUDA copies: synchronous memops.
  unsigned int one = 1;
  driver_function<decltype(&cuPointerSetAttribute)>("cuPointerSetAttribute")(
      &one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, reinterpret_cast<CUdeviceptr>(raw));
  check_cuda(cudaMemset(raw, 0, bytes + alignment), "cudaMemset");
  // The aligned pointer is what callers see; keep the raw one retrievable from cudaPointerGetAttributes.
  return reinterpret_cast<void*>(aligned);
}

void gpu_free(void* address) {
  if (!address) return;
  CUdeviceptr base = 0;
  size_t size = 0;
  const auto get_range = driver_function<decltype(&cuMemGetAddressRange)>("cuMemGetAddressRange");
  if (get_range(&base, &size, reinterpret_cast<CUdeviceptr>(address)) == CUDA_SUCCESS) {
    cudaFree(reinterpret_cast<void*>(base));
  }
}

void gpu_fill(void* address, int byte, size_t bytes) {
  check_cuda(cudaMemset(address, byte, bytes), "cudaMemset");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // setup time only, no kernel runs
}

void* host_register_mapped(void* address, size_t bytes) {
  const cudaError_t rc =
      cudaHostRegister(address, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
  // rdma-core packs several DBRs in one page: a second registration of it is expected (DOCA too).
  if (rc != cudaErrorHostMemoryAlreadyRegistered) check_cuda(rc, "cudaHostRegister(Mapped)");
  if (rc == cudaErrorHostMemoryAlreadyRegistered) cudaGetLastError();
  void* device = nullptr;
  check_cuda(cudaHostGetDevicePointer(&device, address, 0), "cudaHostGetDevicePointer");
  return device;
}

void host_unregister(void* address) { cudaHostUnregister(address); }

void* map_io_memory(void* address, size_t bytes, std::string* why) {
  const cudaError_t rc = cudaHostRegister(
      address, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory);
  if (rc != cudaSuccess && rc != cudaErrorHostMemoryAlreadyRegistered) {
    cudaGetLastError();
    if (why) *why = std::string(cudaGetErrorName(rc)) + " (" + std::to_string(static_cast<int>(rc)) + ")";
    return nullptr;
  }
  void* device = nullptr;
  if (cudaHostGetDevicePointer(&device, address, 0) != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = "cudaHostGetDevicePointer failed on the UAR mapping";
    return nullptr;
  }
  return device;
}

int gpu_dmabuf_fd(void* address, size_t bytes) {
  int fd = -1;
  const auto get_handle = driver_function<decltype(&cuMemGetHandleForAddressRange)>(
      "cuMemGetHandleForAddressRange");
  const CUresult rc = get_handle(&fd, reinterpret_cast<CUdeviceptr>(address), bytes,
                                 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  return rc == CUDA_SUCCESS ? fd : -1;
}

}  // namespace dissect::mlx5provider
