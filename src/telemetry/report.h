// One-line stderr reports: every telemetry failure is visible, none is fatal (the RCCL page).
#pragma once

#include <string>

namespace dissect::telemetry {

// Writes "dissect telemetry: <message>\n" to stderr in one write, so concurrent reports from
// several threads never interleave within a line.
void report(const std::string& message);

}  // namespace dissect::telemetry
