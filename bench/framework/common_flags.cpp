#include "dissect/bench/common_flags.h"

#include "dissect/bench/progress.h"
#include "dissect/bench/results.h"
#include "dissect/common/error.h"

namespace dissect::bench {

void read_progress_flags(const Arguments& arguments) {
  const bool quiet = arguments.flag("quiet", "no progress lines on stderr, even on a terminal");
  const bool progress = arguments.flag(
      "progress", "a progress line per finished case on stderr, with an ETA, even when stderr is not a terminal");
  if (quiet && progress) throw InvalidArgument("--quiet and --progress contradict each other; give one");
  set_progress_mode(quiet ? ProgressMode::quiet : progress ? ProgressMode::always : ProgressMode::automatic);
}

OutputFlags read_common_flags(const Arguments& arguments) {
  OutputFlags out;
  out.json = arguments.text("output", "", "write the results as JSON to this file (docs/results.schema.json)");
  out.csv = arguments.text("csv", "", "write one CSV row per result, metric and run to this file");
  set_keep_raw_samples(arguments.flag(
      "raw", "keep every sample: each run's times in measured order go into the JSON (`raw`)"));
  read_progress_flags(arguments);
  return out;
}

}  // namespace dissect::bench
