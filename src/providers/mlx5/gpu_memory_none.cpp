// Built without CUDA: every GPU operation is unavailable, and says so.
#include <stdexcept>

#include "dissect/providers/mlx5/gpu_memory.h"

namespace dissect::mlx5provider {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw std::runtime_error(std::string(what) + ": this build has no CUDA (DISSECT_WITH_CUDA)");
}

}  // namespace

bool cuda_available() { return false; }
void* gpu_allocate(size_t, size_t) { no_cuda("gpu_allocate"); }
void gpu_free(void*) {}
void gpu_fill(void*, int, size_t) { no_cuda("gpu_fill"); }
// Without CUDA nothing maps host memory into a GPU: the host address is the only address.
void* host_register_mapped(void* address, size_t) { return address; }
void host_unregister(void*) {}
void* map_io_memory(void*, size_t, std::string* why) {
  if (why) *why = "no CUDA in this build";
  return nullptr;
}
int gpu_dmabuf_fd(void*, size_t) { return -1; }

}  // namespace dissect::mlx5provider
