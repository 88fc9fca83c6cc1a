// Telemetry's cost beside each counted gpu-rate row (telemetry_cost.h).
#include "telemetry_cost.h"

#include <cstdio>

#include "dissect/common/error.h"

namespace dissect::bench::gpu {
namespace {

const Metric* find_metric(const Result& r, const std::string& name) {
  for (const Metric& m : r.metrics) {
    if (m.name == name && !m.runs.empty()) return &m;
  }
  return nullptr;
}

std::string knob(const Result& r, const std::string& name) {
  for (const auto& [key, value] : r.knobs) {
    if (key == name) return value;
  }
  return "";
}

std::string fixed(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// What a mode adds to the submitter's path (include/dissect/nic/telemetry_policy.h's cost model).
std::string why(const TelemetryRowMode& mode) {
  if (mode.sample_interval == 0) {
    return "hooks compiled in (gda::counted), no slot: each hook is one untaken branch on the "
           "QP's null telemetry slot";
  }
  return "each post stores its WQE's stamp (a word per WQEBB) in the QP's post_stamps; the "
         "doorbell's ringer reads its batch's stamps back from L2, 8 per chunk, and adds their "
         "tally to the counter block; the poller reads every retired range's stamps back again; "
         "1 WQE in " + std::to_string(mode.sample_interval) +
         " also reads the clock (docs/telemetry.md)";
}

// The goal's verdict for one counted row against the point's off row.
std::string verdict(const Result& off, double off_rate, double cost_percent) {
  if (knob(off, "bottleneck").rfind("NIC model", 0) == 0) {
    return "not judged: the off row was bounded by the NIC model, so this point measures the "
           "model, not telemetry";
  }
  const bool within = -cost_percent <= TELEMETRY_COST_GOAL_PERCENT;
  return std::string(within ? "yes" : "no") + ": within " +
         fixed(TELEMETRY_COST_GOAL_PERCENT, "%.0f") + " % of off (" + fixed(off_rate, "%.2f") +
         " Mmsg/s, a submitter-bound rate)";
}

void annotate_point(std::vector<Result>& rows, size_t base, const std::vector<TelemetryRowMode>& modes) {
  size_t off_index = modes.size();
  for (size_t m = 0; m < modes.size() && off_index == modes.size(); ++m) {
    if (!modes[m].hooks) off_index = m;
  }
  if (off_index == modes.size()) return;  // no off row in this run: nothing to set beside
  const Result& off = rows[base + off_index];
  const Metric* off_rate = find_metric(off, "message rate");
  for (size_t m = 0; m < modes.size(); ++m) {
    if (!modes[m].hooks) continue;
    Result& row = rows[base + m];
    const Metric* rate = find_metric(row, "message rate");
    if (off_rate == nullptr || rate == nullptr || off_rate->p50() <= 0) {
      row.knobs.push_back({"telemetry cost vs off", std::string("not measured: ") +
                                                        (rate == nullptr ? "this row" : "the off row") +
                                                        " has no rate"});
      continue;
    }
    const double cost = 100.0 * (rate->p50() / off_rate->p50() - 1.0);
    row.knobs.push_back({"telemetry cost vs off",
                         fixed(cost, "%+.1f") + " % of the off row's " + fixed(off_rate->p50(), "%.2f") +
                             " Mmsg/s (" + fixed(rate->p50(), "%.2f") + ", p50 over runs, same run)"});
    row.knobs.push_back({"telemetry cost goal", verdict(off, off_rate->p50(), cost)});
    row.knobs.push_back({"telemetry cost why", why(modes[m])});
  }
}

}  // namespace

void annotate_telemetry_cost(std::vector<Result>& rows, size_t first,
                             const std::vector<TelemetryRowMode>& modes) {
  if (modes.empty() || first > rows.size() || (rows.size() - first) % modes.size() != 0) {
    throw InvalidArgument("telemetry cost: " + std::to_string(rows.size() - first) +
                          " rows are not whole points of " + std::to_string(modes.size()) + " modes each");
  }
  for (size_t base = first; base < rows.size(); base += modes.size()) annotate_point(rows, base, modes);
}

}  // namespace dissect::bench::gpu
