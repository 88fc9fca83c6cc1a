// What bounded a GPU message rate (gpu-rate, gpu-inline-rate, gpu-telemetry-rate), read on the
// NIC's side of the send queue. The report reads a bottleneck that names the "NIC model" (or
// "softnic", "engine") as model-bound, so only the first answer may use those words.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace dissect::bench::gpu {

// deepest: the most WQEBBs any QP's NIC model held announced and not yet executed when one of its
// windows opened (ModelCounters::deepest_backlog), over the run; limit: the most a QP's submitters may leave
// outstanding before they wait for completions (the send queue, or a library's own bound).
struct RateBacklog {
  uint64_t deepest = 0, limit = 0;
};

// A submitter faster than the NIC model runs ahead until it waits for room, so the model's backlog
// reaches the limit; one slower finds the model caught up, and room comes back before it is
// needed: the backlog stays a few posts deep whatever the queue's size. Which of the two held is
// the bottleneck; the rate's share of the model's ceiling goes beside it. (The 80 % rule before it
// guessed from that share alone; on the H100 the two agreed on every row of Table 5, stop 44.)
inline std::string rate_bottleneck(double rate, double ceiling, const RateBacklog& b) {
  char share[64];
  const double percent = ceiling > 0 ? 100 * rate / ceiling : 0.0;
  std::snprintf(share, sizeof share, percent >= 10 ? "%.0f %%" : "%.1f %%", percent);
  const std::string depth = std::to_string(b.deepest) + " of " + std::to_string(b.limit) + " WQEBBs";
  if (2 * b.deepest >= b.limit) {
    return "NIC model (its backlog reached " + depth + " on the fullest QP: the submitters waited for room; "
           "rate " + share + " of its ceiling)";
  }
  return "submitter (at most " + depth + " waited on any QP: room came back before it was needed; "
         "rate " + share + " of the ceiling)";
}

// A run the send queue holds whole (the queue as deep as the run's WQEBBs per QP): no submitter
// ever waits for room, so the backlog says how far the NIC model fell behind, not whether it held
// the submitters back. The drain says that instead: a model as fast as the submitters leaves only
// its last window after the last post, so the message rate (to the last CQE) stays near the posting
// rate (to the last post); a slower one trails by its backlog's execution, and the message rate
// falls below the posting rate by the drain's share of the run. Named the model's from 10 % on.
inline std::string held_run_bottleneck(double rate, double posting, double ceiling, uint64_t deepest) {
  char shares[96];
  const double drain = posting > 0 ? 100 * (1 - rate / posting) : 0.0;
  const double percent = ceiling > 0 ? 100 * rate / ceiling : 0.0;
  std::snprintf(shares, sizeof shares, "%.0f %% of the run; rate %.0f %% of", drain < 0 ? 0.0 : drain, percent);
  const std::string held = "the send queue held the run, so no submitter waited for room; ";
  if (rate < 0.9 * posting) {
    return "NIC model (" + held + "draining its backlog of " + std::to_string(deepest) +
           " WQEBBs after the last post took " + shares + " its ceiling)";
  }
  return "submitter (" + held + "the last completion followed the last post within " + shares +
         " the ceiling)";
}

}  // namespace dissect::bench::gpu
