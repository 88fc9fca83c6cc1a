// One rank per process: what the processes of one MoE launch check with each other and send to
// rank 0 (the host side; the GPU rig, bench/gpu/moe_rig.h, exchanges its QPs and arenas itself).
//
//  - Agreement: every process was started with the same arguments (mpirun and the environment
//    launch hand every rank the same command line, but nothing forces it). Each sends its
//    LaunchFingerprint; a rank whose fingerprint differs is refused by rank, field and values
//    before any QP is connected.
//  - Results: each process measures its own rank. After a run every rank's samples (RankRecord:
//    its CUDA-event times and in-kernel stamps) and its validation (CheckSummary) go to every
//    process through one allgather each; rank 0 writes the one result.
//  - One process (every rank in it) produces the same records, so everything after the run is the
//    same code for both launch modes (merge_sample, sample_latency).
// Every exchange is a bootstrap collective: bounded by the bootstrap's timeout (environment and
// in-process; under MPI the launcher's), which names the rank that did not arrive.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dissect/bootstrap/bootstrap.h"
#include "dissect/moe/reference.h"
#include "dissect/moe/routing.h"
#include "dissect/moe/shape.h"
#include "dissect/moe/stamps.h"

namespace dissect::moe {

inline constexpr uint32_t LAUNCH_FINGERPRINT_MAGIC = 0x4c454f4d;  // "MOEL" little-endian
inline constexpr uint32_t LAUNCH_FINGERPRINT_VERSION = 2;  // 2: the provider

// What must be the same on every rank of a launch.
struct LaunchFingerprint {
  uint32_t magic = LAUNCH_FINGERPRINT_MAGIC;
  uint32_t version = LAUNCH_FINGERPRINT_VERSION;
  uint32_t hidden = 0, top_k = 0, experts = 0, ranks = 0, tokens = 0;
  uint32_t transport = 0;        // the rig's MoeTransportKind, as a number
  uint32_t provider = 0;         // 0 softnic, 1 mlx5 (a rank on a model beside one on a NIC)
  uint32_t doorbell_batch = 0, warps_per_rank = 0;
  uint64_t seed = 0;
  double masked_fraction = 0;
  uint32_t runs = 0;             // every rank runs the same runs of the same samples:
  uint32_t samples_per_run = 0;  // warm-up + timed
};
static_assert(std::is_trivially_copyable_v<LaunchFingerprint>);

// The empty string when a world of `world_size` processes can run `s` with one rank each, else
// the reason naming both numbers (world size != ranks; the shape's own errors, shape_error).
std::string world_error(const MoeShape& s, int world_size);

// Throws Error naming the first rank whose fingerprint differs from `all[me]`: the field and both
// values (or a wrong magic/version: another build).
void check_fingerprints(const std::vector<LaunchFingerprint>& all, int me);

// One sample of one rank: its phases' CUDA-event times and in-kernel stamps.
struct RankRecord {
  double dispatch_us = 0, combine_us = 0;
  PhaseStamps dispatch{}, combine{};
};
static_assert(std::is_trivially_copyable_v<RankRecord>);

// One rank's validation, fixed-size for an allgather: the counts and the first mismatch.
struct CheckSummary {
  uint64_t dispatch_checked = 0, dispatch_mismatches = 0;
  uint64_t combine_checked = 0, combine_mismatches = 0;
  char first[240] = {};  // the first described mismatch of either phase, NUL-terminated
};
static_assert(std::is_trivially_copyable_v<CheckSummary>);
CheckSummary summarize_checks(const CheckReport& dispatch, const CheckReport& combine);
bool passed(const CheckSummary& s);  // both phases checked something and found no mismatch

// Every process's `mine` (the same count on each: else the bootstrap names both sizes), entry r
// from rank r. One allgather.
std::vector<std::vector<RankRecord>> gather_records(bootstrap::Bootstrap& group,
                                                    const std::vector<RankRecord>& mine);
std::vector<CheckSummary> gather_checks(bootstrap::Bootstrap& group, const CheckSummary& mine);

// Sample `index` of every rank: latency = the slowest rank's (in one process all ranks share one
// kernel's time, so this is that time), the stamps of every rank.
struct MergedSample {
  double dispatch_us = 0, combine_us = 0;
  std::vector<PhaseStamps> dispatch, combine;  // per rank
};
MergedSample merge_sample(const std::vector<std::vector<RankRecord>>& records, size_t index);

// Over ranks: the mean issue share (stamps.h, issue_share), the mean of (last post end - begin)
// in us, and the mean warp's time inside the post calls in us.
struct IssueSummary {
  double share = 0, end_us = 0, post_us = 0;
};
IssueSummary summarize_issue(const std::vector<PhaseStamps>& ranks);

}  // namespace dissect::moe
