// The engine's phase counters: off unless built with -DDISSECT_ENGINE_PHASES (where the time of a
// window, a lone WQE or a profile's pacing goes, on the GPU that runs it).
#pragma once

// Built with -DDISSECT_ENGINE_PHASES, the engine kernel adds each window phase's cycles (lane 0 of
// every warp) into engine_phase_cycles[], and SoftNic::stop() prints them: where a window's
// time goes, on the GPU that runs it. Off, the marks compile to nothing.
#if defined(__CUDACC__) && defined(DISSECT_ENGINE_PHASES)
// 0-7 window phases, 8 a visit, 9 a visit with work, 10 busy passes, 11 WQEs; the lone window
// (lone.h): 12 reading and checking its WQE, 13 to the CQE's stamp, 14 the payload, the CQE's
// release and retirement, 15 lone windows; 16 a pass's watch (its loads and ballot) when it
// found a doorbell; under a profile (pace_payloads, pace_dc_write): 17 the connection-state model
// (RC) or the connect count (DC), 18 the pipe's claims; a held lone WQE (in_flight.h), in ns, not
// cycles: 19 how late its hold came after its data's date, 25 how early, 20 how late its CQE was
// released after its date; 21 the head's loads and apply_doorbell (open_window's leader, heads
// with work or not); the engine loop: 22 busy passes, 23 idle passes (their cycles, without the
// sleep that follows) and 24 the idle passes' count. The DC lone window (dc_batch.h) counts into
// 12-15 as RC's does; a held WQE's 13 ends at its hold. A visit's steps around them: 26
// serve_window's settle of a held WQE, 27 the head (0) and the checks before the lone window, 28 serve_lone (the
// lone window's call and return around 12-14), 29 from serve_window's return to serve_qp's after a
// lone window; the loop: 30 the release of a held WQE's due steps (passes that found a doorbell),
// 31 from the release step to the pass's end, the visits (8) in it (busy passes); a held WQE, in
// ns: 32 from its hold to its visit's return in the loop, 33 to the loop's first release step.
inline constexpr int ENGINE_PHASES = 34;
// Defined in every CUDA source that includes this (each its own device module, no -rdc); only the
// engine kernel's (engine/gpu_kernel.cu) is printed.
__device__ unsigned long long engine_phase_cycles[ENGINE_PHASES];
#endif
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
#define DISSECT_PHASE_START long long phase_mark_ = clock64()
#define DISSECT_PHASE(n)                                                                  \
  do {                                                                                    \
    const long long now_ = clock64();                                                     \
    if ((threadIdx.x & 31) == 0) {                                                        \
      atomicAdd(&engine_phase_cycles[n], static_cast<unsigned long long>(now_ - phase_mark_)); \
    }                                                                                     \
    phase_mark_ = now_;                                                                   \
  } while (0)
#else
#define DISSECT_PHASE_START
#define DISSECT_PHASE(n) \
  do {                   \
  } while (0)
#endif
