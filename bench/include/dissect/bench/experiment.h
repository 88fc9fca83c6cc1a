// The `dissect` suite: every experiment is a subcommand registered here, one experiment per file.
//
// To add one: in its own .cpp (or .cu) under bench/, define `int run_<name>(const Arguments&,
// Report&)` and register it at namespace scope:
//   static const bool registered = dissect::bench::register_experiment(
//       {"latency", "issue, put+completion and round trip of one 8 B write", run_latency, true});
// It reads its flags through Arguments' getters, each with a one-line description (`about`), then
// calls check_all_used(); main adds --output, --csv, --raw, --quiet and --progress (common_flags.h).
// The last field says whether `dissect report` runs it. bench/CMakeLists.txt builds every source
// of bench/*/ into an object library, so registration survives static linking.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dissect/bench/results.h"

namespace dissect::bench {

// One declared flag as --help lists it.
struct FlagHelp {
  std::string name;         // without the dashes
  std::string type;         // "UINT in [1, 100]", "{a|b}", "" for a flag without a value
  std::string fallback;     // the default, as text
  std::string description;  // the getter's `about`
};

// Flags of one subcommand, parsed by CLI11: `--name value` or `--name=value`, each at most once.
// An experiment declares a flag by reading it (the getters), then calls check_all_used() before
// it measures anything: that refuses flags nobody read, and with --help throws HelpRequested with
// the list of every flag read so far (its default, allowed values and description). Every getter
// validates and throws InvalidArgument naming the flag and the value; integers are decimal only.
// Every getter takes `about`: the flag's one-line description for --help (what it sets, its unit,
// the paper's name for the knob where it has one). It is part of the declaration so that no flag
// exists without one; flag_help_test fails on an empty one.
class Arguments {
 public:
  Arguments(int argc, char** argv);  // argv[0] is the subcommand
  explicit Arguments(const std::vector<std::string>& words);  // words[0] is the subcommand
  Arguments(Arguments&&) noexcept;
  ~Arguments();
  std::string text(const std::string& name, const std::string& fallback, const std::string& about) const;
  uint64_t integer(const std::string& name, uint64_t fallback, uint64_t min, uint64_t max,
                   const std::string& about) const;
  uint64_t power_of_two(const std::string& name, uint64_t fallback, uint64_t max,
                        const std::string& about) const;
  // A comma list of decimal integers ("1,4,16"), each in [min, max].
  std::vector<uint64_t> integers(const std::string& name, const std::vector<uint64_t>& fallback,
                                 uint64_t min, uint64_t max, const std::string& about) const;
  bool flag(const std::string& name, const std::string& about) const;  // present without a value
  // Every word that is not a flag, in order (`name` is how --help shows them: "RESULTS.json").
  std::vector<std::string> positionals(const std::string& name, const std::string& about) const;
  // An enumerated value: one of `allowed`, by name; anything else throws naming the flag and the
  // allowed values. --help shows them as {a|b|c}.
  std::string choice(const std::string& name, const std::string& fallback,
                     const std::vector<std::string>& allowed, const std::string& about) const;
  // A comma list of enumerated values ("shared,private"), each one of `allowed`, none twice.
  std::vector<std::string> choices(const std::string& name, const std::string& fallback,
                                   const std::vector<std::string>& allowed,
                                   const std::string& about) const;
  // The payload sizes of a sweep, in bytes, ascending: `--sizes 8,64,512` (K or KiB, M or MiB:
  // 1024, 1024^2), or nccl-tests' `-b MIN -e MAX -f FACTOR` (--min-bytes, --max-bytes,
  // --step-factor: MIN, MIN*F, ... up to MAX), or `fallback`. Each in [min, max]. `what`: what the
  // size is ("payload of one write"), for the four flags' descriptions.
  std::vector<uint64_t> sizes(const std::vector<uint64_t>& fallback, uint64_t min, uint64_t max,
                              const std::string& what) const;
  // The softnic is the provider every experiment supports; a subcommand lists the others it
  // drives (latency and rate: mlx5). A NIC provider it does not drive is refused by name.
  std::string provider(const std::vector<std::string>& supported) const;
  void check_all_used() const;  // throws naming the first flag nobody read, or HelpRequested
  // Every flag declared so far, in declaration order (--help itself included), for tests.
  std::vector<FlagHelp> declared() const;
  bool help_requested() const;
  bool given(const std::string& name) const;  // --name is on the command line (declared or not)
  const std::string& command_line() const { return command_line_; }
  std::string subcommand() const;  // "latency" for `dissect latency --provider mlx5`

 private:
  class Parser;
  std::unique_ptr<Parser> parser_;
  std::string command_line_;
};

// Thrown by check_all_used() under --help: what() is the subcommand's flag list.
class HelpRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Experiment {
  const char* name;
  const char* summary;
  int (*run)(const Arguments&, Report&);
  bool in_report;
  // Flags `dissect report` adds (space-separated; "" = none), e.g. "--sweep" so that the report
  // has every row its paper comparison reads.
  const char* report_flags = "";
};

bool register_experiment(const Experiment& experiment);
const std::vector<Experiment>& experiments();
const Experiment* find_experiment(const std::string& name);

}  // namespace dissect::bench
