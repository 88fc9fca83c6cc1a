// The providers' error: which call failed, its errno, and on what object (device name, QP number).
#pragma once

#include <string>

#include "dissect/common/error.h"

namespace dissect::mlx5provider {

class VerbsError : public dissect::Error {
 public:
  VerbsError(std::string call, int error_number, std::string object);
  const std::string& call() const { return call_; }
  int error_number() const { return errno_; }
  const std::string& object() const { return object_; }

 private:
  std::string call_;
  int errno_;
  std::string object_;
};

// Throws VerbsError(call, errno, object) when `ok` is false. Verbs report errors through errno
// (or a returned errno value: pass it as `error_number`).
void check_verbs(bool ok, const char* call, const std::string& object);
void check_verbs_rc(int rc, const char* call, const std::string& object);

}  // namespace dissect::mlx5provider
