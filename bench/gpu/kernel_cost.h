// `dissect gpu-kernel-cost` (§4.3.2, Figure 9): what carrying, executing and waiting for
// communication code costs the useful work of the kernel around it. The types the host side
// (kernel_cost.cu) and both builds of the caller kernels (kernel_cost_kernel.cuh) share.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"
#include "dissect/proxy/ring.h"
#include "loopback_qps.h"

namespace dissect::bench::gpu {

inline constexpr uint32_t KERNEL_COST_THREADS = 256;  // the paper's block: 528 blocks of 256
inline constexpr uint32_t KERNEL_COST_ROUNDS = 8;     // FMA rounds per live value per step

// What a caller thread's useful work is: FMA chains on its live values (compute), or loads of a
// buffer larger than L2 folded into them (memory streaming).
enum class Caller : uint32_t { compute, stream };

// How the communication call reaches the caller: absent (the no-communication kernel), its body
// inlined into the caller, or a call into a separately compiled (-rdc) translation unit.
enum class Build : uint32_t { none, inlined, separate };

// Whose submission the call is: mini-gda (one QP per block, the block's thread 0 builds the WQE
// and rings) or mini-proxy (a 16 B descriptor into ring block % rings, shared by the blocks of
// that ring; host workers post it).
enum class Path : uint32_t { mini_gda, mini_proxy };

struct KernelCostArgs {
  const LoopbackTarget* targets;  // mini-gda: one QP per block
  const proxy::RingHandle* rings; // mini-proxy: block b enqueues on ring b % ring_count
  uint32_t ring_count;
  uint32_t slot_bytes;            // mini-proxy: block b's source and destination at b * slot_bytes
  unsigned long long* last_index; // mini-proxy: per block, its last descriptor's index + 1 (0: none)
  const float* stream;            // Caller::stream: `stream_rows` rows of one float per thread
  uint32_t stream_rows;           // a power of two
  float* out;                     // one per thread, so that the work is not dead code
  uint32_t steps;                 // work steps per thread
  uint32_t messages;              // per block, spread through the steps; 0 = code only
  uint32_t bytes;                 // 8: an inline write from a register; more: a pointer write
  uint32_t wait;                  // 1: the sending thread waits for each message's completion
  unsigned long long* block_start;  // per block, %globaltimer at its start and its end
  unsigned long long* block_end;
  unsigned long long* clock;        // block 0: [clock64 cycles, globaltimer ns] over its span
  uint32_t* failure;                // [status, block], the first failed message only
};

// The 8 B value of message `m` of block `b`, and the pattern of a pointer write's source byte i.
DISSECT_HD inline uint64_t kernel_cost_value(uint32_t block, uint32_t message) {
  return (uint64_t{block} << 32 | message) * 0x9e3779b97f4a7c15ull | 1;
}
DISSECT_HD inline uint8_t kernel_cost_byte(uint32_t block, uint32_t i) {
  return static_cast<uint8_t>((block * 131u + i * 7u) >> 1) | 1;
}

// The separately compiled build's caller kernels (kernel_cost/separate_kernels.cu), each of
// signature void(KernelCostArgs); null for a live-value count it was not built for.
const void* separate_kernel_cost(Caller caller, uint32_t live, Path path);

}  // namespace dissect::bench::gpu
