// Storing and loading one 16-byte descriptor slot with the orderings the handoffs need.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/proxy/descriptor.h"

namespace dissect::proxy {

// One posted 16-byte store, ordered after every earlier store of this thread for any observer in
// the system (the worker on the host, the NIC reading the payload).
//   device: one st.global.release.sys.v2.u64 (one PCIe write TLP to mapped host memory; the form
//           MSCCL++'s FIFO uses).
//   host:   word0 relaxed, then word1 with release. On x86-64 both are plain movs (TSO keeps
//           them in order); the release also orders the payload stores before them on weaker
//           hosts. The consumer loads word1 with acquire first, so a word1 of the new lap
//           guarantees it then reads word0 of the new lap; the phase in both words (descriptor.h)
//           covers any other interleaving, including a device store that lands in two parts.
//           (A lock cmpxchg16b store would make it single-copy atomic but costs a locked RMW:
//           not "posted", and not what we compare against.)
DISSECT_HD inline void store_descriptor_release(Descriptor* slot, const Descriptor& d) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.release.sys.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(d.word0),
               "l"(d.word1)
               : "memory");
#else
  __atomic_store_n(&slot->word0, d.word0, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->word1, d.word1, __ATOMIC_RELEASE);
#endif
}

// One posted 16-byte store with no ordering of its own: the tuned handoff's descriptor when the
// payload it names is already visible to the system (handoff.h, order_payloads()).
//   device: one st.global.relaxed.sys.v2.u64 — one PCIe write TLP the SM does not wait for.
//   host:   two relaxed stores; the phase in both words (descriptor.h) covers a torn read.
DISSECT_HD inline void store_descriptor_posted(Descriptor* slot, const Descriptor& d) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.relaxed.sys.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(d.word0),
               "l"(d.word1)
               : "memory");
#else
  __atomic_store_n(&slot->word0, d.word0, __ATOMIC_RELAXED);
  __atomic_store_n(&slot->word1, d.word1, __ATOMIC_RELAXED);
#endif
}

// Two stores with no ordering of their own (the baseline publishes with a separate ready flag).
DISSECT_HD inline void store_descriptor_relaxed(Descriptor* slot, const Descriptor& d) {
  store_relaxed<Scope::system>(&slot->word0, d.word0);
  store_relaxed<Scope::system>(&slot->word1, d.word1);
}

// The consumer's read of a tuned slot: word1 with acquire, then word0. Returns false unless both
// halves carry `phase`; *out is then the whole descriptor the producer stored.
inline bool load_descriptor_if_phase(Descriptor* slot, uint64_t phase, Descriptor* out) {
  const uint64_t word1 = load_acquire<Scope::system>(&slot->word1);
  if ((word1 >> 63) != phase) return false;
  const uint64_t word0 = load_relaxed<Scope::system>(&slot->word0);
  if (!halves_carry_phase(word0, word1, phase)) return false;
  *out = Descriptor{word0, word1};
  return true;
}

}  // namespace dissect::proxy
