// gpu-kernel-cost's separately compiled sends (mini-gda and mini-proxy): the same body as the inlined build
// (kernel_cost_kernel.cuh), in its own translation unit, compiled with -rdc, so that the callers
// in separate_kernels.cu reach it through a real call (the ABI: live values saved around it).
#include "../kernel_cost_kernel.cuh"

namespace dissect::bench::gpu {

__device__ __noinline__ uint32_t send_message_separate(const LoopbackTarget& t, uint32_t block,
                                                       uint32_t message, uint32_t bytes,
                                                       uint32_t wait) {
  return send_message_body(t, block, message, bytes, wait);
}

__device__ __noinline__ uint32_t send_proxy_separate(const proxy::RingHandle& ring,
                                                     unsigned long long* last_index, uint32_t block,
                                                     uint32_t slot_bytes, uint32_t bytes,
                                                     uint32_t wait) {
  return send_proxy_body(ring, last_index, block, slot_bytes, bytes, wait);
}

}  // namespace dissect::bench::gpu
