#include "dissect/bench/fit_clock.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dissect/bench/experiment.h"
#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

using nlohmann::json;

// µs per unit for the time units results carry (results.h is_time_unit, less "cycles": a cycle
// count is the clock-sensitive part itself, not a time to fit).
double microseconds_per(const std::string& unit) {
  if (unit == "ns") return 1e-3;
  if (unit == "us") return 1;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1e6;
  return 0;
}

json read_document(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error(file + ": cannot be read: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::exception& e) {
    throw Error(file + ": not JSON: " + e.what());
  }
  const std::string schema = doc.is_object() ? doc.value("schema", std::string()) : std::string();
  if (schema != "dissect.results/1") {
    throw Error(file + ": field 'schema' is '" + schema + "', not 'dissect.results/1' (a dissect "
                "--output file)");
  }
  if (!doc.contains("results") || !doc["results"].is_array()) {
    throw Error(file + ": field 'results' is missing or not an array");
  }
  return doc;
}

std::string name_of(const std::string& file, size_t index, const json& result) {
  return file + ": results[" + std::to_string(index) + "] (" + result.value("experiment", "?") +
         ", '" + result.value("label", "?") + "')";
}

// The result's SM clock in MHz, 0 when it records none (a host-only experiment).
double clock_of(const std::string& where, const json& result) {
  if (!result.contains("environment") || !result["environment"].contains("sm_clock_mhz")) return 0;
  const json& field = result["environment"]["sm_clock_mhz"];
  double mhz = 0;
  std::string text = field.is_string() ? field.get<std::string>() : field.dump();
  if (field.is_number()) {
    mhz = field.get<double>();
  } else if (field.is_string()) {
    char* end = nullptr;
    mhz = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') mhz = -1;
  } else {
    mhz = -1;
  }
  if (!(mhz > 0) || !std::isfinite(mhz)) {
    throw Error(where + ": field environment.sm_clock_mhz is '" + text +
                "', not a positive number of MHz");
  }
  return mhz;
}

ClockCase& case_for(std::vector<ClockCase>& cases, const std::string& experiment,
                    const std::string& label, const std::string& metric) {
  for (ClockCase& c : cases) {
    if (c.experiment == experiment && c.label == label && c.metric == metric) return c;
  }
  cases.push_back(ClockCase{experiment, label, metric, {}});
  return cases.back();
}

// Adds the file's points; returns how many.
size_t add_points(const std::string& file, std::vector<ClockCase>& cases) {
  const json doc = read_document(file);
  size_t added = 0;
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    const json& r = doc["results"][i];
    if (!r.is_object() || r.value("failed", false)) continue;
    const std::string where = name_of(file, i, r);
    const double mhz = clock_of(where, r);
    if (mhz == 0 || !r.contains("metrics")) continue;
    for (const json& m : r["metrics"]) {
      const double scale = microseconds_per(m.value("unit", ""));
      if (scale == 0) continue;
      if (!m.contains("p50") || !m["p50"].is_number()) {
        throw Error(where + ": metric '" + m.value("name", "?") + "' has no numeric field p50");
      }
      case_for(cases, r.value("experiment", ""), r.value("label", ""), m.value("name", ""))
          .points.push_back(ClockPoint{mhz, m["p50"].get<double>() * scale, file});
      ++added;
    }
  }
  return added;
}

}  // namespace

ClockFit fit_clock(const std::vector<ClockPoint>& points) {
  std::set<double> clocks;
  for (const ClockPoint& p : points) {
    if (!(p.mhz > 0)) {
      throw InvalidArgument(p.file + ": SM clock " + std::to_string(p.mhz) + " MHz is not positive");
    }
    clocks.insert(p.mhz);
  }
  if (clocks.size() < 2) {
    throw InvalidArgument("T(f) = C/f + B needs points at 2 or more distinct SM clocks; got " +
                          std::to_string(clocks.size()) + " (" + std::to_string(points.size()) +
                          " points)");
  }
  // Least squares of y = T against x = 1/f: C = cov(x, y) / var(x), B = mean(y) - C mean(x).
  const double n = static_cast<double>(points.size());
  double mx = 0, my = 0;
  for (const ClockPoint& p : points) mx += 1 / p.mhz, my += p.us;
  mx /= n, my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (const ClockPoint& p : points) {
    const double dx = 1 / p.mhz - mx, dy = p.us - my;
    sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
  }
  ClockFit fit;
  fit.c_cycles = sxy / sxx;
  fit.b_us = my - fit.c_cycles * mx;
  double residual = 0;
  for (const ClockPoint& p : points) {
    const double e = p.us - (fit.c_cycles / p.mhz + fit.b_us);
    residual += e * e;
  }
  fit.r2 = syy > 0 ? 1 - residual / syy : 1;
  fit.points = points.size();
  fit.clocks = clocks.size();
  fit.min_mhz = *clocks.begin();
  fit.max_mhz = *clocks.rbegin();
  return fit;
}

std::vector<ClockCase> read_clock_cases(const std::vector<std::string>& files) {
  std::vector<ClockCase> cases;
  for (const std::string& file : files) {
    if (add_points(file, cases) == 0) {
      throw Error(file + ": no result with environment.sm_clock_mhz and a metric in a unit of "
                  "time (fit-clock reads the GPU experiments' results)");
    }
  }
  return cases;
}

int fit_clock_main(int argc, char** argv) {
  const Arguments a(argc, argv);
  const std::vector<std::string> files =
      a.positionals("RESULTS.json", "result files of the GPU experiments taken at different locked SM clocks; "
                                    "f is each run's environment.sm_clock_mhz, T the metric's p50 in us");
  a.check_all_used();  // --help: the list above
  if (files.size() < 2) {
    throw InvalidArgument("give 2 or more result files taken at different SM clocks (got " +
                          std::to_string(files.size()) + ")");
  }
  const std::vector<ClockCase> cases = read_clock_cases(files);  // every file read before output
  size_t fitted = 0;
  std::printf("%-20s %-32s %-16s %6s %13s %11s %9s %7s %13s\n", "experiment", "case", "metric",
              "points", "f (MHz)", "C (cycles)", "B (us)", "R2", "C/f at top");
  for (const ClockCase& c : cases) {
    std::set<double> clocks;
    for (const ClockPoint& p : c.points) clocks.insert(p.mhz);
    if (clocks.size() < 2) {
      std::printf("%-20s %-32s %-16s not fitted: seen at %zu clock (%.0f MHz)\n",
                  c.experiment.c_str(), c.label.c_str(), c.metric.c_str(), clocks.size(),
                  *clocks.begin());
      continue;
    }
    const ClockFit f = fit_clock(c.points);
    const double sensitive = f.c_cycles / f.max_mhz;
    const double share = sensitive + f.b_us != 0 ? 100 * sensitive / (sensitive + f.b_us) : 0;
    char range[32];
    std::snprintf(range, sizeof range, "%.0f-%.0f", f.min_mhz, f.max_mhz);
    std::printf("%-20s %-32s %-16s %6zu %13s %11.0f %9.3f %7.4f %12.0f%%\n", c.experiment.c_str(),
                c.label.c_str(), c.metric.c_str(), f.points, range, f.c_cycles, f.b_us, f.r2,
                share);
    ++fitted;
  }
  if (fitted == 0) {
    throw InvalidArgument("no case was measured at 2 or more distinct SM clocks in these files");
  }
  std::printf("T(f) = C/f + B: C in cycles, B in us; 'C/f at top' is the clock-sensitive share of "
              "T at the highest clock (Figure 5, Table 6)\n");
  return 0;
}

}  // namespace dissect::bench
