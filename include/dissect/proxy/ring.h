// A descriptor ring: where its parts live, who writes each counter, and the handle producers copy.
//
// Every counter is a free-running 64-bit descriptor index (never masked); a slot is index & mask.
//
//   part           lives in                      written by            read by
//   descriptors    host memory (mapped to GPU)   producers             worker
//   ready[]        host memory (mapped to GPU)   producers (baseline)  worker
//   ProducerState  producer memory (GPU memory   producers             producers (worker only
//                  for GPU producers)                                  when host-readable)
//   ConsumerState  host memory (mapped to GPU)   worker                producers, worker
//   completed      host memory, or GPU memory    worker                producers
//                  through an injected pointer
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/proxy/descriptor.h"

namespace dissect::proxy {

struct alignas(64) ProducerState {
  uint64_t head;        // descriptors reserved: indices below it belong to some producer
  uint64_t reserved0[7];
  uint64_t tail_cache;  // tuned: the last consumer tail a producer read (may lag, never leads)
  uint64_t reserved1[7];
};
static_assert(sizeof(ProducerState) == 128);

// Written only by the ring's worker.
struct alignas(64) ConsumerState {
  uint64_t tail;         // descriptors consumed (copied into WQEs): their slots may be reused
  uint64_t reserved0[7];
  uint32_t error;        // first error on this ring: RingError | detail << 8 (0 = none)
  uint32_t reserved1;
  uint64_t error_index;  // descriptor index of that first error
  uint64_t reserved2[6];
};
static_assert(sizeof(ConsumerState) == 128);

enum RingError : uint32_t {
  RING_ERROR_NONE = 0,
  RING_ERROR_BAD_WINDOW = 1,     // detail: low 24 bits of the window index
  RING_ERROR_BAD_OPERATION = 2,  // detail: the operation code
  RING_ERROR_CQE = 3,            // detail: the CQE syndrome
};

// What a producer needs; plain and trivially copyable (a kernel argument or a thread's closure).
struct RingHandle {
  Descriptor* descriptors;   // `entries` slots
  uint64_t* ready;           // baseline: ready[slot] = index + 1 once descriptor `index` is written
  ProducerState* producer;
  ConsumerState* consumer;
  uint64_t* completed;       // descriptors of this ring whose RDMA operation has completed
  uint32_t entries;          // power of two
  uint32_t entries_log2;
  uint32_t ring_id;
  uint32_t reserved;
  uint64_t timeout_ns;       // bound of every producer wait on this ring

  DISSECT_HD uint32_t slot(uint64_t index) const { return static_cast<uint32_t>(index) & (entries - 1); }
  DISSECT_HD uint64_t phase(uint64_t index) const { return phase_of(index, entries_log2); }
};
static_assert(std::is_trivially_copyable_v<RingHandle>);

}  // namespace dissect::proxy
