#include "dissect/bench/results.h"

#include <algorithm>
#include <fstream>

#include "dissect/common/error.h"
#include "dissect/telemetry/json_writer.h"

namespace dissect::bench {
namespace {

double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const size_t index = static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

void write_pairs(telemetry::JsonWriter& json, const char* name,
                 const std::vector<std::pair<std::string, std::string>>& pairs) {
  json.key(name).begin_object();
  for (const auto& [key, value] : pairs) json.field(key, std::string_view(value));
  json.end_object();
}

void write_metric(telemetry::JsonWriter& json, const Metric& metric) {
  json.begin_object();
  json.field("name", std::string_view(metric.name)).field("unit", std::string_view(metric.unit));
  json.field("p50", metric.p50()).field("spread", metric.spread());
  json.key("runs").begin_array();
  for (const Summary& run : metric.runs) {
    json.begin_object();
    json.field("p10", run.p10).field("p50", run.p50).field("p90", run.p90).field("p99", run.p99);
    json.field("samples", run.samples);
    json.end_object();
  }
  json.end_array().end_object();
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
  telemetry::JsonWriter json;
  json.begin_object();
  json.field("schema", "dissect.results/1");
  json.field("command", std::string_view(command_line));
  json.key("results").begin_array();
  for (const Result& r : results_) {
    json.begin_object();
    json.field("experiment", std::string_view(r.experiment));
    json.field("label", std::string_view(r.label));
    json.field("provider", std::string_view(r.provider));
    json.field("nic_model", std::string_view(r.nic_model));
    json.field("engine", std::string_view(r.engine));
    json.field("placement", std::string_view(r.placement));
    json.field("submitter", std::string_view(r.submitter));
    json.field("pe_layout", std::string_view(r.pe_layout));
    write_pairs(json, "knobs", r.knobs);
    write_pairs(json, "environment", r.environment);
    json.key("metrics").begin_array();
    for (const Metric& m : r.metrics) write_metric(json, m);
    json.end_array();
    json.field("payload_validated", r.payload_validated);
    json.end_object();
  }
  json.end_array().end_object();
  return json.text() + "\n";
}

void Report::write_json(const std::string& path, const std::string& command_line) const {
  std::ofstream file(path);
  if (!file) throw Error("cannot write results to '" + path + "'");
  file << to_json(command_line);
  if (!file) throw Error("short write of results to '" + path + "'");
}

}  // namespace dissect::bench
