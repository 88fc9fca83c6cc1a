// The NIC model's fuzz campaign: seeded cases (tests/support/nic_model_fuzz.h) through the engine's
// execute path (service_qp) on the synthetic rig, each step checked against the oracle's shadow
// byte for byte and field for field.
//
//   nic_model_fuzz [--wqes N] [--seed S] [--case K]
//     --wqes N   stop after N WQEs consumed by the engine (default 100000)
//     --seed S   campaign seed (default 1); case K of seed S is always the same case
//     --case K   run case K alone and print what it did
// Prints the counts and exits 1 on any mismatch, guard change or flush violation. A crash or a
// sanitizer report ends the process: scripts/fuzz.sh counts those.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/execute.h"
#include "support/nic_model_fuzz.h"
#include "support/nic_model_fuzz_check.h"

namespace sn = dissect::softnic;
namespace m = dissect::mlx5;
using dissect::testing::NicModelRig;
namespace fz = dissect::testing::fuzz;

namespace {

void run_case(uint64_t seed, uint64_t c, NicModelRig& rig, std::vector<uint8_t>& shadow, fz::Tally& t,
              bool verbose) {
  fz::Rng rng{seed * 0x2545f4914f6cdd1dull ^ (c + 1) * 0x9e3779b97f4a7c15ull};
  static uint8_t payload[m::RC_MAX_INLINE_BY_DS];
  static fz::FuzzCase fuzz_case;
  static fz::Oracle oracle;
  fz::generate(rng, rig, fuzz_case, payload);
  std::memcpy(shadow.data(), rig.base, rig.arena_bytes);
  oracle.start(rig, shadow.data());
  if (verbose) {
    std::printf("case %" PRIu64 ": first WQEBB %" PRIu64 ", %u WQEs, %u steps, disruption %u, %u receives\n",
                c, fuzz_case.first_wqebb, fuzz_case.wqes, fuzz_case.steps, fuzz_case.disruption,
                fuzz_case.posted_receives);
  }
  for (uint32_t s = 0; s < fuzz_case.steps; ++s) {
    const fz::Step& step = fuzz_case.step[s];
    *rig.doorbell_register() = step.doorbell;
    std::memcpy(shadow.data() + rig.doorbell.offset, &step.doorbell, 8);
    const uint32_t cqes_before = oracle.written_count;
    const uint32_t predicted = oracle.service(step.budget);
    if (oracle.unsafe) {  // would reach memory outside the arena: not a case for this rig
      ++t.skipped;
      return;
    }
    const uint32_t executed = sn::service_qp(rig.requester(), rig.nic, step.budget);
    fz::adopt_timestamps(rig, shadow.data(), oracle, cqes_before);
    if (verbose) std::printf("  step %u: doorbell %016" PRIx64 " budget %u: executed %u (oracle %u)\n", s,
                             step.doorbell, step.budget, executed, predicted);
    const bool same_bytes = fz::compare_arena(rig, shadow.data(), t, c, s);
    const bool same_state = fz::compare_state(rig.qps[NicModelRig::kRequester], rig.qps[NicModelRig::kResponder],
                                              oracle.qp, executed, predicted, t, c, s);
    if (!same_bytes || !same_state) break;
  }
  t.wqes += rig.qps[NicModelRig::kRequester].counters.wqes_executed;
  ++t.cases;
  fz::check_flushes(rig, t, c);
}

uint64_t parse(const char* flag, const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') {
    std::fprintf(stderr, "nic_model_fuzz: %s wants a decimal number, got '%s'\n", flag, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t wqes = 100000, seed = 1, only_case = UINT64_MAX;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "nic_model_fuzz: %s wants a value\n", flag.c_str());
      return 2;
    }
    if (flag == "--wqes") wqes = parse("--wqes", argv[++i]);
    else if (flag == "--seed") seed = parse("--seed", argv[++i]);
    else if (flag == "--case") only_case = parse("--case", argv[++i]);
    else {
      std::fprintf(stderr, "nic_model_fuzz: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  static NicModelRig rig;
  std::vector<uint8_t> shadow(rig.arena_bytes);
  fz::Tally t;
  if (only_case != UINT64_MAX) {
    run_case(seed, only_case, rig, shadow, t, true);
  } else {
    for (uint64_t c = 0; t.wqes < wqes; ++c) run_case(seed, c, rig, shadow, t, false);
  }
  return fz::print_summary("nic_model_fuzz", seed, t);
}
