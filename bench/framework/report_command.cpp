#include "report_command.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/common/error.h"
#include "dissect/telemetry/session.h"

namespace dissect::bench {
namespace {

// Arguments for one experiment inside the report: `--quick` trades precision for time.
Arguments arguments_for(const Experiment& experiment, bool quick) {
  std::vector<std::string> words = {experiment.name};
  if (quick) words.insert(words.end(), {"--quick"});
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return Arguments(static_cast<int>(argv.size()), argv.data());
}

std::string quote(const std::string& text) { return "'" + text + "'"; }

}  // namespace

int report_main(int argc, char** argv) {
  Arguments arguments(argc, argv);
  const std::string directory = arguments.text("output-dir", "report");
  const bool quick = arguments.flag("quick");
  arguments.provider({"softnic"});  // the report's experiments run on the softnic only
  arguments.check_all_used();
  if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error("cannot create the report directory '" + directory + "'");
  }
  Report report;
  int status = 0;
  for (const Experiment& experiment : experiments()) {
    if (!experiment.in_report) continue;
    std::printf("== %s: %s\n", experiment.name, experiment.summary);
    std::fflush(stdout);
    Report part;
    status |= experiment.run(arguments_for(experiment, quick), part);
    part.print_table(stdout);
    for (const Result& r : part.results()) report.add(r);
  }
  const std::string results = directory + "/results.json";
  report.write_json(results, arguments.command_line());
  const std::string script = std::string(DISSECT_SOURCE_DIR) + "/scripts/report.py";
  std::string command = "python3 " + quote(script) + " " + quote(results) + " " + quote(directory);
  // With DISSECT_TELEMETRY_ENABLE=1 the report gains a telemetry summary of this process's file.
  if (telemetry::Session* session = telemetry::process_session()) {
    telemetry::finalize_process_session();
    command += " " + quote(session->output_path());
  }
  if (std::system(command.c_str()) != 0) {
    throw Error("writing the report failed: " + command);
  }
  std::printf("report: %s/report.md\n", directory.c_str());
  return status;
}

}  // namespace dissect::bench
