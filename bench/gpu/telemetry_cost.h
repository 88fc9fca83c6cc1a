// What telemetry cost a rate, said in the result itself: `gpu-rate --telemetry off,disabled,16`
// runs each mode of a point in one process and run, so every counted row can name its rate
// against the same point's "off" row (the bare submit path, the same SASS as a build without
// telemetry) and why it pays what it pays. Issue 14's criterion is "N = 16 costs at most 5 % of
// the submitter-bound rate, or the result says what it costs and why"; a point whose off row was
// bounded by the NIC model measures the model, not telemetry, and the row says that instead.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dissect/bench/results.h"

namespace dissect::bench::gpu {

// The mode a row of one point ran: off (no hooks), disabled (hooks, no slot), or sampled 1 in N.
struct TelemetryRowMode {
  bool hooks = false;
  unsigned sample_interval = 0;
};

inline constexpr double TELEMETRY_COST_GOAL_PERCENT = 5.0;

// `rows` holds `modes.size()` consecutive results per point, in the order of `modes` (how
// gpu-rate crosses them). Adds to every counted row of a point that also ran "off":
//   telemetry cost vs off   "-53.5 % of the off row's 63.48 Mmsg/s (29.49, p50 over runs)"
//   telemetry cost goal     "within 5 % of off: no" / "yes", or why it cannot be judged
//   telemetry cost why      what the mode adds to the submitter's path
// Throws InvalidArgument when rows.size() is not a multiple of modes.size().
void annotate_telemetry_cost(std::vector<Result>& rows, size_t first,
                             const std::vector<TelemetryRowMode>& modes);

}  // namespace dissect::bench::gpu
