#include <string>

#include "dissect/bench/experiment.h"
#include "dissect/common/error.h"
#include "dissect/mlx5/ring.h"

namespace dissect::bench {

Arguments::Arguments(int argc, char** argv) {
  command_line_ = "dissect";
  for (int i = 0; i < argc; ++i) command_line_ += std::string(" ") + argv[i];
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0) throw InvalidArgument("unexpected argument '" + word + "'");
    word = word.substr(2);
    const auto equals = word.find('=');
    if (equals != std::string::npos) {
      values_[word.substr(0, equals)] = word.substr(equals + 1);
    } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      values_[word] = argv[++i];
    } else {
      values_[word] = "";
    }
  }
}

std::string Arguments::text(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  used_[name] = true;
  if (it->second.empty()) throw InvalidArgument("--" + name + " needs a value");
  return it->second;
}

uint64_t Arguments::integer(const std::string& name, uint64_t fallback, uint64_t min,
                            uint64_t max) const {
  const std::string value = text(name, "");
  if (value.empty()) return fallback;
  size_t consumed = 0;
  unsigned long long parsed = 0;
  try {
    parsed = std::stoull(value, &consumed, 0);
  } catch (const std::exception&) {
    consumed = 0;
  }
  if (consumed != value.size() || value[0] == '-') {
    throw InvalidArgument("--" + name + " = '" + value + "' is not a non-negative integer");
  }
  if (parsed < min || parsed > max) {
    throw InvalidArgument("--" + name + " = " + value + " is out of range [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]");
  }
  return parsed;
}

uint64_t Arguments::power_of_two(const std::string& name, uint64_t fallback, uint64_t max) const {
  const uint64_t value = integer(name, fallback, 0, UINT64_MAX);
  if (!mlx5::is_power_of_two(value) || value > max) {
    throw InvalidArgument("--" + name + " = " + std::to_string(value) +
                          " must be a non-zero power of two no larger than " + std::to_string(max));
  }
  return value;
}

bool Arguments::flag(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return false;
  used_[name] = true;
  if (!it->second.empty()) throw InvalidArgument("--" + name + " takes no value");
  return true;
}

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
  for (const auto& [name, value] : values_) {
    if (!used_.count(name)) throw InvalidArgument("unknown flag --" + name);
  }
}

}  // namespace dissect::bench
