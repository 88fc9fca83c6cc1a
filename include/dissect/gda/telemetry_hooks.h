// The telemetry policy moved below gda, to nic/telemetry_policy.h; gda names it in gda/ordering.h.
// This header is kept only for gda/wqe.h's include while another change edits that file: remove
// it once wqe.h includes gda/ordering.h.
#pragma once

#include "dissect/gda/ordering.h"
