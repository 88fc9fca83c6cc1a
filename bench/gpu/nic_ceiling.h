// `dissect nic-ceiling`: the NIC model's own capacity, so that every other experiment can say
// whether the model was its bottleneck. Host-side entry point (nic_ceiling.cu).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dissect/bench/results.h"

namespace dissect::bench {

struct NicCeilingConfig {
  int device = 0;
  uint32_t engine_ctas = 8;          // the engine kernel under test
  uint32_t engine_warps_per_cta = 8;
  std::string nic_profile = "fast";  // fast | cx7-ib | a profile file (softnic/profile.h)
  std::vector<uint32_t> qps = {1, 4, 16, 64};
  std::vector<uint32_t> sizes = {8, 64, 512, 4096};  // 8: inline; larger: pointer writes
  uint32_t depth = 4096;             // WQEs per QP per round, one doorbell, the last signalled
  uint32_t rounds = 8;               // per run
  uint32_t runs = 3;
  uint32_t latency_iterations = 2000;
  // The rate cases with every doorbell dated (SoftNicOptions::doorbell_dates), as the latency case
  // always has them: what the CQE extension's dates cost the engine, measured beside the rate
  // without them. A profile dates them in every case.
  bool rate_doorbell_dates = false;
  // Called with each case's label as it ends (the CLI's progress line); unset: nothing.
  std::function<void(const std::string& label)> case_done;
};

// The cases run_nic_ceiling measures: the latency, then every size and QP count.
inline size_t nic_ceiling_cases(const NicCeilingConfig& c) { return 1 + c.sizes.size() * c.qps.size(); }

// Message rate and payload rate of pre-built 8 B..N B writes over Q loopback QPs (rung all at
// once), and the doorbell-to-CQE latency of one signalled 8 B write on an idle engine.
std::vector<Result> run_nic_ceiling(const NicCeilingConfig& config);

// One point of it: message and payload rate of `qps` QPs, `bytes` per write (8 and below inline
// from a register, larger pointer writes), `config.runs` runs of `config.rounds` rounds.
Result measure_nic_ceiling_rate(const NicCeilingConfig& config, uint32_t qps, uint32_t bytes);

// The model's message rate (Mmsg/s) for `qps` QPs and `bytes` a write with this engine and
// profile (4 rounds, one run), measured once per process and configuration: the ceiling a rate
// experiment sets beside its own rate to say whether the model was its bottleneck.
double nic_model_ceiling(int device, uint32_t engine_ctas, uint32_t engine_warps_per_cta,
                         const std::string& nic_profile, uint32_t qps, uint32_t bytes);

}  // namespace dissect::bench
