// `dissect fit-clock RESULTS...`: Figure 5 and Table 6 (Appendix B.1) from result files taken at
// different locked SM clocks on a user's machine (dissect never changes a clock itself).
//
// Each case (experiment, label, metric) is a point per file: f = the effective SM clock the run
// recorded (environment "sm_clock_mhz", MHz: clock64 against %globaltimer), T = the metric's p50
// (median over runs) in µs. Least squares of T against 1/f gives T(f) = C/f + B with C in cycles
// (µs x MHz) and B in µs, and R² of that line, as Table 6 prints them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dissect::bench {

struct ClockPoint {
  double mhz = 0;    // effective SM clock of the run
  double us = 0;     // the case's p50
  std::string file;  // where the point was read
};

struct ClockFit {
  double c_cycles = 0;  // clock-sensitive coefficient C
  double b_us = 0;      // clock-insensitive intercept B
  double r2 = 0;        // of T against 1/f; 1 when every point is on the line
  size_t points = 0;
  size_t clocks = 0;    // distinct clocks among the points
  double min_mhz = 0, max_mhz = 0;
};

// Throws InvalidArgument when the points have fewer than 2 distinct clocks (no line through one
// abscissa) or a clock that is not positive.
ClockFit fit_clock(const std::vector<ClockPoint>& points);

struct ClockCase {
  std::string experiment, label, metric;
  std::vector<ClockPoint> points;  // one per file that has the case, in file order
};

// Reads results files (docs/results.schema.json). Every result that carries a metric in a unit of
// time becomes a point of its case; failed experiments and metrics in other units (rates,
// "cycles") are skipped. Throws Error naming the file, the result and the field when a file cannot
// be read, is not a results document, or a timed result has no usable sm_clock_mhz.
std::vector<ClockCase> read_clock_cases(const std::vector<std::string>& files);

// The command: fits every case seen at 2 or more distinct clocks and prints Table 6's columns
// (C cycles, B µs, R²) with the clock-sensitive share at the top clock; lists the cases seen at
// one clock. Returns 0; throws InvalidArgument (usage, no case at 2 clocks: `dissect` exits 2) or
// Error (a file unreadable or malformed: exit 1), each naming what it refuses.
int fit_clock_main(int argc, char** argv);

}  // namespace dissect::bench
