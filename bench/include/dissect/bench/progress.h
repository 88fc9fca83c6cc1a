// Progress of a long experiment on stderr: one line per finished case, with the time so far and
// an estimate of the time left (the mean time per case so far times the cases left).
//
//   goodput [3/24] mini-proxy 4 KiB, run 1: 2.1 s, ETA 14.7 s
//
// Printed when stderr is a terminal, always with --progress, never with --quiet (main and
// `dissect report` set the mode from those flags); stdout (the tables) is never touched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dissect::bench {

enum class ProgressMode { automatic, always, quiet };  // automatic: when stderr is a terminal
void set_progress_mode(ProgressMode mode);
bool progress_enabled();

class Progress {
 public:
  Progress(std::string experiment, size_t total);  // total 0: unknown, no ETA
  void done(const std::string& what);               // one case finished
  // `more` cases on top of the total: a runner that learns its cases as it goes (the GPU ones
  // announce each experiment's runs before the first, GpuProgress).
  void expect(size_t more) { total_ += more; }
  size_t finished() const { return finished_; }

 private:
  std::string experiment_;
  size_t total_;
  size_t finished_ = 0;
  uint64_t began_ns_;
};

// The line Progress prints (without its newline), for tests.
std::string progress_line(const std::string& experiment, size_t finished, size_t total,
                          double elapsed_s, const std::string& what);

}  // namespace dissect::bench
