#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

#include "dissect/bench/experiment.h"
#include "dissect/common/error.h"
#include "dissect/mlx5/ring.h"

namespace dissect::bench {

// CLI11 fills an option only while parsing, and an experiment declares its flags one by one as
// it reads them: each declaration parses the words again (a few dozen words, once per flag).
// Flags not declared yet are CLI11's extras until then.
class Arguments::Parser {
 public:
  explicit Parser(std::vector<std::string> words) : words_(std::move(words)) {
    app_.allow_extras();
    app_.set_help_flag();  // --help is ours: it must wait until every flag is declared
    help_ = app_.add_flag("--help", "this list")->disable_flag_override();
    parse();
  }

  // The values given for --name: empty when absent, two or more when repeated.
  std::vector<std::string> option(const std::string& name, const std::string& type,
                                  const std::string& fallback) {
    CLI::Option* o = app_.get_option_no_throw("--" + name);
    if (o == nullptr) {
      o = app_.add_option("--" + name)->type_name(type)->default_str(fallback);
      o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      parse();
    }
    return once(name, o->results());
  }

  bool flag(const std::string& name) {
    CLI::Option* o = app_.get_option_no_throw("--" + name);
    if (o == nullptr) {
      o = app_.add_flag("--" + name)->disable_flag_override();
      parse();
    }
    if (o->count() > 1) {
      throw InvalidArgument("--" + name + " is given " + std::to_string(o->count()) + " times; give it once");
    }
    return o->count() == 1;
  }

  bool help() const { return help_->count() > 0; }
  std::vector<std::string> unread() const { return app_.remaining(); }
  std::string usage(const std::string& subcommand) {
    app_.name("dissect " + subcommand);
    return app_.help();
  }

 private:
  static std::vector<std::string> once(const std::string& name, const std::vector<std::string>& values) {
    if (values.size() > 1) {
      std::string all;
      for (const auto& v : values) all += (all.empty() ? "'" : ", '") + v + "'";
      throw InvalidArgument("--" + name + " is given " + std::to_string(values.size()) + " times (" + all +
                            "); give it once");
    }
    return values;
  }

  void parse() {
    std::vector<std::string> reversed(words_.rbegin(), words_.rend());  // CLI11 pops from the back
    try {
      app_.parse(reversed);
    } catch (const CLI::ParseError& e) {
      throw InvalidArgument(e.what());
    }
  }

  std::vector<std::string> words_;  // the flags, without the subcommand
  CLI::App app_;
  CLI::Option* help_ = nullptr;
};

namespace {

std::vector<std::string> to_words(int argc, char** argv) { return {argv, argv + argc}; }

// Decimal only: strtoull's base 0 read "--runs 010" as 8.
uint64_t parse_decimal(const std::string& name, const std::string& value) {
  uint64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, parsed, 10);
  if (value.empty() || stop != end || error != std::errc()) {
    throw InvalidArgument("--" + name + " = '" + value + "' is not a non-negative decimal integer" +
                          (error == std::errc::result_out_of_range ? " below 2^64" : ""));
  }
  if (value.size() > 1 && value[0] == '0') {
    throw InvalidArgument("--" + name + " = '" + value +
                          "' has a leading zero; write it in decimal without one (it is not octal)");
  }
  return parsed;
}

}  // namespace

Arguments::Arguments(int argc, char** argv) : Arguments(to_words(argc, argv)) {}

Arguments::Arguments(const std::vector<std::string>& words)
    : parser_(std::make_unique<Parser>(std::vector<std::string>(words.begin() + 1, words.end()))) {
  command_line_ = "dissect";
  for (const auto& w : words) command_line_ += " " + w;
}

Arguments::Arguments(Arguments&&) noexcept = default;
Arguments::~Arguments() = default;

std::string Arguments::text(const std::string& name, const std::string& fallback) const {
  const auto values = parser_->option(name, "TEXT", fallback);
  if (values.empty() || parser_->help()) return fallback;
  if (values[0].empty()) throw InvalidArgument("--" + name + " needs a value");
  return values[0];
}

uint64_t Arguments::integer(const std::string& name, uint64_t fallback, uint64_t min,
                            uint64_t max) const {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const auto values = parser_->option(name, "UINT in " + range, std::to_string(fallback));
  if (values.empty() || parser_->help()) return fallback;
  const uint64_t parsed = parse_decimal(name, values[0]);
  if (parsed < min || parsed > max) {
    throw InvalidArgument("--" + name + " = " + values[0] + " is out of range " + range);
  }
  return parsed;
}

uint64_t Arguments::power_of_two(const std::string& name, uint64_t fallback, uint64_t max) const {
  const auto values = parser_->option(name, "POW2 <= " + std::to_string(max), std::to_string(fallback));
  if (values.empty() || parser_->help()) return fallback;
  const uint64_t value = parse_decimal(name, values[0]);
  if (!mlx5::is_power_of_two(value) || value > max) {
    throw InvalidArgument("--" + name + " = " + std::to_string(value) +
                          " must be a non-zero power of two no larger than " + std::to_string(max));
  }
  return value;
}

bool Arguments::flag(const std::string& name) const { return parser_->flag(name); }

bool Arguments::help_requested() const { return parser_->help(); }

namespace {

// The NIC providers exist as libraries but only some subcommands open one: say so instead of
// running on the softnic under another name.
std::string not_wired(const std::string& provider, const std::string& subcommand,
                      const std::vector<std::string>& supported) {
  std::string list;
  for (const auto& s : supported) list += (list.empty() ? "" : ", ") + s;
  if (list != "softnic") {
    return "provider '" + provider + "' is not wired into '" + subcommand + "': it runs on " +
           list + " (see docs/hardware.md)";
  }
  return "provider '" + provider + "' is not wired into '" + subcommand +
         "': it drives the softnic in process and has no path that opens a NIC through the "
         "bootstrap yet (the " + provider + " provider is built but has never run on a NIC; "
         "see docs/hardware.md)";
}

}  // namespace

std::string Arguments::subcommand() const {
  const size_t start = command_line_.find(' ');
  if (start == std::string::npos) return "?";
  const size_t end = command_line_.find(' ', start + 1);
  return command_line_.substr(start + 1, end == std::string::npos ? end : end - start - 1);
}

std::string Arguments::provider(const std::vector<std::string>& supported) const {
  const std::string name = text("provider", "softnic");
  for (const auto& s : supported) {
    if (s == name) return name;
  }
  if (name == "mlx5" || name == "ibverbs") {
    throw InvalidArgument(not_wired(name, subcommand(), supported));
  }
  std::string list;
  for (const auto& s : supported) list += (list.empty() ? "" : ", ") + s;
  throw InvalidArgument("unknown provider '" + name + "' for this experiment (supported: " + list +
                        ")");
}

void Arguments::check_all_used() const {
  if (parser_->help()) throw HelpRequested(parser_->usage(subcommand()));
  for (const std::string& word : parser_->unread()) {
    if (word.rfind("--", 0) == 0) {
      throw InvalidArgument("unknown flag " + word.substr(0, word.find('=')));
    }
    throw InvalidArgument("unexpected argument '" + word + "'");
  }
}

}  // namespace dissect::bench
