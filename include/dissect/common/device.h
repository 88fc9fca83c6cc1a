// The annotations of code that compiles for host and device. Every layer's headers use them, so
// this header includes nothing: common depends on nothing of dissect.
#pragma once

#if defined(__CUDACC__)
#define DISSECT_HD __host__ __device__
#define DISSECT_DEVICE __device__
// A path off the hot loop (a control-path refresh, a WQE run alone): compiled out of line, so its
// registers do not count against the loop that calls it (a persistent kernel's registers are set
// by its largest inlined path, and spills land in local memory the hot loop then reloads).
#define DISSECT_COLD __noinline__
// #pragma unroll [n] in code host compilers build too (g++ warns on a pragma it does not know).
#define DISSECT_PRAGMA(text) _Pragma(#text)
#define DISSECT_UNROLL DISSECT_PRAGMA(unroll)
#define DISSECT_UNROLL_BY(n) DISSECT_PRAGMA(unroll n)
#else
#define DISSECT_HD
#define DISSECT_DEVICE
#define DISSECT_COLD
#define DISSECT_UNROLL
#define DISSECT_UNROLL_BY(n)
#endif
