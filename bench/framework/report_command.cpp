#include "report_command.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dissect/bench/common_flags.h"
#include "dissect/bench/experiment.h"
#include "dissect/common/error.h"
#include "dissect/common/output_file.h"
#include "dissect/telemetry/session.h"

namespace dissect::bench {
namespace {

// Arguments for one experiment inside the report: `--quick` trades precision for time.
Arguments arguments_for(const Experiment& experiment, bool quick) {
  std::vector<std::string> words = {experiment.name};
  if (quick) words.emplace_back("--quick");
  const std::string flags = experiment.report_flags;
  for (size_t at = 0; at < flags.size();) {
    const size_t space = std::min(flags.find(' ', at), flags.size());
    if (space > at) words.push_back(flags.substr(at, space - at));
    at = space + 1;
  }
  return Arguments(words);
}

// A test hook: DISSECT_TEST_THROW_IN=<experiment> makes that experiment throw before it runs, so
// that a test can show the report records the failure and runs the others.
void maybe_throw_for_test(const Experiment& experiment) {
  const char* name = std::getenv("DISSECT_TEST_THROW_IN");
  if (name != nullptr && std::strcmp(name, experiment.name) == 0) {
    throw Error(std::string("DISSECT_TEST_THROW_IN=") + name + " made it throw");
  }
}

// One experiment of the report; a throw is recorded with its error instead of ending the report.
int run_part(const Experiment& experiment, bool quick, Report& report) {
  std::printf("== %s: %s\n", experiment.name, experiment.summary);
  std::fflush(stdout);
  Report part;
  try {
    maybe_throw_for_test(experiment);
    const int status = experiment.run(arguments_for(experiment, quick), part);
    note_oversubscription(part);
    note_machine(part);
    part.print_table(stdout);
    for (const Result& r : part.results()) report.add(r);
    return status;
  } catch (const std::exception& e) {
    std::printf("FAILED %s: %s\n", experiment.name, e.what());
    report.add_failure(experiment.name, e.what());
    return 1;
  }
}

// The experiments named by --only (a comma list), or every one the report runs.
std::vector<const Experiment*> selected(const std::string& only) {
  std::vector<const Experiment*> chosen;
  if (only.empty()) {
    for (const Experiment& e : experiments())
      if (e.in_report) chosen.push_back(&e);
    return chosen;
  }
  size_t start = 0;
  while (start <= only.size()) {
    const size_t comma = std::min(only.find(',', start), only.size());
    const std::string name = only.substr(start, comma - start);
    const Experiment* e = find_experiment(name);
    if (e == nullptr) throw InvalidArgument("--only: '" + name + "' is not an experiment (dissect list)");
    chosen.push_back(e);
    start = comma + 1;
  }
  return chosen;
}

// Runs the report script with an argument vector: no shell sees the directory's name.
void run_script(const std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) throw Error(std::string("fork for the report script failed: ") + std::strerror(errno));
  if (child == 0) {
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "dissect report: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw Error(std::string("waitpid for the report script: ") + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const std::string& w : words) line += (line.empty() ? "" : " ") + w;
    throw Error("writing the report failed (" +
                (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                   : "killed by signal " + std::to_string(WTERMSIG(status))) +
                "): " + line);
  }
}

}  // namespace

ReportOptions read_report_options(const Arguments& arguments) {
  ReportOptions o;
  o.directory = arguments.text("output-dir", "report",
                               "the folder for results.json, results.csv, report.md and the plots");
  o.quick = arguments.flag("quick", "every experiment with --quick: fewer iterations and runs, "
                                    "minutes instead of an hour, wider spreads");
  o.only = arguments.text("only", "",
                          "a comma list of experiments to run (dissect list) instead of every one the report runs");
  arguments.provider({"softnic"});  // the report's experiments run on the softnic only
  read_progress_flags(arguments);
  arguments.check_all_used();
  return o;
}

int report_main(int argc, char** argv) {
  const Arguments arguments(argc, argv);
  const auto [directory, quick, only] = read_report_options(arguments);
  const std::vector<const Experiment*> chosen = selected(only);
  if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error("cannot create the report directory '" + directory + "': " + std::strerror(errno));
  }
  const std::string results = directory + "/results.json";
  if (const std::string problem = output_path_problem(results); !problem.empty()) {
    throw InvalidArgument("--output-dir '" + directory + "': '" + results + "' cannot be written: " + problem);
  }
  Report report;
  int status = 0;
  for (const Experiment* experiment : chosen) status |= run_part(*experiment, quick, report);
  report.write_json(results, arguments.command_line());
  report.write_csv(directory + "/results.csv");  // one row per result, metric and run
  std::vector<std::string> script = {"python3", std::string(DISSECT_SOURCE_DIR) + "/scripts/report.py",
                                     results, directory};
  // With DISSECT_TELEMETRY_ENABLE=1 the report gains a telemetry summary of this process's file.
  if (telemetry::Session* session = telemetry::process_session()) {
    telemetry::finalize_process_session();
    script.push_back(session->output_path());
  }
  run_script(script);
  std::printf("report: %s/report.md\n", directory.c_str());
  for (const auto& [experiment, error] : report.failures()) {
    std::fprintf(stderr, "dissect report: %s failed: %s\n", experiment.c_str(), error.c_str());
  }
  return status;
}

}  // namespace dissect::bench
