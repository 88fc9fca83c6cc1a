// `dissect report`: runs every experiment registered with in_report, writes results.json, then
// scripts/report.py turns it into report.md with tables and PNG plots.
#pragma once

namespace dissect::bench {
int report_main(int argc, char** argv);
}
