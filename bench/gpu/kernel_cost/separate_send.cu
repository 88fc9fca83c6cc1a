// gpu-kernel-cost's separately compiled send: the same body as the inlined build
// (kernel_cost_kernel.cuh), in its own translation unit, compiled with -rdc, so that the callers
// in separate_kernels.cu reach it through a real call (the ABI: live values saved around it).
#include "../kernel_cost_kernel.cuh"

namespace dissect::bench::gpu {

__device__ __noinline__ uint32_t send_message_separate(const LoopbackTarget& t, uint32_t block,
                                                       uint32_t message, uint32_t bytes,
                                                       uint32_t wait) {
  return send_message_body(t, block, message, bytes, wait);
}

}  // namespace dissect::bench::gpu
