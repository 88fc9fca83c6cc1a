#include "dissect/providers/mlx5/error.h"

#include <cerrno>
#include <cstring>

namespace dissect::mlx5provider {
namespace {

std::string describe(const std::string& call, int error_number, const std::string& object) {
  return call + " failed on " + object + ": " + std::strerror(error_number) + " (errno " +
         std::to_string(error_number) + ")";
}

}  // namespace

VerbsError::VerbsError(std::string call, int error_number, std::string object)
    : dissect::Error(describe(call, error_number, object)),
      call_(std::move(call)),
      errno_(error_number),
      object_(std::move(object)) {}

void check_verbs(bool ok, const char* call, const std::string& object) {
  // Some verbs return NULL without setting errno; EIO is then the honest "unknown".
  if (!ok) throw VerbsError(call, errno != 0 ? errno : EIO, object);
}

void check_verbs_rc(int rc, const char* call, const std::string& object) {
  if (rc != 0) throw VerbsError(call, rc > 0 ? rc : (errno != 0 ? errno : EIO), object);
}

}  // namespace dissect::mlx5provider
