// What every GPU test executable shares: the check macro, the skip exit code, and a main that
// runs named cases (`<test> <case>...`; no case = all), so ctest runs one case per entry and
// attributes a hang or a skip to it.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#define GT_CHECK(cond, ...)                                                           \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
      std::fprintf(stderr, __VA_ARGS__);                                              \
      std::fprintf(stderr, "\n");                                                     \
      throw std::runtime_error("check failed");                                       \
    }                                                                                 \
  } while (0)

namespace dissect::gputest {

inline constexpr int SKIP = 77;  // ctest's SKIP_RETURN_CODE: the case printed why on stderr

using Cases = std::map<std::string, std::function<int()>>;

// Exit status: 0 all passed, 1 a case failed, 2 an unknown case, SKIP when the one case asked
// for was skipped.
inline int run_cases(int argc, char** argv, const Cases& cases) {
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) names.emplace_back(argv[i]);
  if (names.empty()) for (const auto& c : cases) names.push_back(c.first);
  int rc = 0;
  for (const auto& name : names) {
    const auto it = cases.find(name);
    if (it == cases.end()) {
      std::fprintf(stderr, "unknown case '%s'\n", name.c_str());
      return 2;
    }
    int r;
    try {
      r = it->second();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAIL %s: %s\n", name.c_str(), e.what());
      r = 1;
    }
    std::printf("[%s] %s\n", r == 0 ? "PASS" : r == SKIP ? "SKIP" : "FAIL", name.c_str());
    if (r == SKIP && names.size() == 1) return SKIP;
    if (r != 0 && r != SKIP) rc = 1;
  }
  return rc;
}

}  // namespace dissect::gputest
