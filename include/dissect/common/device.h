// The annotations of code that compiles for host and device. Every layer's headers use them, so
// this header includes nothing: common depends on nothing of dissect.
#pragma once

#if defined(__CUDACC__)
#define DISSECT_HD __host__ __device__
#define DISSECT_DEVICE __device__
#else
#define DISSECT_HD
#define DISSECT_DEVICE
#endif
