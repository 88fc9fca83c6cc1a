// One host error model: an exception that carries the call, the object and the value.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dissect {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown for bad user input (CLI flags, attributes): the message names the option and the value.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

std::string hex(uint64_t value);  // "0x1a2b"; defined in src/common/error.cpp

}  // namespace dissect
