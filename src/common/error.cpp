#include "dissect/common/error.h"

#include <cstdio>

namespace dissect {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace dissect
