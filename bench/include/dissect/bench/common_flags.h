// The flags every experiment takes from `dissect` itself rather than from its own code: where the
// results go, --raw and the progress mode. Read by main before the experiment reads its own, and
// by `dissect report` (the progress mode); flag_help_test reads them as main does.
#pragma once

#include <string>

#include "dissect/bench/experiment.h"

namespace dissect::bench {

struct OutputFlags {
  std::string json;  // --output: results JSON, "" for none
  std::string csv;   // --csv
};

// --quiet and --progress: sets the progress mode (progress.h); throws when both are given.
void read_progress_flags(const Arguments& arguments);

// --output, --csv, --raw (set_keep_raw_samples) and the progress flags.
OutputFlags read_common_flags(const Arguments& arguments);

}  // namespace dissect::bench
