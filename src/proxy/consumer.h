// The worker's side of the handoffs: is descriptor `index` of a ring published, and what is it.
// Host code (the worker threads); the tests call it directly to check the validity encoding.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/proxy/config.h"
#include "dissect/proxy/descriptor.h"
#include "dissect/proxy/handoff.h"
#include "dissect/proxy/ring.h"
#include "dissect/proxy/store16.h"

namespace dissect::proxy {

// True when descriptor `index` is wholly written; *out is then its request. Never waits.
//   tuned:    both halves of the slot carry the lap's phase (descriptor.h, store16.h).
//   baseline: ready[slot] == index + 1 (acquire), then the two words, which the flag's release
//             ordered before it.
inline bool peek_tuned(const RingHandle& ring, uint64_t index, Request* out) {
  Descriptor d;
  if (!load_descriptor_if_phase(&ring.descriptors[ring.slot(index)], ring.phase(index), &d)) {
    return false;
  }
  *out = decode(d);
  return true;
}

inline bool peek_baseline(const RingHandle& ring, uint64_t index, Request* out) {
  const uint32_t slot = ring.slot(index);
  if (load_acquire<Scope::system>(&ring.ready[slot]) != index + 1) return false;
  Descriptor* d = &ring.descriptors[slot];
  *out = decode(Descriptor{load_relaxed<Scope::system>(&d->word0),
                           load_relaxed<Scope::system>(&d->word1)});
  return true;
}

inline bool peek(Handoff handoff, const RingHandle& ring, uint64_t index, Request* out) {
  return handoff == Handoff::tuned ? peek_tuned(ring, index, out) : peek_baseline(ring, index, out);
}

}  // namespace dissect::proxy
