// The one check of a CUDA runtime call and the one scoped switch of the current device. Host code
// that includes the CUDA runtime headers only.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "dissect/common/error.h"

namespace dissect {

// "cudaErrorX (its description)": the one spelling of a CUDA error in dissect's messages, for the
// paths that report an error without throwing (watchdogs, teardown) as well as for check_cuda.
inline std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

// Throws Error naming the call (`what`: the caller's context and the call) and the CUDA error.
inline void check_cuda(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw Error(what + " failed: " + cuda_error_text(status));
}

// Makes `device` current for a scope and restores the previous one. Errors are not thrown: it runs
// in destructors and on teardown paths, where the calls it guards report their own failures.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous_);
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace dissect
