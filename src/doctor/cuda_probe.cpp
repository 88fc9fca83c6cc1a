#include "cuda_probe.h"

#include <dlfcn.h>

namespace dissect::doctor {
namespace {

// Driver API signatures (cuda.h); CUresult and CUdevice are ints.
using cuInit_t = int (*)(unsigned int);
using cuDeviceGetCount_t = int (*)(int*);
using cuDriverGetVersion_t = int (*)(int*);
using cuDeviceGet_t = int (*)(int*, int);
using cuDeviceGetAttribute_t = int (*)(int*, int, int);
using cuDeviceGetPCIBusId_t = int (*)(char*, int, int);

constexpr int CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124;

template <typename F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

void probe_devices(void* lib, CudaProbe& probe) {
  auto get = symbol<cuDeviceGet_t>(lib, "cuDeviceGet");
  auto attribute = symbol<cuDeviceGetAttribute_t>(lib, "cuDeviceGetAttribute");
  auto bus_id = symbol<cuDeviceGetPCIBusId_t>(lib, "cuDeviceGetPCIBusId");
  if (!get || !attribute || !bus_id) return;
  for (int i = 0; i < probe.device_count; ++i) {
    int device = 0;
    if (get(&device, i) != 0) continue;
    int dma_buf = 0;
    if (attribute(&dma_buf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) != 0) dma_buf = 0;
    probe.dma_buf_supported.push_back(dma_buf);
    char id[32] = {};
    if (bus_id(id, sizeof(id), device) == 0) probe.pci_bus_ids.emplace_back(id);
  }
}

}  // namespace

CudaProbe probe_cuda_driver() {
  CudaProbe probe;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return probe;
  probe.library_found = true;
  auto init = symbol<cuInit_t>(lib, "cuInit");
  auto count = symbol<cuDeviceGetCount_t>(lib, "cuDeviceGetCount");
  auto version = symbol<cuDriverGetVersion_t>(lib, "cuDriverGetVersion");
  if (init && count) {
    probe.init_result = init(0);
    if (probe.init_result == 0 && count(&probe.device_count) != 0) probe.device_count = 0;
    if (version) version(&probe.driver_version);
    if (probe.init_result == 0) probe_devices(lib, probe);
  }
  // The library stays loaded: unloading the CUDA driver mid-process is not supported.
  return probe;
}

}  // namespace dissect::doctor
