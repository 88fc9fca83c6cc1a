#include "dissect/bench/results.h"

#include <algorithm>

#include "dissect/common/error.h"
#include "dissect/common/output_file.h"
#include "dissect/common/wait.h"
#include "dissect/telemetry/json.h"

namespace dissect::bench {
namespace {

double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t index = static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

using telemetry::Json;
using telemetry::number;

Json pairs_object(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json json = Json::object();
  for (const auto& [key, value] : pairs) json[key] = value;
  return json;
}

Json metric_object(const Metric& metric) {
  Json runs = Json::array();
  for (const Summary& run : metric.runs) {
    runs.push_back({{"p10", number(run.p10)}, {"p50", number(run.p50)}, {"p90", number(run.p90)},
                    {"p99", number(run.p99)}, {"samples", run.samples}});
  }
  return {{"name", metric.name}, {"unit", metric.unit}, {"p50", number(metric.p50())},
          {"spread", number(metric.spread())}, {"runs", std::move(runs)}};
}

Json result_object(const Result& r) {
  Json metrics = Json::array();
  for (const Metric& m : r.metrics) metrics.push_back(metric_object(m));
  return {{"experiment", r.experiment},   {"label", r.label},
          {"provider", r.provider},       {"nic_model", r.nic_model},
          {"engine", r.engine},           {"placement", r.placement},
          {"submitter", r.submitter},     {"pe_layout", r.pe_layout},
          {"knobs", pairs_object(r.knobs)}, {"environment", pairs_object(r.environment)},
          {"metrics", std::move(metrics)}, {"payload_validated", r.payload_validated}};
}

}  // namespace

Summary summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  Summary s;
  s.samples = samples.size();
  s.p10 = percentile(samples, 0.10);
  s.p50 = percentile(samples, 0.50);
  s.p90 = percentile(samples, 0.90);
  s.p99 = percentile(samples, 0.99);
  return s;
}

double Metric::p50() const {
  std::vector<double> medians;
  for (const auto& run : runs) medians.push_back(run.p50);
  std::sort(medians.begin(), medians.end());
  return medians.empty() ? 0 : medians[medians.size() / 2];
}

double Metric::spread() const {
  if (runs.empty()) return 0;
  double low = runs[0].p50, high = runs[0].p50;
  for (const auto& run : runs) low = std::min(low, run.p50), high = std::max(high, run.p50);
  return high - low;
}

void Report::print_table(std::FILE* out) const {
  std::fprintf(out, "%-16s %-28s %-16s %10s %10s %5s  %s\n", "experiment", "case", "metric", "p50",
               "spread", "runs", "payload");
  for (const Result& r : results_) {
    for (const Metric& m : r.metrics) {
      std::fprintf(out, "%-16s %-28s %-16s %10.3f %10.3f %5zu  %s\n", r.experiment.c_str(),
                   r.label.c_str(), (m.name + " " + m.unit).c_str(), m.p50(), m.spread(),
                   m.runs.size(), r.payload_validated ? "valid" : "NOT VALIDATED");
    }
  }
  if (!results_.empty()) {
    const Result& r = results_.front();
    std::fprintf(out, "provider %s (%s); engine %s; placement %s; submitter %s; %s\n",
                 r.provider.c_str(), r.nic_model.c_str(), r.engine.c_str(), r.placement.c_str(),
                 r.submitter.c_str(), r.pe_layout.c_str());
  }
}

std::string Report::to_json(const std::string& command_line) const {
  Json results = Json::array();
  for (const Result& r : results_) results.push_back(result_object(r));
  // An experiment that threw is a record of its own among the results (docs/results.schema.json),
  // so that the report lists it where its section would be.
  for (const auto& [experiment, error] : failures_) {
    results.push_back({{"experiment", experiment}, {"failed", true}, {"error", error}});
  }
  Json json = {{"schema", "dissect.results/1"}, {"command", command_line},
               {"results", std::move(results)}};
  // The extra newline keeps the file byte for byte what the hand-written writer produced.
  return telemetry::dump_document(json) + "\n";
}

void Report::write_json(const std::string& path, const std::string& command_line) const {
  // As telemetry writes its file: never through a symbolic link, never a half-written file.
  const WriteOutcome outcome = write_path_no_follow(path, to_json(command_line));
  if (!outcome.written) throw Error("cannot write results to '" + path + "': " + outcome.reason);
}

void note_oversubscription(Report& report) {
  const SpinCensus& census = spin_census();
  if (!census.oversubscribed.load()) return;
  const std::string note = std::to_string(census.peak.load()) + " threads spun at once on " +
                           std::to_string(usable_cores()) +
                           " usable cores; waits yielded on every spin";
  std::printf("note: oversubscribed: %s\n", note.c_str());
  for (Result& r : report.results()) r.environment.emplace_back("oversubscribed", note);
  restart_spin_census();
}

}  // namespace dissect::bench
