// `dissect report`: runs every experiment registered with in_report, writes results.json, then
// scripts/report.py turns it into report.md with tables and PNG plots.
#pragma once

#include <string>

#include "dissect/bench/experiment.h"

namespace dissect::bench {

struct ReportOptions {
  std::string directory;  // --output-dir
  bool quick = false;     // --quick
  std::string only;       // --only: a comma list of experiments, "" for the report's own
};

// Every flag of `dissect report` (the progress mode is set from them), then check_all_used():
// with --help that throws HelpRequested with their list.
ReportOptions read_report_options(const Arguments& arguments);

int report_main(int argc, char** argv);

}  // namespace dissect::bench
