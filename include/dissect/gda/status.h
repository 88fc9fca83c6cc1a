// The gda data path's results (common/status.h); a bounded gda wait gives up through
// report_timeout(..., WaitOn::qp, qpn, ...) (common/timeout.h).
#pragma once

#include "dissect/common/status.h"
#include "dissect/common/timeout.h"

namespace dissect::gda {

using dissect::Status;
using dissect::to_string;
using dissect::report_timeout;
using dissect::WaitOn;

}  // namespace dissect::gda
