#include <CLI/CLI.hpp>

#include <algorithm>
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
  static constexpr const char* HELP_ABOUT = "this list: every flag, its default, allowed values and meaning";

 public:
  explicit Parser(std::vector<std::string> words) : words_(std::move(words)) {
    app_.allow_extras();
    app_.set_help_flag();  // --help is ours: it must wait until every flag is declared
    help_ = app_.add_flag("--help", HELP_ABOUT)->disable_flag_override();
    parse();
  }

  // The values given for --name: empty when absent, two or more when repeated.
  // `alias` is a one-letter short form ("b" for -b), or empty.
  std::vector<std::string> option(const std::string& name, const std::string& type,
                                  const std::string& fallback, const std::string& about,
                                  const std::string& alias = "") {
    CLI::Option* o = app_.get_option_no_throw("--" + name);
    if (o == nullptr) {
      const std::string names = alias.empty() ? "--" + name : "-" + alias + ",--" + name;
      o = app_.add_option(names, about)->type_name(type)->default_str(fallback);
      o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      declared_.push_back({name, type, fallback, about});
      parse();
    } else {
      describe(name, about);
    }
    return once(name, o->results());
  }

  bool flag(const std::string& name, const std::string& about) {
    CLI::Option* o = app_.get_option_no_throw("--" + name);
    if (o == nullptr) {
      o = app_.add_flag("--" + name, about)->disable_flag_override();
      declared_.push_back({name, "", "", about});
      parse();
    } else {
      describe(name, about);
    }
    if (o->count() > 1) {
      throw InvalidArgument("--" + name + " is given " + std::to_string(o->count()) + " times; give it once");
    }
    return o->count() == 1;
  }

  // The words that are not flags (fit-clock's result files): one positional of any count.
  std::vector<std::string> positionals(const std::string& name, const std::string& about) {
    CLI::Option* o = app_.get_option_no_throw(name);
    if (o == nullptr) {
      o = app_.add_option(name, about)->type_name("")->expected(-1);
      o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      declared_.push_back({name, "...", "", about});
      parse();
    }
    return o->results();
  }

  bool help() const { return help_->count() > 0; }
  const std::vector<FlagHelp>& declared() const { return declared_; }
  bool given(const std::string& name) const {
    const CLI::Option* o = app_.get_option_no_throw("--" + name);
    return o != nullptr && o->count() > 0;
  }
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

  // A flag read again (main reads --raw, an experiment reads it to say what it keeps): the later,
  // more specific description is the one --help shows.
  void describe(const std::string& name, const std::string& about) {
    if (about.empty()) return;
    app_.get_option("--" + name)->description(about);
    for (FlagHelp& f : declared_) {
      if (f.name == name) f.description = about;
    }
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
  std::vector<FlagHelp> declared_ = {{"help", "", "", HELP_ABOUT}};
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

std::string Arguments::text(const std::string& name, const std::string& fallback,
                            const std::string& about) const {
  const auto values = parser_->option(name, "TEXT", fallback, about);
  if (values.empty() || parser_->help()) return fallback;
  if (values[0].empty()) throw InvalidArgument("--" + name + " needs a value");
  return values[0];
}

uint64_t Arguments::integer(const std::string& name, uint64_t fallback, uint64_t min, uint64_t max,
                            const std::string& about) const {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const auto values = parser_->option(name, "UINT in " + range, std::to_string(fallback), about);
  if (values.empty() || parser_->help()) return fallback;
  const uint64_t parsed = parse_decimal(name, values[0]);
  if (parsed < min || parsed > max) {
    throw InvalidArgument("--" + name + " = " + values[0] + " is out of range " + range);
  }
  return parsed;
}

std::vector<uint64_t> Arguments::integers(const std::string& name,
                                          const std::vector<uint64_t>& fallback, uint64_t min,
                                          uint64_t max, const std::string& about) const {
  std::string fallback_text;
  for (uint64_t v : fallback) fallback_text += (fallback_text.empty() ? "" : ",") + std::to_string(v);
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const auto values = parser_->option(name, "UINT,... in " + range, fallback_text, about);
  if (values.empty() || parser_->help()) return fallback;
  std::vector<uint64_t> out;
  const std::string& text = values[0];
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const uint64_t v = parse_decimal(name, item);
    if (v < min || v > max) {
      throw InvalidArgument("--" + name + " item " + item + " is out of range " + range);
    }
    out.push_back(v);
    at = comma + 1;
  }
  return out;
}

uint64_t Arguments::power_of_two(const std::string& name, uint64_t fallback, uint64_t max,
                                 const std::string& about) const {
  const auto values =
      parser_->option(name, "POW2 <= " + std::to_string(max), std::to_string(fallback), about);
  if (values.empty() || parser_->help()) return fallback;
  const uint64_t value = parse_decimal(name, values[0]);
  if (!mlx5::is_power_of_two(value) || value > max) {
    throw InvalidArgument("--" + name + " = " + std::to_string(value) +
                          " must be a non-zero power of two no larger than " + std::to_string(max));
  }
  return value;
}

std::vector<std::string> Arguments::positionals(const std::string& name, const std::string& about) const {
  std::vector<std::string> words = parser_->positionals(name, about);
  if (parser_->help()) return {};
  return words;
}

bool Arguments::flag(const std::string& name, const std::string& about) const {
  return parser_->flag(name, about);
}

namespace {

std::string joined(const std::vector<std::string>& words, const char* separator) {
  std::string all;
  for (const auto& w : words) all += (all.empty() ? "" : separator) + w;
  return all;
}

std::string not_allowed(const std::string& name, const std::string& value,
                        const std::vector<std::string>& allowed) {
  return "--" + name + " = '" + value + "' is not one of the allowed values: " +
         joined(allowed, ", ");
}

bool member(const std::vector<std::string>& allowed, const std::string& value) {
  for (const auto& a : allowed) {
    if (a == value) return true;
  }
  return false;
}

// "512", "4K", "1M" in bytes; throws naming the flag.
uint64_t parse_size(const std::string& name, const std::string& item, uint64_t min, uint64_t max) {
  std::string digits = item;
  uint64_t scale = 1;
  if (digits.size() > 3 && digits.compare(digits.size() - 2, 2, "iB") == 0) digits.resize(digits.size() - 2);
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) scale = 1024;
  if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) scale = 1024 * 1024;
  if (scale != 1) digits.pop_back();
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "] bytes";
  uint64_t value = 0;
  try {
    value = parse_decimal(name, digits);
  } catch (const InvalidArgument&) {
    throw InvalidArgument("--" + name + ": '" + item + "' is not a size in " + range +
                          " (decimal, optional K, M, KiB or MiB)");
  }
  if (value > max / scale || value * scale < min) {
    throw InvalidArgument("--" + name + ": '" + item + "' is out of range " + range);
  }
  return value * scale;
}

}  // namespace

std::string Arguments::choice(const std::string& name, const std::string& fallback,
                              const std::vector<std::string>& allowed,
                              const std::string& about) const {
  const auto values = parser_->option(name, "{" + joined(allowed, "|") + "}", fallback, about);
  if (values.empty() || parser_->help()) return fallback;
  if (!member(allowed, values[0])) throw InvalidArgument(not_allowed(name, values[0], allowed));
  return values[0];
}

std::vector<std::string> Arguments::choices(const std::string& name, const std::string& fallback,
                                            const std::vector<std::string>& allowed,
                                            const std::string& about) const {
  const auto values =
      parser_->option(name, "{" + joined(allowed, "|") + "},...", fallback, about);
  const std::string text = values.empty() || parser_->help() ? fallback : values[0];
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    if (!member(allowed, item)) throw InvalidArgument(not_allowed(name, item, allowed));
    if (member(out, item)) throw InvalidArgument("--" + name + " names '" + item + "' twice");
    out.push_back(item);
    at = comma + 1;
  }
  return out;
}

std::vector<uint64_t> Arguments::sizes(const std::vector<uint64_t>& fallback, uint64_t min,
                                       uint64_t max, const std::string& what) const {
  std::string fallback_text;
  for (uint64_t v : fallback) fallback_text += (fallback_text.empty() ? "" : ",") + std::to_string(v);
  const auto list = parser_->option("sizes", "SIZE,...", fallback_text,
                                    "the sweep's sizes (" + what + "), bytes; K, M, KiB, MiB scale by 1024");
  const auto low = parser_->option("min-bytes", "SIZE", "",
                                   "nccl-tests' -b: the sweep's first size (" + what + "), bytes", "b");
  const auto high = parser_->option("max-bytes", "SIZE", "",
                                    "nccl-tests' -e: the sweep's last size (" + what + "), bytes", "e");
  const auto factor = parser_->option("step-factor", "UINT >= 2", "2",
                                      "nccl-tests' -f: each size of the -b/-e sweep is the last times this", "f");
  if (parser_->help()) return fallback;
  const bool range = !low.empty() || !high.empty() || !factor.empty();
  if (!list.empty() && range) {
    throw InvalidArgument("--sizes and -b/-e/-f (--min-bytes, --max-bytes, --step-factor) both given; give one");
  }
  std::vector<uint64_t> out;
  if (!list.empty()) {
    const std::string& text = list[0];
    size_t at = 0;
    while (at <= text.size()) {
      const size_t comma = std::min(text.find(',', at), text.size());
      out.push_back(parse_size("sizes", text.substr(at, comma - at), min, max));
      at = comma + 1;
    }
  } else if (range) {
    if (low.empty() || high.empty()) {
      throw InvalidArgument("-b (--min-bytes) and -e (--max-bytes) go together: give both");
    }
    const uint64_t b = parse_size("min-bytes", low[0], min, max);
    const uint64_t e = parse_size("max-bytes", high[0], min, max);
    const uint64_t f = factor.empty() ? 2 : parse_decimal("step-factor", factor[0]);
    if (f < 2 || f > 1024) {
      throw InvalidArgument("--step-factor = " + std::to_string(f) + " is out of range [2, 1024]");
    }
    if (b > e) {
      throw InvalidArgument("-b (--min-bytes) = " + std::to_string(b) + " is larger than -e (--max-bytes) = " +
                            std::to_string(e));
    }
    for (uint64_t v = b; v <= e; v *= f) {
      out.push_back(v);
      if (v > e / f) break;
    }
  } else {
    return fallback;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Arguments::help_requested() const { return parser_->help(); }

std::vector<FlagHelp> Arguments::declared() const { return parser_->declared(); }

bool Arguments::given(const std::string& name) const { return parser_->given(name); }

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

// What --provider picks, among the providers this subcommand drives.
std::string provider_about(const std::vector<std::string>& supported) {
  std::string about = "the NIC: softnic, the in-process software model of the mlx5 interface (not a ConnectX)";
  if (member(supported, "mlx5")) about += "; mlx5, a ConnectX through rdma-core, one rank per NIC";
  return about;
}

}  // namespace

std::string Arguments::subcommand() const {
  const size_t start = command_line_.find(' ');
  if (start == std::string::npos) return "?";
  const size_t end = command_line_.find(' ', start + 1);
  return command_line_.substr(start + 1, end == std::string::npos ? end : end - start - 1);
}

std::string Arguments::provider(const std::vector<std::string>& supported) const {
  const auto values = parser_->option("provider", "{" + joined(supported, "|") + "}", "softnic",
                                      provider_about(supported));
  if (values.empty() || parser_->help()) return "softnic";
  const std::string& name = values[0];
  for (const auto& s : supported) {
    if (s == name) return name;
  }
  if (name == "mlx5" || name == "ibverbs") {
    throw InvalidArgument(not_wired(name, subcommand(), supported));
  }
  throw InvalidArgument("unknown provider: " + not_allowed("provider", name, supported));
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
