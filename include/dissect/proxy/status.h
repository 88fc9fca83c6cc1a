// The proxy producer's results (common/status.h); a bounded proxy wait gives up through
// report_timeout(..., WaitOn::ring, ring_id, ...) (common/timeout.h), which traps on the device: a
// kernel whose proxy is gone cannot make progress.
#pragma once

#include "dissect/common/status.h"
#include "dissect/common/timeout.h"

namespace dissect::proxy {

using dissect::Status;
using dissect::to_string;
using dissect::report_timeout;
using dissect::WaitOn;

}  // namespace dissect::proxy
