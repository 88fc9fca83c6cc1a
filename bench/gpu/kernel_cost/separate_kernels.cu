// gpu-kernel-cost's callers of the separately compiled sends (-rdc; separate_send.cu), for each
// caller, live-value count and path; kernel_cost.cu launches them through these pointers.
#include "../kernel_cost_kernel.cuh"

namespace dissect::bench::gpu {
namespace {

template <Caller C, uint32_t L>
const void* of_path(Path p) {
  return p == Path::mini_gda
             ? reinterpret_cast<const void*>(&kernel_cost<C, L, Build::separate, Path::mini_gda>)
             : reinterpret_cast<const void*>(&kernel_cost<C, L, Build::separate, Path::mini_proxy>);
}

template <uint32_t L>
const void* of_caller(Caller c, Path p) {
  return c == Caller::compute ? of_path<Caller::compute, L>(p) : of_path<Caller::stream, L>(p);
}

}  // namespace

const void* separate_kernel_cost(Caller caller, uint32_t live, Path path) {
  if (live == 8) return of_caller<8>(caller, path);
  if (live == 16) return of_caller<16>(caller, path);
  return nullptr;
}

}  // namespace dissect::bench::gpu
