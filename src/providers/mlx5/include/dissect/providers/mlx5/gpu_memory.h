// The CUDA calls the mlx5 provider needs, behind plain functions so that everything else in the
// provider compiles without CUDA. Without a CUDA build each one throws (or reports "unavailable").
#pragma once

#include <cstddef>
#include <string>

namespace dissect::mlx5provider {

bool cuda_available();

// Device memory, zero-filled, aligned to `alignment` (64 KiB for queues: the GPU page size).
void* gpu_allocate(size_t bytes, size_t alignment);
void gpu_free(void* address);
void gpu_fill(void* address, int byte, size_t bytes);

// Pins host memory and returns the GPU's address for it (cudaHostRegisterMapped).
void* host_register_mapped(void* address, size_t bytes);
void host_unregister(void* address);

// Maps an MMIO range (a UAR doorbell register) into the GPU (cudaHostRegisterIoMemory). Returns
// the GPU address, or nullptr with `why` filled (e.g. "cudaErrorNotPermitted (800)": the driver
// refuses MMIO peer mappings to non-root users without PeerMappingOverride).
void* map_io_memory(void* address, size_t bytes, std::string* why);

// A DMA-BUF file descriptor for a GPU range (cuMemGetHandleForAddressRange), or -1.
int gpu_dmabuf_fd(void* address, size_t bytes);

}  // namespace dissect::mlx5provider
