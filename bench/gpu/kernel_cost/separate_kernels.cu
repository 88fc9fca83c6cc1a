// gpu-kernel-cost's callers of the separately compiled send (-rdc; separate_send.cu), for each
// caller and live-value count; kernel_cost.cu launches them through these pointers.
#include "../kernel_cost_kernel.cuh"

namespace dissect::bench::gpu {

const void* separate_kernel_cost(Caller caller, uint32_t live) {
  const bool compute = caller == Caller::compute;
  if (live == 8) {
    return compute ? reinterpret_cast<const void*>(&kernel_cost<Caller::compute, 8, Build::separate>)
                   : reinterpret_cast<const void*>(&kernel_cost<Caller::stream, 8, Build::separate>);
  }
  if (live == 16) {
    return compute ? reinterpret_cast<const void*>(&kernel_cost<Caller::compute, 16, Build::separate>)
                   : reinterpret_cast<const void*>(&kernel_cost<Caller::stream, 16, Build::separate>);
  }
  return nullptr;
}

}  // namespace dissect::bench::gpu
