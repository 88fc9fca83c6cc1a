// Private: where one SoftNic's tables and queues live, and how its control path writes them (the
// table-memory strategy of softnic.h). The control path keeps host copies of what it wrote (the
// QP and MR contexts) and never reads engine memory back except for counters and the header.
//
//   host_table_memory   pageable host memory; writes are stores (host-thread engine, no CUDA)
//   cuda_table_memory   mapped host memory (host-thread engine on a GPU machine: stores), or GPU
//                       memory written by copies on one private non-blocking stream (GPU engine)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"

namespace dissect::softnic {

class TableMemory {
 public:
  virtual ~TableMemory() = default;
  virtual const char* name() const = 0;  // "host memory", "mapped host memory", "GPU memory"
  // Whether an engine in host threads can reach this memory (connect's check).
  virtual bool host_reachable() const = 0;
  // Whether the GPU engine can reach this memory (connect's check).
  virtual bool gpu_reachable() const = 0;
  // The tables' block: zero-filled, 64 B aligned, held until the TableMemory goes.
  virtual void* allocate_tables(size_t bytes) = 0;
  // Zero-filled memory in `placement`, page aligned; throws naming a placement this memory lacks.
  virtual void* allocate(size_t bytes, nic::Placement placement) = 0;
  virtual void free(void* address, nic::Placement placement) = 0;
  // Whether free() may synchronise the device (cudaFree): the engine must be stopped around it.
  virtual bool free_needs_engine_stopped() const = 0;
  // `bytes` from `from` to engine memory `at`; visible to the engine when it returns, after
  // everything written before.
  virtual void write(void* at, const void* from, size_t bytes) = 0;
  // A 32-bit word stored after every earlier write: a release store or an ordered copy.
  virtual void publish(uint32_t* at, uint32_t value) = 0;
  // Whether a region a PD registers is host memory (MR_IN_HOST_MEMORY: the GPU engine's atomics).
  virtual bool in_host_memory(const void* address) const = 0;
  // `bytes` of engine memory at `at`, which the engine may be updating: a snapshot per 8 B word.
  virtual void read(void* to, const void* at, size_t bytes) const = 0;
};

// A host-memory read of words the engine threads update with atomics: relaxed 8 B loads where
// `at` and `bytes` allow (every counter and table field the control path reads), else a copy.
inline void read_words(void* to, const void* at, size_t bytes) {
  if (reinterpret_cast<uintptr_t>(at) % 8 != 0 || bytes % 8 != 0) {
    __builtin_memcpy(to, at, bytes);
    return;
  }
  const auto* from = static_cast<const uint64_t*>(at);
  for (size_t i = 0; i < bytes / 8; ++i) {
    const uint64_t word = __atomic_load_n(from + i, __ATOMIC_RELAXED);
    __builtin_memcpy(static_cast<uint8_t*>(to) + 8 * i, &word, 8);
  }
}

std::unique_ptr<TableMemory> host_table_memory();
// CUDA builds (cuda_table_memory.cu); without CUDA it throws naming the options.
std::unique_ptr<TableMemory> cuda_table_memory(const SoftNicOptions& options, IpcArena* arena);

}  // namespace dissect::softnic
