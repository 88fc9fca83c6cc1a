// The MoE client on a GPU: R ranks in one process on the softnic GPU engine, warps running the
// dispatch and combine bodies the CPU tier drives with host threads (bench/gpu/moe_rig.h). Each
// case runs a few rounds and checks every received token and every combined output against the
// host reference.
//
//   moe_gpu_test <case>   exit 0 pass, 1 fail, 77 skipped (reason on stderr)
#include <cstdio>
#include <cstring>
#include <exception>

#include "dissect/softnic/gpu_engine.h"
#include "moe_rig.h"

namespace gpu = dissect::bench::gpu;
namespace moe = dissect::moe;

namespace {

constexpr int SKIP = 77;

gpu::GpuMoeOptions small_case(uint32_t ranks, uint32_t tokens, double masked) {
  gpu::GpuMoeOptions o;
  o.shape.hidden = 512;
  o.shape.ranks = ranks;
  o.shape.experts = 4 * ranks;
  o.shape.top_k = 4;
  o.shape.tokens = tokens;
  o.shape.max_tokens = tokens;
  o.routing = {17, masked};
  o.warps_per_rank = 8;
  o.engine_ctas = 4;
  o.l2_flush_bytes = 1u << 20;
  return o;
}

int run(const gpu::GpuMoeOptions& o, uint32_t rounds) {
  gpu::GpuMoeRig rig(o);
  for (uint32_t i = 0; i < rounds; ++i) {
    const gpu::MoeSample s = rig.run_once();
    std::printf("round %u: dispatch %.1f us, combine %.1f us\n", i, s.dispatch_us, s.combine_us);
  }
  moe::CheckReport d, c;
  rig.validate(d, c);
  std::printf("dispatch: %llu tokens checked, %llu mismatches; combine: %llu outputs, %llu mismatches\n",
              static_cast<unsigned long long>(d.checked), static_cast<unsigned long long>(d.mismatches),
              static_cast<unsigned long long>(c.checked), static_cast<unsigned long long>(c.mismatches));
  for (const auto& line : d.first) std::printf("  %s\n", line.c_str());
  for (const auto& line : c.first) std::printf("  %s\n", line.c_str());
  return d.ok() && c.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: moe_gpu_test small_four_ranks|one_rank|small_four_ranks_proxy|deepseek_v3_eight_ranks\n");
    return 2;
  }
  if (dissect::softnic::gpu_runtime_init() == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return SKIP;
  }
  try {
    if (!std::strcmp(argv[1], "small_four_ranks")) return run(small_case(4, 16, 0.1), 3);
    if (!std::strcmp(argv[1], "one_rank")) return run(small_case(1, 8, 0.0), 2);
    if (!std::strcmp(argv[1], "small_four_ranks_proxy")) {
      gpu::GpuMoeOptions o = small_case(4, 16, 0.1);
      o.transport = gpu::MoeTransportKind::mini_proxy;
      return run(o, 3);
    }
    if (!std::strcmp(argv[1], "deepseek_v3_eight_ranks")) {
      gpu::GpuMoeOptions o;  // hidden 7,168, top-8 of 256, 128 tokens, 8 ranks, one warp a token
      o.routing = {1, 0.05};
      o.warps_per_rank = 128;
      return run(o, 2);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe_gpu_test %s: %s\n", argv[1], e.what());
    return 1;
  }
  std::fprintf(stderr, "moe_gpu_test: unknown case '%s'\n", argv[1]);
  return 2;
}
