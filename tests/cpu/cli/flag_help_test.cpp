// Every flag of every registered experiment, and of `dissect report`, has a description in its
// --help: generated from the registry, so an experiment added later is checked without a line
// here. Also the flags the README promises every experiment takes, and the GPU experiments'
// --raw stance (honoured, or refused with the reason in --help).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "dissect/bench/common_flags.h"
#include "dissect/bench/experiment.h"
#include "report_command.h"

namespace dissect::bench {
namespace {

bool blank(const std::string& text) { return text.find_first_not_of(" \t") == std::string::npos; }

struct Help {
  std::vector<FlagHelp> flags;
  std::string text;  // what `dissect <name> --help` prints after its summary line
};

// What `dissect <experiment> --help` declares, read as main reads it: the common flags, then
// the experiment's own until check_all_used() throws HelpRequested.
Help help_of(const Experiment& experiment) {
  const Arguments arguments(std::vector<std::string>{experiment.name, "--help"});
  Help help;
  read_common_flags(arguments);
  Report report;
  try {
    experiment.run(arguments, report);
    ADD_FAILURE() << "dissect " << experiment.name << " --help ran instead of listing its flags";
  } catch (const HelpRequested& listed) {
    help.text = listed.what();
  }
  help.flags = arguments.declared();
  return help;
}

Help help_of_report() {
  const Arguments arguments(std::vector<std::string>{"report", "--help"});
  Help help;
  try {
    read_report_options(arguments);
    ADD_FAILURE() << "dissect report --help did not list its flags";
  } catch (const HelpRequested& listed) {
    help.text = listed.what();
  }
  help.flags = arguments.declared();
  return help;
}

void expect_described(const std::string& command, const Help& help) {
  EXPECT_FALSE(help.flags.empty()) << command;
  std::set<std::string> seen;
  for (const FlagHelp& f : help.flags) {
    EXPECT_FALSE(blank(f.description)) << "dissect " << command << " --" << f.name << " has no description";
    EXPECT_NE(help.text.find(f.description), std::string::npos)
        << "dissect " << command << " --help does not show the description of --" << f.name << ": "
        << help.text;
    EXPECT_TRUE(seen.insert(f.name).second) << "dissect " << command << " lists --" << f.name << " twice";
  }
}

TEST(FlagHelp, EveryFlagOfEveryExperimentHasADescription) {
  ASSERT_FALSE(experiments().empty());
  for (const Experiment& e : experiments()) expect_described(e.name, help_of(e));
}

TEST(FlagHelp, EveryFlagOfTheReportHasADescription) { expect_described("report", help_of_report()); }

// README: "Every experiment takes --runs, --quick, --output, --csv, --raw, --progress / --quiet and
// --provider"; and --help.
TEST(FlagHelp, EveryExperimentTakesTheFlagsTheReadmePromises) {
  for (const Experiment& e : experiments()) {
    std::set<std::string> names;
    for (const FlagHelp& f : help_of(e).flags) names.insert(f.name);
    for (const char* promised : {"runs", "quick", "output", "csv", "raw", "progress", "quiet", "provider", "help"}) {
      EXPECT_TRUE(names.count(promised)) << "dissect " << e.name << " does not take --" << promised;
    }
  }
}

// A GPU experiment either keeps its samples under --raw or says in --help why it refuses it.
TEST(FlagHelp, RawIsHonouredOrItsRefusalIsDescribed) {
  for (const Experiment& e : experiments()) {
    for (const FlagHelp& f : help_of(e).flags) {
      if (f.name != "raw") continue;
      const bool refused = f.description.rfind("refused: ", 0) == 0;
      // They time whole runs or launches: one number per run, no samples.
      const std::set<std::string> whole_runs = {"gpu-telemetry-rate", "gpu-kernel-cost"};
      EXPECT_EQ(refused, whole_runs.count(e.name) == 1)
          << "dissect " << e.name << " --raw: " << f.description;
    }
  }
}

// The tests above see what a getter was given: an empty description reaches declared() as empty.
TEST(FlagHelp, AnEmptyDescriptionReachesDeclared) {
  const Arguments arguments(std::vector<std::string>{"x", "--help"});
  arguments.integer("knob", 1, 0, 9, "");
  const std::vector<FlagHelp> flags = arguments.declared();
  ASSERT_EQ(flags.size(), 2u);  // --help, --knob
  EXPECT_EQ(flags[1].name, "knob");
  EXPECT_TRUE(blank(flags[1].description));
  EXPECT_EQ(flags[1].type, "UINT in [0, 9]");
  EXPECT_EQ(flags[1].fallback, "1");
}

}  // namespace
}  // namespace dissect::bench
