// What bounded a GPU message rate (gpu-rate, gpu-inline-rate, gpu-telemetry-rate), read on the
// NIC's side of the send queue. The report reads a bottleneck that names the "NIC model" (or
// "softnic", "engine") as model-bound, so only the first answer may use those words.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace dissect::bench::gpu {

// The deepest send queue a rate run asks for, WQEBBs (nic::QpAttributes::sq_wqebbs's limit): where
// a run's queues are to hold it whole (gpu-rate, gpu-proxy-rate --deep-queue), it is cut to this.
inline constexpr uint32_t MAX_SQ_WQEBBS = 32768;

// The label suffix of a row whose send queues held its run (held_run_bottleneck), which the report
// reads (scripts/dissect_report/fidelity.py, HOLDING).
inline constexpr const char* HOLDING = ", queue holding the run";

// deepest: the most WQEBBs any QP's NIC model held announced and not yet executed when one of its
// windows opened (ModelCounters::deepest_backlog), over the run; limit: the most a QP's submitters may leave
// outstanding before they wait for completions (the send queue, or a library's own bound).
struct RateBacklog {
  uint64_t deepest = 0, limit = 0;
};

// A submitter faster than the NIC model runs ahead until it waits for room, so the model's backlog
// reaches the limit; one slower finds the model caught up, and room comes back before it is
// needed: the backlog stays a few posts deep whatever the queue's size.
inline bool submitters_waited(const RateBacklog& b) { return 2 * b.deepest >= b.limit; }

// Which of the two held is the bottleneck; the rate's share of the model's ceiling goes beside it.
// (The 80 % rule before it guessed from that share alone; on the H100 the two agreed on every row of
// Table 5, stop 44.)
inline std::string rate_bottleneck(double rate, double ceiling, const RateBacklog& b) {
  char share[64];
  const double percent = ceiling > 0 ? 100 * rate / ceiling : 0.0;
  std::snprintf(share, sizeof share, percent >= 10 ? "%.0f %%" : "%.1f %%", percent);
  const std::string depth = std::to_string(b.deepest) + " of " + std::to_string(b.limit) + " WQEBBs";
  if (submitters_waited(b)) {
    return "NIC model (its backlog reached " + depth + " on the fullest QP: the submitters waited for room; "
           "rate " + share + " of its ceiling)";
  }
  return "submitter (at most " + depth + " waited on any QP: room came back before it was needed; "
         "rate " + share + " of the ceiling)";
}

// A run the send queue holds whole (as deep as the run's WQEBBs per QP): no submitter ever waits for
// room, so what the backlog reaches says how far the NIC model fell behind the submitters: a few
// posts in flight when it kept up (one batch, a warp's 32 per warp on the QP, a hand-off's
// unpublished slots: at most 829 of 32,768 on the H100, stop 45), a share of the run when it was
// slower (1 - model / submitters of it by the last post: 37 % under one cooperative warp). Named the
// model's from a sixteenth of the run on. Not the drain: the submitters reclaim every CQE after
// their last post in such a run, so the message rate trails the posting rate by that (3-8 % on the
// H100 with the model caught up) as well as by any backlog.
inline std::string held_run_bottleneck(double rate, double ceiling, uint64_t deepest, uint64_t run_wqebbs) {
  char share[96];
  const double behind = run_wqebbs ? 100.0 * deepest / run_wqebbs : 0.0;
  const double percent = ceiling > 0 ? 100 * rate / ceiling : 0.0;
  std::snprintf(share, sizeof share, "%.0f %% of the run's %llu; rate %.0f %% of", behind,
                static_cast<unsigned long long>(run_wqebbs), percent);
  const std::string held = "the send queue held the run, so no submitter waited for room; ";
  if (16 * deepest >= run_wqebbs) {
    return "NIC model (" + held + "it fell " + std::to_string(deepest) + " WQEBBs behind on the fullest QP, " +
           share + " its ceiling)";
  }
  return "submitter (" + held + "at most " + std::to_string(deepest) + " WQEBBs waited on any QP, " + share +
         " the ceiling)";
}

}  // namespace dissect::bench::gpu
