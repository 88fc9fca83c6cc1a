// Where the proxy allocates its rings: injectable, so GPU producers can get pinned, mapped host
// memory (cudaHostAlloc(..., cudaHostAllocMapped)) and GPU memory for their own counters.
#pragma once

#include <cstddef>
#include <functional>

namespace dissect::proxy {

struct Allocator {
  // Returns `bytes` of zero-filled memory aligned to 64 bytes, or throws naming what failed.
  std::function<void*(size_t bytes)> allocate;
  std::function<void(void* address)> release;
  // The address producers use for `address` (cudaHostGetDevicePointer); identity when empty.
  std::function<void*(void* address)> producer_alias;
  // Whether a host thread (the worker) may read this memory (false for cudaMalloc'd memory).
  bool host_readable = true;
};

Allocator host_allocator();  // aligned_alloc + memset: plain host memory, host producers

struct RingMemory {
  Allocator shared = host_allocator();    // descriptors, ready flags, consumer state, completions
  Allocator producer = host_allocator();  // ProducerState (head, tail cache)
};

}  // namespace dissect::proxy
