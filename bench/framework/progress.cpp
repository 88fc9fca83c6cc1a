#include "dissect/bench/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "dissect/common/clock.h"

namespace dissect::bench {
namespace {
std::atomic<ProgressMode> mode{ProgressMode::automatic};

std::string seconds(double s) {
  char text[32];
  if (s < 120) {
    std::snprintf(text, sizeof text, "%.1f s", s);
  } else {
    const int minutes = static_cast<int>(s / 60);
    std::snprintf(text, sizeof text, "%d min %02d s", minutes, static_cast<int>(s) - 60 * minutes);
  }
  return text;
}
}  // namespace

void set_progress_mode(ProgressMode m) { mode = m; }

bool progress_enabled() {
  switch (mode.load()) {
    case ProgressMode::always: return true;
    case ProgressMode::quiet: return false;
    case ProgressMode::automatic: break;
  }
  return isatty(STDERR_FILENO) == 1;
}

std::string progress_line(const std::string& experiment, size_t finished, size_t total,
                          double elapsed_s, const std::string& what) {
  std::string line = experiment + " [" + std::to_string(finished);
  if (total > 0) line += "/" + std::to_string(total);
  line += "] " + what + ": " + seconds(elapsed_s);
  if (total > 0 && finished > 0 && finished < total) {
    const double left = elapsed_s / static_cast<double>(finished) * static_cast<double>(total - finished);
    line += ", ETA " + seconds(left);
  } else if (total > 0 && finished >= total) {
    line += ", done";
  }
  return line;
}

Progress::Progress(std::string experiment, size_t total)
    : experiment_(std::move(experiment)), total_(total), began_ns_(now_ns()) {}

void Progress::done(const std::string& what) {
  ++finished_;
  if (!progress_enabled()) return;
  const double elapsed = static_cast<double>(now_ns() - began_ns_) / 1e9;
  std::fprintf(stderr, "%s\n", progress_line(experiment_, finished_, total_, elapsed, what).c_str());
  std::fflush(stderr);
}

}  // namespace dissect::bench
