#include "report.h"

#include <unistd.h>

namespace dissect::telemetry {

void report(const std::string& message) {
  std::string line = "dissect telemetry: " + message + "\n";
  // One write(2) per line; a short write is not retried because a report must never block a run.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace dissect::telemetry
