// The 32 lanes a window (window.h) runs on: a warp on the GPU, one host thread looping over them on
// the host. On the GPU every phase that writes the window (shared memory) starts and ends with a
// warp barrier: what one lane wrote before it is seen by every lane after it, and no lane still
// reading the previous window's entries sees them overwritten (lanes may drift apart between
// barriers; compute-sanitizer racecheck reported exactly that without the leading barrier).
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "dissect/mlx5/endian.h"
#include "execute.h"
#include "phases.h"

namespace dissect::softnic {


DISSECT_HD inline uint32_t popcount(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __popc(v);
#else
  return static_cast<uint32_t>(__builtin_popcount(v));
#endif
}
// v != 0.
DISSECT_HD inline uint32_t lowest_set_bit(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __ffs(v) - 1;
#else
  return static_cast<uint32_t>(__builtin_ctz(v));
#endif
}
// v != ~0.
DISSECT_HD inline uint32_t lowest_zero_bit(uint32_t v) { return lowest_set_bit(~v); }

// The bytes [begin, end) a lane's WQE writes (empty when end == begin).
struct ByteRange {
  uint64_t begin, end;
};

// Whether the windows a Lanes type runs are paced by a timing profile (window.h, paced): decided
// per window from the NIC's profile, or fixed when the engine kernel is built for one case
// (gpu_kernel.cu, engine_kernel<P>), so that the kernel of each holds none of the other's code.
enum class Pacing : uint8_t { at_run_time, never, always };

#if defined(__CUDACC__)
// A whole warp, every lane active; `P`: whether its windows are paced.
template <Pacing P = Pacing::at_run_time>
struct WarpLanesOf {
  static constexpr Pacing PACING = P;
  static constexpr unsigned FULL = 0xffffffffu;
  // The lanes run at once: they copy at once only WQEs with disjoint destinations, and a window
  // ends at its first WQE overwriting an earlier one's bytes (window.h, finish_window). Performing
  // the rest in order grew the engine kernel's code by 6 % (10,232 -> 10,856 instructions), and
  // the engine warp is bound by instruction fetch.
  static constexpr bool IN_TURN = false;
  // A paced express window waits for its dates in place, not in a ring of held windows
  // (held_windows.h): on the H100, holding them gained the paced kernel nothing under cx7-ib
  // (nic-ceiling, one QP: 5.5 -> 5.2 M msg/s; Figure 10, 64 QPs: 60.5 -> 63), whose windows are
  // bound by their own work (the connection-state model's lookups, the pipe's claims: ~16 us a
  // window at 64 QPs, phase counters), and the larger kernel cost its lone path 0.3 us
  // (docs/softnic-engine.md, "Held windows").
  static constexpr bool HOLDS_WINDOWS = false;
  // Per-lane state (express.h) is one entry in each lane's registers.
  static constexpr uint32_t SLOTS = 1;
  __device__ static constexpr uint32_t slot(uint32_t) { return 0; }
  __device__ uint32_t lane() const { return threadIdx.x & 31; }
  // f(lane) in the lanes below `count`, with no barrier: for per-lane state only.
  template <typename F>
  __device__ void mine(uint32_t count, F&& f) const {
    if (lane() < count) f(lane());
  }
  // f(k) of lane k, in every lane.
  template <typename F>
  __device__ uint32_t pick(uint32_t k, F&& f) const {
    return __shfl_sync(FULL, lane() == k ? static_cast<uint32_t>(f(lane())) : 0u, k);
  }
  // How many of the lanes below `count` form a prefix in which no lane writes bytes a lower lane
  // writes: lane k writes range(k) = {begin, end} (empty when end == begin). The window's lanes
  // copy those at once; the rest waits for a later window, as one WQE at a time would land it
  // after them. Ascending ranges (the common case) are recognised by a max-scan of the lower
  // lanes' ends; anything else is compared pair by pair out of line.
  template <typename F>
  __device__ uint32_t disjoint_prefix(uint32_t count, F&& range) const {
    if (count <= 1) return count;
    uint64_t begin = 0, end = 0;
    if (lane() < count) {
      const auto r = range(lane());
      begin = r.begin;
      end = r.end;
    }
    const bool empty = end == begin;
    // The common window first: no empty range, each starting at or past the end of the one below
    // (sorted and apart, so pairwise disjoint), one shuffle where the scan takes five steps.
    const uint64_t below_end = __shfl_up_sync(FULL, end, 1);
    if (__all_sync(FULL, lane() >= count || (!empty && (lane() == 0 || begin >= below_end)))) {
      return count;
    }
    uint64_t reach = empty ? 0 : end;  // max end of lanes <= this one
#pragma unroll
    for (uint32_t d = 1; d < 32; d *= 2) {
      const uint64_t lower = __shfl_up_sync(FULL, reach, d);
      if (lane() >= d && lower > reach) reach = lower;
    }
    uint64_t below = __shfl_up_sync(FULL, reach, 1);
    if (lane() == 0) below = 0;
    if (__all_sync(FULL, empty || begin >= below)) return count;
    return pairwise_disjoint_prefix(count, empty ? 0 : begin, empty ? 0 : end);
  }
  template <typename F>
  __device__ void each(uint32_t count, F&& f) const {
    __syncwarp();
    if (lane() < count) f(lane());
    __syncwarp();
  }
  template <typename F>
  __device__ void leader(F&& f) const {
    __syncwarp();
    if (lane() == 0) f();
    __syncwarp();
  }
  template <typename F>
  __device__ uint32_t ballot(uint32_t count, F&& predicate) const {
    return __ballot_sync(FULL, lane() < count && predicate(lane()));
  }
  // f() in lane 0 alone, its result in every lane: no barrier before it (the caller's last phase
  // ended with one) and none after but the result's shuffle, so lane 0 runs f's instructions with
  // nothing of the other 31 lanes in between (lone.h). What f writes to shared memory is read by
  // other lanes only after a later barrier (the next window's leader).
  template <typename F>
  __device__ uint32_t alone(F&& f) const {
    uint32_t result = 0;
    if (lane() == 0) result = f();
    return __shfl_sync(FULL, result, 0);
  }
  // Bit i of masks[i]'s lane k is bit i of f(k), for k < count: several ballots from one read of
  // each lane's entry.
  template <uint32_t N, typename F>
  __device__ void ballots(uint32_t count, F&& f, uint32_t (&masks)[N]) const {
    const uint32_t bits = lane() < count ? f(lane()) : 0u;
#pragma unroll
    for (uint32_t i = 0; i < N; ++i) masks[i] = __ballot_sync(FULL, (bits >> i) & 1u);
  }
  // Sum of f(k) for k < count; each term below 2^47.
  template <typename F>
  __device__ uint64_t sum(uint32_t count, F&& f) const {
    const uint64_t v = lane() < count ? f(lane()) : 0;
    const uint32_t high = __reduce_add_sync(FULL, static_cast<uint32_t>(v >> 16));
    const uint32_t low = __reduce_add_sync(FULL, static_cast<uint32_t>(v & 0xffff));
    return (uint64_t{high} << 16) + low;
  }
  template <typename T>
  __device__ T broadcast(T v) const {
    return static_cast<T>(__shfl_sync(FULL, static_cast<uint32_t>(v), 0));
  }
  __device__ void sync() const { __syncwarp(); }
  __device__ uint32_t pairwise_disjoint_prefix(uint32_t count, uint64_t begin,
                                                            uint64_t end) const {
    bool conflict = false;
    for (uint32_t j = 0; j + 1 < count; ++j) {
      const uint64_t b = __shfl_sync(FULL, begin, j), e = __shfl_sync(FULL, end, j);
      if (lane() > j && lane() < count && begin < e && b < end) conflict = true;
    }
    const uint32_t conflicts = __ballot_sync(FULL, conflict);
    return conflicts == 0 ? count : lowest_set_bit(conflicts);
  }
  // The warp copies one payload, 16 B (or 8 B, or 1 B, as the alignment allows) per lane per step,
  // four steps in flight. The ranges do not overlap (lane_copies sends those to one lane). Out of
  // line: a call costs nothing beside a 256 B+ copy, and its unrolled loops stay out of the
  // window's code (the engine warp is bound by instruction fetch, docs/softnic-engine.md).
  __device__ __noinline__ void copy(uint8_t* destination, const uint8_t* source, uint64_t length) const {
    const uintptr_t alignment = reinterpret_cast<uintptr_t>(destination) |
                                reinterpret_cast<uintptr_t>(source);
    uint64_t done = 0;
    if ((alignment & 15) == 0) {
      done = copy_words<uint4>(destination, source, length);
    } else if ((alignment & 7) == 0) {
      done = copy_words<uint64_t>(destination, source, length);
    }
    for (uint64_t i = done + lane(); i < length; i += 32) destination[i] = source[i];
    __syncwarp();
  }

 private:
  // Eight loads per lane in flight before their stores: a 4 KiB payload is one round trip. (The
  // last group predicated like the full ones spilled the engine kernel, 120 B: ptxas counts the
  // registers of this out-of-line copy against the window's, which sits at the limit.)
  template <typename Word>
  __device__ uint64_t copy_words(uint8_t* destination, const uint8_t* source,
                                 uint64_t length) const {
    constexpr uint32_t GROUP = 8;
    const uint64_t words = length / sizeof(Word);
    Word* __restrict__ out = reinterpret_cast<Word*>(destination);
    const Word* __restrict__ in = reinterpret_cast<const Word*>(source);
    uint64_t base = 0;
    for (; base + GROUP * 32 <= words; base += GROUP * 32) {
      Word w[GROUP];
#pragma unroll
      for (uint32_t k = 0; k < GROUP; ++k) w[k] = in[base + k * 32 + lane()];
#pragma unroll
      for (uint32_t k = 0; k < GROUP; ++k) out[base + k * 32 + lane()] = w[k];
    }
    // The rest, two words per lane in flight (predicated), not one at a time: DeepSeek-V3's
    // 7,408 B dispatch message then costs 5 round trips instead of 8 (four in flight spilled 56 B).
    for (uint64_t i = base + lane(); i < words; i += 2 * 32) {
      Word w[2];
#pragma unroll
      for (uint32_t k = 0; k < 2; ++k) {
        if (i + k * 32 < words) w[k] = in[i + k * 32];
      }
#pragma unroll
      for (uint32_t k = 0; k < 2; ++k) {
        if (i + k * 32 < words) out[i + k * 32] = w[k];
      }
    }
    return words * sizeof(Word);
  }
};
using WarpLanes = WarpLanesOf<>;
#endif

// One host thread standing in for the 32 lanes: each phase runs for every lane in turn.
struct HostLanes {
  static constexpr Pacing PACING = Pacing::at_run_time;
  // Lane k runs after lane k - 1: a window's payloads move one WQE after the other in WQE order,
  // so a write to bytes an earlier one wrote lands after it whatever they overlap (finish_window).
  static constexpr bool IN_TURN = true;
  // Paced express windows are held (held_windows.h) while the thread serves the next ones: under
  // cx7-ib the proxy's rates at B = 16 rose 9-45 % on the H100's host (gpu-proxy-rate, stop 39).
  static constexpr bool HOLDS_WINDOWS = true;
  static constexpr uint32_t SLOTS = 32;
  DISSECT_HD static constexpr uint32_t slot(uint32_t k) { return k; }
  template <typename F>
  DISSECT_HD void each(uint32_t count, F&& f) const {
    for (uint32_t k = 0; k < count; ++k) f(k);
  }
  template <typename F>
  DISSECT_HD void mine(uint32_t count, F&& f) const {
    each(count, f);
  }
  template <typename F>
  DISSECT_HD uint32_t pick(uint32_t k, F&& f) const {
    return static_cast<uint32_t>(f(k));
  }
  // Every lane: the lanes run in turn, so a later WQE's bytes land after an earlier one's.
  template <typename F>
  DISSECT_HD uint32_t disjoint_prefix(uint32_t count, F&&) const {
    return count;
  }
  template <typename F>
  DISSECT_HD void leader(F&& f) const {
    f();
  }
  template <typename F>
  DISSECT_HD uint32_t alone(F&& f) const {
    return f();
  }
  template <typename F>
  DISSECT_HD uint32_t ballot(uint32_t count, F&& predicate) const {
    uint32_t mask = 0;
    for (uint32_t k = 0; k < count; ++k) mask |= predicate(k) ? 1u << k : 0u;
    return mask;
  }
  template <uint32_t N, typename F>
  DISSECT_HD void ballots(uint32_t count, F&& f, uint32_t (&masks)[N]) const {
    uint32_t m[N] = {};
    for (uint32_t k = 0; k < count; ++k) {
      const uint32_t bits = f(k);
      // Unrolled, so that the masks stay in registers: a loop over them cost 58 instructions a WQE.
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC unroll 8
#endif
      for (uint32_t i = 0; i < N; ++i) m[i] |= ((bits >> i) & 1u) << k;
    }
    for (uint32_t i = 0; i < N; ++i) masks[i] = m[i];
  }
  template <typename F>
  DISSECT_HD uint64_t sum(uint32_t count, F&& f) const {
    uint64_t total = 0;
    for (uint32_t k = 0; k < count; ++k) total += f(k);
    return total;
  }
  template <typename T>
  DISSECT_HD T broadcast(T v) const {
    return v;
  }
  DISSECT_HD void sync() const {}
  DISSECT_HD void copy(uint8_t* destination, const uint8_t* source, uint64_t length) const {
    copy_bytes(destination, source, length);
  }
};

}  // namespace dissect::softnic
