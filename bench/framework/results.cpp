#include "dissect/bench/results.h"

#include <algorithm>
#include <atomic>
#include <cmath>

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

std::atomic<bool> keep_raw{false};

// print_report_lat's median of the first n sorted samples (get_median).
double perftest_median(const std::vector<double>& sorted, size_t n) {
  if ((n - 1) % 2) return (sorted[n / 2] + sorted[n / 2 - 1]) / 2;
  return sorted[n / 2];
}

void perftest_columns(const std::vector<double>& sorted, Summary* s) {
  const size_t n = sorted.size();
  if (n == 0) return;
  const size_t kept = n > PERFTEST_MEASURE_TAIL ? n - PERFTEST_MEASURE_TAIL : n;
  s->perftest = true;
  s->dropped = n - kept;
  double sum = 0;
  for (size_t i = 0; i < kept; ++i) sum += sorted[i];
  s->t_avg = sum / static_cast<double>(kept);
  double squares = 0;
  for (size_t i = 0; i < kept; ++i) squares += (s->t_avg - sorted[i]) * (s->t_avg - sorted[i]);
  s->t_stdev = std::sqrt(squares / static_cast<double>(kept));
  s->t_typical = perftest_median(sorted, kept);
  auto at = [&](size_t index) { return sorted[std::min(index, n - 1)]; };
  s->t_min = sorted[0];
  s->t_max = at(kept);
  s->t_p99 = at(static_cast<size_t>(std::ceil(static_cast<double>(kept) * 0.99)));
  s->t_p99_9 = at(static_cast<size_t>(std::ceil(static_cast<double>(kept) * 0.999)));
}

std::string bytes_of(const Result& r) {
  for (const char* key : {"bytes", "payload bytes", "payload_bytes", "size"}) {
    for (const auto& [k, v] : r.knobs) {
      if (k == key) return v;
    }
  }
  return "";
}

// The run whose t_typical is the median of the runs' (the lower middle one for an even count).
size_t median_run(const Metric& m) {
  std::vector<size_t> order(m.runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return m.runs[a].t_typical < m.runs[b].t_typical; });
  return order[(order.size() - 1) / 2];
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
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
  const bool perftest = is_time_unit(metric.unit);
  for (const Summary& run : metric.runs) {
    Json object = {{"p10", number(run.p10)}, {"p50", number(run.p50)}, {"p90", number(run.p90)},
                   {"p99", number(run.p99)}, {"samples", run.samples}};
    // Only where the run kept its samples (a GPU run reports percentiles alone).
    if (perftest && run.perftest) {
      object["t_min"] = number(run.t_min);
      object["t_max"] = number(run.t_max);
      object["t_typical"] = number(run.t_typical);
      object["t_avg"] = number(run.t_avg);
      object["t_stdev"] = number(run.t_stdev);
      object["t_p99"] = number(run.t_p99);
      object["t_p99_9"] = number(run.t_p99_9);
      object["tail_dropped"] = run.dropped;
    }
    if (!run.raw.empty()) {
      Json raw = Json::array();
      for (double v : run.raw) raw.push_back(number(v));
      object["raw"] = std::move(raw);
    }
    runs.push_back(std::move(object));
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

void set_keep_raw_samples(bool keep) { keep_raw = keep; }

bool is_time_unit(const std::string& unit) {
  return unit == "us" || unit == "ns" || unit == "ms" || unit == "s" || unit == "cycles";
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (keep_raw) s.raw = samples;
  std::sort(samples.begin(), samples.end());
  perftest_columns(samples, &s);
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
  // perftest's columns for every metric in a unit of time, from the run whose t_typical is the
  // median of the runs' (the JSON and the CSV carry every run).
  bool header = false;
  for (const Result& r : results_) {
    for (const Metric& m : r.metrics) {
      if (!is_time_unit(m.unit) || m.runs.empty()) continue;
      const Summary& s = m.runs[median_run(m)];
      if (!s.perftest) continue;
      if (!header) {
        std::fprintf(out,
                     "perftest columns (median run by t_typical; %llu largest samples dropped per "
                     "run, as perftest does)\n%-16s %-28s %-20s %7s %11s %9s %9s %9s %9s %9s %9s "
                     "%9s\n",
                     static_cast<unsigned long long>(PERFTEST_MEASURE_TAIL), "experiment", "case",
                     "metric", "#bytes", "#iterations", "t_min", "t_max", "t_typical", "t_avg",
                     "t_stdev", "99%", "99.9%");
        header = true;
      }
      const std::string bytes = bytes_of(r);
      std::fprintf(out, "%-16s %-28s %-20s %7s %11llu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n",
                   r.experiment.c_str(), r.label.c_str(), (m.name + " " + m.unit).c_str(),
                   bytes.empty() ? "-" : bytes.c_str(), static_cast<unsigned long long>(s.samples),
                   s.t_min, s.t_max, s.t_typical, s.t_avg, s.t_stdev, s.t_p99, s.t_p99_9);
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

std::string Report::to_csv() const {
  std::string csv =
      "experiment,label,metric,unit,run,bytes,samples,p10,p50,p90,p99,t_min,t_max,t_typical,t_avg,"
      "t_stdev,t_p99,t_p99_9,tail_dropped,payload_validated\n";
  for (const Result& r : results_) {
    for (const Metric& m : r.metrics) {
      const bool perftest = is_time_unit(m.unit);
      for (size_t run = 0; run < m.runs.size(); ++run) {
        const Summary& s = m.runs[run];
        const bool columns = perftest && s.perftest;
        std::string row = csv_field(r.experiment) + "," + csv_field(r.label) + "," +
                          csv_field(m.name) + "," + csv_field(m.unit) + "," + std::to_string(run) +
                          "," + csv_field(bytes_of(r)) + "," + std::to_string(s.samples);
        for (double v : {s.p10, s.p50, s.p90, s.p99}) row += "," + csv_number(v);
        for (double v : {s.t_min, s.t_max, s.t_typical, s.t_avg, s.t_stdev, s.t_p99, s.t_p99_9}) {
          row += "," + (columns ? csv_number(v) : std::string());
        }
        row += "," + (columns ? std::to_string(s.dropped) : std::string());
        row += std::string(",") + (r.payload_validated ? "true" : "false");
        csv += row + "\n";
      }
    }
  }
  for (const auto& [experiment, error] : failures_) {
    csv += csv_field(experiment) + "," + csv_field("FAILED: " + error) + std::string(17, ',') +
           ",false\n";
  }
  return csv;
}

void Report::write_csv(const std::string& path) const {
  const WriteOutcome outcome = write_path_no_follow(path, to_csv());
  if (!outcome.written) throw Error("cannot write the CSV to '" + path + "': " + outcome.reason);
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

int add_results(Report& report, std::vector<Result> results) {
  int status = 0;
  for (Result& r : results) {
    if (!r.payload_validated) status = 1;
    report.add(std::move(r));
  }
  return status;
}

}  // namespace dissect::bench
