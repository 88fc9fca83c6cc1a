// The fuzz campaign's host-side checks, shared by the CPU driver (tests/cpu/softnic/nic_model_fuzz.cpp)
// and the GPU replay (tests/gpu/softnic/nic_model_fuzz_gpu.cu), so both judge the engine by the
// same rules and print the same summary: the arena against the oracle's shadow byte for byte, the
// QP contexts against the oracle's state field for field, and the flush rule over the send CQ.
// Host code only.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "dissect/softnic/cqe_times.h"
#include "support/nic_model_fuzz.h"

namespace dissect::testing::fuzz {

struct Tally {
  uint64_t cases = 0, skipped = 0, wqes = 0, error_cqes = 0, success_cqes = 0;
  uint64_t mismatches = 0, guard_changes = 0, flush_violations = 0, silent_skips = 0;
  uint64_t by_syndrome[256] = {};
  int reports = 0;  // lines printed so far (kReportLimit at most)
};

inline constexpr int kReportLimit = 8;

inline const char* where(const NicModelRig& rig, uint64_t offset) {
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

inline void report(Tally& t, uint64_t case_index, uint32_t step, const std::string& what) {
  if (t.reports++ < kReportLimit) {
    std::fprintf(stderr, "case %" PRIu64 " step %u: %s\n", case_index, step, what.c_str());
  }
}

// The engine's CQEs carry its clock: take those bytes into the shadow before comparing. An error
// CQE's byte 55 is its syndrome (written over the timestamp's last byte), so it stays predicted.
inline void adopt_timestamps(const NicModelRig& rig, uint8_t* shadow, const Oracle& oracle, uint32_t from) {
  for (uint32_t i = from; i < oracle.written_count; ++i) {
    const WrittenCqe& w = oracle.written[i];
    const uint64_t offset = (w.send ? rig.send_cq.offset : rig.recv_cq.offset) +
                            (w.slot % NicModelRig::kCqes) * mlx5::MLX5_CQE_SIZE;
    const int last = w.error ? 54 : 55;
    for (int b = 48; b <= last; ++b) shadow[offset + b] = rig.base[offset + b];
    if (w.send) {  // the softnic's requester CQE extension (dissect/softnic/cqe_times.h)
      for (uint32_t b = dissect::softnic::CQE_TIMES_OFFSET; b < dissect::softnic::CQE_TIMES_OFFSET + dissect::softnic::CQE_TIMES_BYTES; ++b) {
        shadow[offset + b] = rig.base[offset + b];
      }
    }
  }
}

inline bool compare_arena(const NicModelRig& rig, const uint8_t* shadow, Tally& t, uint64_t c, uint32_t step) {
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
  report(t, c, step, line);
  return false;
}

// `q`, `p`: the requester's and the responder's contexts as the engine left them.
inline bool compare_state(const softnic::QpContext& q, const softnic::QpContext& p, const OracleQp& o,
                          uint32_t executed, uint32_t predicted, Tally& t, uint64_t c, uint32_t step) {
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
    report(t, c, step, std::string(f.name) + ": engine " + std::to_string(f.engine) + ", oracle " +
                           std::to_string(f.oracle));
  }
  return same;
}

// Every CQE after the first error CQE is a flush.
inline void check_flushes(const NicModelRig& rig, Tally& t, uint64_t c) {
  const uint64_t produced = rig.qps[NicModelRig::kRequester].send_cq.produced;
  bool errored = false;
  for (uint64_t n = 0; n < produced; ++n) {
    const bool error = rig.send_cqe_opcode(n) == mlx5::MLX5_CQE_REQ_ERR;
    const uint8_t syndrome = error ? rig.send_cqe_syndrome(n) : 0;
    if (errored && (!error || syndrome != mlx5::MLX5_CQE_SYNDROME_WR_FLUSH_ERR)) {
      ++t.flush_violations;
      report(t, c, 0, "CQE " + std::to_string(n) + " after an error CQE is not a flush");
    }
    errored = errored || error;
    if (error) ++t.error_cqes; else ++t.success_cqes;
    ++t.by_syndrome[syndrome];
  }
}

// The summary both drivers print (scripts/fuzz.sh parses its first and last lines); `crashes` is
// 0 for a process that got this far (a crash ends it). Returns the exit status.
inline int print_summary(const char* name, uint64_t seed, const Tally& t, uint64_t crashes = 0) {
  std::printf("%s seed %" PRIu64 ": %" PRIu64 " WQEs in %" PRIu64 " cases (%" PRIu64
              " skipped), %" PRIu64 " error CQEs, %" PRIu64 " success CQEs\n",
              name, seed, t.wqes, t.cases, t.skipped, t.error_cqes, t.success_cqes);
  std::printf("syndromes:");
  for (int s = 1; s < 256; ++s) {
    if (t.by_syndrome[s] != 0) std::printf(" 0x%02x=%" PRIu64, s, t.by_syndrome[s]);
  }
  std::printf("\ncrashes %" PRIu64 ", mismatches %" PRIu64 ", guard changes %" PRIu64
              ", flush violations %" PRIu64 ", silent skips %" PRIu64 "\n",
              crashes, t.mismatches, t.guard_changes, t.flush_violations, t.silent_skips);
  return crashes + t.mismatches + t.guard_changes + t.flush_violations != 0 ? 1 : 0;
}

}  // namespace dissect::testing::fuzz
