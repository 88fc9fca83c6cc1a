// The CUDA driver through dlopen: the doctor must run (and say "no GPU") on machines without CUDA.
#pragma once

#include "dissect/doctor/doctor.h"

namespace dissect::doctor {

CudaProbe probe_cuda_driver();

}  // namespace dissect::doctor
