// dissect: the command line. `dissect list` names every experiment.
#include <cstdio>
#include <cstring>
#include <string>

#include "dissect/bench/common_flags.h"
#include "dissect/bench/experiment.h"
#include "dissect/bench/fit_clock.h"
#include "dissect/bench/progress.h"
#include "dissect/common/error.h"
#include "dissect/common/output_file.h"
#include "doctor_command.h"
#include "report_command.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: dissect <command> [--flag value ...]\n\n"
               "commands:\n"
               "  list                 the experiments, one line each\n"
               "  report               run the report's experiments; write results.json, report.md "
               "and plots (--output-dir DIR, --quick)\n"
               "  fit-clock            T(f) = C/f + B per case across result files taken at "
               "different locked SM clocks (Table 6)\n"
               "  doctor               check this machine for GPU-initiated RDMA (--provider ...)\n"
               );
  for (const auto& e : dissect::bench::experiments()) {
    std::fprintf(out, "  %-20s %s\n", e.name, e.summary);
  }
  std::fprintf(out,
               "\ncommon flags: --provider softnic, --runs N, --quick, --output FILE.json, --csv "
               "FILE.csv, --raw (per-sample times in the JSON), --progress, --quiet;\n"
               "--iterations N and --warmup N where an experiment times single operations; "
               "dissect <command> --help lists a command's flags\nlatency and rate also take --provider mlx5 on two ranks (--device mlx5_X, "
               "--gid-index N; docs/hardware.md)\nEvery number measured on the softnic is a "
               "software model, not a ConnectX.\n");
}

int run_experiment(const dissect::bench::Experiment& experiment, int argc, char** argv) {
  dissect::bench::Arguments arguments(argc, argv);
  const auto [output, csv] = dissect::bench::read_common_flags(arguments);
  // Before the run, which may measure for minutes: a path that cannot be written loses them all.
  for (const auto& [flag, path] : {std::pair{"--output", output}, std::pair{"--csv", csv}}) {
    if (path.empty() || arguments.help_requested()) continue;
    const std::string problem = dissect::output_path_problem(path);
    if (!problem.empty()) {
      throw dissect::InvalidArgument(std::string(flag) + " '" + path + "' cannot be written: " + problem);
    }
  }
  dissect::bench::Report report;
  const int status = experiment.run(arguments, report);
  dissect::bench::note_oversubscription(report);
  dissect::bench::note_machine(report);
  if (!report.served().empty()) {
    std::printf("%s\n", report.served().c_str());
    return status;
  }
  report.print_table(stdout);
  if (!output.empty()) {
    report.write_json(output, arguments.command_line());
    std::printf("results: %s\n", output.c_str());
  }
  if (!csv.empty()) {
    report.write_csv(csv);
    std::printf("csv: %s\n", csv.c_str());
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    if (command == "list") {
      for (const auto& e : dissect::bench::experiments()) std::printf("%s\n", e.name);
      return 0;
    }
    if (command == "doctor") return dissect::bench::doctor_main(argc - 1, argv + 1);
    if (command == "report") return dissect::bench::report_main(argc - 1, argv + 1);
    if (command == "fit-clock") return dissect::bench::fit_clock_main(argc - 1, argv + 1);
    const auto* experiment = dissect::bench::find_experiment(command);
    if (experiment == nullptr) {
      throw dissect::InvalidArgument("unknown command '" + command + "' (try: dissect list)");
    }
    try {
      return run_experiment(*experiment, argc - 1, argv + 1);
    } catch (const dissect::bench::HelpRequested& help) {
      std::printf("dissect %s: %s\n\n%s", experiment->name, experiment->summary, help.what());
      return 0;
    }
  } catch (const dissect::bench::HelpRequested& help) {
    std::printf("%s", help.what());
    return 0;
  } catch (const dissect::InvalidArgument& e) {
    std::fprintf(stderr, "dissect %s: %s\n", command.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect %s: error: %s\n", command.c_str(), e.what());
    return 1;
  }
}
