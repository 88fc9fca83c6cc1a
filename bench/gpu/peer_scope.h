// gpu-completion-scope --path nvshmem-ibgda: Figure 4 through NVSHMEM's own quiets on the same
// loopback QPs as mini-gda's run (bench/gpu/peers/nvshmem_scope.cu, built with its headers).
#pragma once

#include <cstdint>
#include <string>

#include "dissect/bench/results.h"
#include "loopback_qps.h"

namespace dissect::bench {

// The library and version of --path (empty for mini-gda); throws InvalidArgument naming the path
// when this build has no adapter for it.
std::string scope_path_library(const std::string& path, std::string* version);

// One run at `qps` loopback QPs (`nic`, send CQs collapsed): one thread puts 8 B with nvshmem_p's
// WQE on QP 0, then waits with NVSHMEM's per-QP quiet (ibgda_quiet on QP 0) into `per_qp`, or its
// all-QP quiet (nvshmemi_ibgda_quiet over the PE's RC table of `qps` QPs) into `all_qps`; us per
// operation after `warmup`. `valid` turns false on a failed quiet or a payload that did not land.
void measure_nvshmem_scope(const gpu::LoopbackOptions& nic, uint32_t qps, uint32_t warmup,
                           uint32_t iterations, Metric& per_qp, Metric& all_qps, bool& valid);

}  // namespace dissect::bench
