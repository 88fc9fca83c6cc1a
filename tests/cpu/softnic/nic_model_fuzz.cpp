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

#include "dissect/softnic/execute.h"
#include "support/nic_model_fuzz.h"

namespace sn = dissect::softnic;
namespace m = dissect::mlx5;
using dissect::testing::NicModelRig;
namespace fz = dissect::testing::fuzz;

namespace {

struct Tally {
  uint64_t cases = 0, skipped = 0, wqes = 0, error_cqes = 0, success_cqes = 0;
  uint64_t mismatches = 0, guard_changes = 0, flush_violations = 0, silent_skips = 0;
  uint64_t by_syndrome[256] = {};
};

constexpr int kReportLimit = 8;
int reports = 0;

const char* where(const NicModelRig& rig, uint64_t offset) {
  auto in = [&](NicModelRig::Span s) { return offset >= s.offset && offset < s.offset + s.bytes; };
  if (in(rig.sq)) return "send ring";
  if (in(rig.send_cq)) return "send CQ";
  if (in(rig.recv_cq)) return "receive CQ";
  if (in(rig.rq)) return "receive queue";
  if (in(rig.dbrec)) return "dbrec";
  if (in(rig.doorbell)) return "doorbell";
  for (uint32_t r = 0; r < NicModelRig::kRegions; ++r) {
    if (in(rig.region[r])) return r == 0 ? "region 0" : r == 1 ? "region 1" : "region 2";
  }
  return "guard band";
}

void report(uint64_t case_index, uint32_t step, const std::string& what) {
  if (reports++ < kReportLimit) {
    std::fprintf(stderr, "case %" PRIu64 " step %u: %s\n", case_index, step, what.c_str());
  }
}

// The engine's CQEs carry its clock: take those bytes into the shadow before comparing. An error
// CQE's byte 55 is its syndrome (written over the timestamp's last byte), so it stays predicted.
void adopt_timestamps(const NicModelRig& rig, uint8_t* shadow, const fz::Oracle& oracle, uint32_t from) {
  for (uint32_t i = from; i < oracle.written_count; ++i) {
    const fz::WrittenCqe& w = oracle.written[i];
    const uint64_t offset = (w.send ? rig.send_cq.offset : rig.recv_cq.offset) +
                            (w.slot % NicModelRig::kCqes) * m::MLX5_CQE_SIZE;
    const int last = w.error ? 54 : 55;
    for (int b = 48; b <= last; ++b) shadow[offset + b] = rig.base[offset + b];
  }
}

bool compare_arena(const NicModelRig& rig, const uint8_t* shadow, Tally& t, uint64_t c, uint32_t step) {
  if (std::memcmp(rig.base, shadow, rig.arena_bytes) == 0) return true;
  uint64_t first = rig.arena_bytes, differing = 0;
  for (uint64_t i = 0; i < rig.arena_bytes; ++i) {
    if (rig.base[i] == shadow[i]) continue;
    ++differing;
    if (first == rig.arena_bytes) first = i;
    if (rig.writable(i)) ++t.mismatches; else ++t.guard_changes;
  }
  char line[256];
  std::snprintf(line, sizeof line, "%" PRIu64 " bytes differ from the oracle, first at offset %" PRIu64
                " (%s): engine 0x%02x, oracle 0x%02x", differing, first, where(rig, first),
                rig.base[first], shadow[first]);
  report(c, step, line);
  return false;
}

bool compare_state(const NicModelRig& rig, const fz::OracleQp& o, uint32_t executed, uint32_t predicted,
                   Tally& t, uint64_t c, uint32_t step) {
  const sn::QpContext& q = rig.qps[NicModelRig::kRequester];
  const sn::QpContext& p = rig.qps[NicModelRig::kResponder];
  struct Field { const char* name; uint64_t engine, oracle; };
  const Field fields[] = {
      {"executed", executed, predicted},
      {"state", q.state, o.state},
      {"sq_consumer", q.sq_consumer, o.sq_consumer},
      {"sq_target", q.sq_target, o.sq_target},
      {"last_doorbell", q.last_doorbell, o.last_doorbell},
      {"doorbells", q.counters.doorbells, o.doorbells},
      {"bad_doorbells", q.counters.bad_doorbells, o.bad_doorbells},
      {"wqes_executed", q.counters.wqes_executed, o.wqes_executed},
      {"tx_bytes", q.counters.tx_bytes, o.tx_bytes},
      {"tx_packets", q.counters.tx_packets, o.tx_packets},
      {"cqes_written", q.counters.cqes_written, o.cqes_written},
      {"error_cqes", q.counters.error_cqes, o.error_cqes},
      {"send_cq.produced", q.send_cq.produced, o.send_produced},
      {"rq_consumer", p.rq_consumer, o.rq_consumer},
      {"recv_cq.produced", p.recv_cq.produced, o.recv_produced},
      {"responder rx_bytes", p.counters.rx_bytes, o.rx_bytes},
      {"responder rx_packets", p.counters.rx_packets, o.rx_packets},
      {"responder cqes_written", p.counters.cqes_written, o.responder_cqes},
  };
  bool same = true;
  for (const Field& f : fields) {
    if (f.engine == f.oracle) continue;
    same = false;
    ++t.mismatches;
    if (std::strcmp(f.name, "sq_consumer") == 0 && f.engine > f.oracle) ++t.silent_skips;
    report(c, step, std::string(f.name) + ": engine " + std::to_string(f.engine) + ", oracle " +
                        std::to_string(f.oracle));
  }
  return same;
}

// Every CQE after the first error CQE is a flush.
void check_flushes(const NicModelRig& rig, Tally& t, uint64_t c) {
  const uint64_t produced = rig.qps[NicModelRig::kRequester].send_cq.produced;
  bool errored = false;
  for (uint64_t n = 0; n < produced; ++n) {
    const bool error = rig.send_cqe_opcode(n) == m::MLX5_CQE_REQ_ERR;
    const uint8_t syndrome = error ? rig.send_cqe_syndrome(n) : 0;
    if (errored && (!error || syndrome != m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR)) {
      ++t.flush_violations;
      report(c, 0, "CQE " + std::to_string(n) + " after an error CQE is not a flush");
    }
    errored = errored || error;
    if (error) ++t.error_cqes; else ++t.success_cqes;
    ++t.by_syndrome[syndrome];
  }
}

void run_case(uint64_t seed, uint64_t c, NicModelRig& rig, std::vector<uint8_t>& shadow, Tally& t,
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
    adopt_timestamps(rig, shadow.data(), oracle, cqes_before);
    if (verbose) std::printf("  step %u: doorbell %016" PRIx64 " budget %u: executed %u (oracle %u)\n", s,
                             step.doorbell, step.budget, executed, predicted);
    const bool same_bytes = compare_arena(rig, shadow.data(), t, c, s);
    const bool same_state = compare_state(rig, oracle.qp, executed, predicted, t, c, s);
    if (!same_bytes || !same_state) break;
  }
  t.wqes += rig.qps[NicModelRig::kRequester].counters.wqes_executed;
  ++t.cases;
  check_flushes(rig, t, c);
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
  Tally t;
  if (only_case != UINT64_MAX) {
    run_case(seed, only_case, rig, shadow, t, true);
  } else {
    for (uint64_t c = 0; t.wqes < wqes; ++c) run_case(seed, c, rig, shadow, t, false);
  }
  std::printf("nic_model_fuzz seed %" PRIu64 ": %" PRIu64 " WQEs in %" PRIu64 " cases (%" PRIu64
              " skipped), %" PRIu64 " error CQEs, %" PRIu64 " success CQEs\n",
              seed, t.wqes, t.cases, t.skipped, t.error_cqes, t.success_cqes);
  std::printf("syndromes:");
  for (int s = 1; s < 256; ++s) {
    if (t.by_syndrome[s] != 0) std::printf(" 0x%02x=%" PRIu64, s, t.by_syndrome[s]);
  }
  std::printf("\ncrashes 0, mismatches %" PRIu64 ", guard changes %" PRIu64 ", flush violations %" PRIu64
              ", silent skips %" PRIu64 "\n",
              t.mismatches, t.guard_changes, t.flush_violations, t.silent_skips);
  return t.mismatches + t.guard_changes + t.flush_violations != 0 ? 1 : 0;
}
