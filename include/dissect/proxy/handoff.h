// The producer side of the two handoffs: GPU threads and host threads run this same code.
//
//   enqueue<baseline>(ring, request, &index)       reserve (atomic) -> check room (read the
//                                                  consumer's tail every time) -> write the
//                                                  descriptor -> publish ready[slot] with a
//                                                  system-scope release
//   enqueue<tuned>(ring, request, &index)          reserve (one producer: a private counter) ->
//                                                  check room against the cached tail (re-read
//                                                  only when it says full) -> one posted 16-byte
//                                                  store that carries its own validity
//   enqueue(owned, request, &index)                the tuned handoff at its minimum, for the
//                                                  ring's sole producer (OwnedRing): head and
//                                                  cached tail in registers, and one posted
//                                                  16-byte store (payload ordered by the caller,
//                                                  order_payloads(), once per batch);
//                                                  disown(owned) writes its head back
//   wait_completion(ring, index)                   until the worker reports descriptor `index`
//                                                  completed (its CQE seen)
//
// A full ring backpressures: the producer waits (bounded by ring.timeout_ns) until the worker has
// consumed the slot's previous descriptor; nothing is ever overwritten.
//
// Why the room check is safe: the worker stores tail with release after it has read every slot
// below tail; the producer reads tail with acquire before it writes a slot of the next lap, so the
// worker's read of the old descriptor happens before the producer's overwrite.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/common/atomic.h"
#include "dissect/common/sharing.h"
#include "dissect/common/wait.h"
#include "dissect/proxy/descriptor.h"
#include "dissect/proxy/ring.h"
#include "dissect/proxy/status.h"
#include "dissect/proxy/store16.h"

namespace dissect::proxy {

using dissect::Sharing;

struct baseline {
  static constexpr const char* name = "baseline";
};
struct tuned {
  static constexpr const char* name = "tuned";
};

// Waits (bounded) until descriptor `index` has a free slot: index < tail + entries.
// baseline reads the consumer's tail on every call (a PCIe read for a GPU producer); tuned trusts
// its cached tail and re-reads only when the cache says full.
template <typename Handoff, Sharing S>
DISSECT_HD inline Status wait_for_slot(const RingHandle& ring, uint64_t index, uint64_t timeout_ns) {
  if constexpr (std::is_same_v<Handoff, tuned>) {
    if (index < load_relaxed<Scope::gpu>(&ring.producer->tail_cache) + ring.entries) return Status::ok;
  }
  BoundedWait wait(timeout_ns);
  for (;;) {
    const uint64_t tail = load_acquire<Scope::system>(&ring.consumer->tail);
    if (index < tail + ring.entries) {
      if constexpr (std::is_same_v<Handoff, tuned>) {
        // Racing producers (Sharing::shared) may store an older tail; the cache only has to stay
        // at or below the real tail, which any value once read does.
        store_relaxed<Scope::gpu>(&ring.producer->tail_cache, tail);
      }
      return Status::ok;
    }
    if (wait.expired()) {
      return report_timeout("room in the ring (the worker's tail)", WaitOn::ring, ring.ring_id,
                            index, tail, wait.waited_ns());
    }
  }
}

template <typename Handoff, Sharing S>
DISSECT_HD inline uint64_t reserve_index(const RingHandle& ring) {
  if constexpr (std::is_same_v<Handoff, tuned> && S == Sharing::exclusive) {
    const uint64_t index = load_relaxed<Scope::gpu>(&ring.producer->head);
    store_relaxed<Scope::gpu>(&ring.producer->head, index + 1);
    return index;
  } else {
    return fetch_add<Scope::gpu>(&ring.producer->head, uint64_t{1});
  }
}

// Writes and publishes descriptor `index` (its slot is known to be free).
template <typename Handoff>
DISSECT_HD inline void publish_descriptor(const RingHandle& ring, uint64_t index,
                                          const Request& request) {
  Descriptor* slot = &ring.descriptors[ring.slot(index)];
  const Descriptor d = encode(request, ring.phase(index));
  if constexpr (std::is_same_v<Handoff, tuned>) {
    store_descriptor_release(slot, d);
  } else {
    // The release on ready[] orders both descriptor words (and the payload) before it; the worker
    // acquires ready[] before reading the words. index + 1 names the lap, so a flag left from the
    // previous lap (index + 1 - entries) never matches.
    store_descriptor_relaxed(slot, d);
    store_release<Scope::system>(&ring.ready[ring.slot(index)], index + 1);
  }
}

// Enqueues one request; *index receives its descriptor index (for wait_completion).
// Sharing::exclusive with tuned requires that this thread is the ring's only producer.
template <typename Handoff, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status enqueue(const RingHandle& ring, const Request& request, uint64_t* index,
                                 uint64_t timeout_ns) {
  if (!request_fits(request)) return Status::invalid_request;
  *index = reserve_index<Handoff, S>(ring);
  const Status room = wait_for_slot<Handoff, S>(ring, *index, timeout_ns);
  if (room != Status::ok) {
    // A sole producer can hand its reservation back, so it may retry later. A shared reservation
    // cannot be returned (later producers hold later indices): the worker will wait at this index,
    // and its shutdown report names it.
    if constexpr (std::is_same_v<Handoff, tuned> && S == Sharing::exclusive) {
      store_relaxed<Scope::gpu>(&ring.producer->head, *index);
    }
    return room;
  }
  publish_descriptor<Handoff>(ring, *index, request);
  return Status::ok;
}

template <typename Handoff, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status enqueue(const RingHandle& ring, const Request& request, uint64_t* index) {
  return enqueue<Handoff, S>(ring, request, index, ring.timeout_ns);
}

// Waits (bounded) until every descriptor of this ring up to and including `index` has completed.
// Returns failed when the worker recorded an error on the ring.
DISSECT_HD inline Status wait_completion(const RingHandle& ring, uint64_t index, uint64_t timeout_ns) {
  BoundedWait wait(timeout_ns);
  for (;;) {
    const uint64_t completed = load_acquire<Scope::system>(ring.completed);
    if (completed > index) {
      return load_relaxed<Scope::system>(&ring.consumer->error) == 0 ? Status::ok : Status::failed;
    }
    if (wait.expired()) {
      return report_timeout("completion (the ring's completion counter)", WaitOn::ring,
                            ring.ring_id, index, completed, wait.waited_ns());
    }
  }
}

DISSECT_HD inline Status wait_completion(const RingHandle& ring, uint64_t index) {
  return wait_completion(ring, index, ring.timeout_ns);
}

// ---- the sole producer of a ring: the paper's tuned enqueue, "a single posted 16 B store" ----

// A ring's sole producer with its progress in registers: nothing is read from memory on the
// enqueue path until the cached tail says the ring is full. One countdown covers both events that
// change more than the slot address (the cached room runs out; the lap ends and the phase flips),
// so the common enqueue is a compare, two ORs, the store and three adds; refresh() handles the
// rest out of the common path. The memory copy (ProducerState::head, which the worker's shutdown
// report reads) is written by disown(), not by each enqueue.
struct OwnedRing {
  RingHandle ring;
  uint64_t head;
  uint64_t room_until;    // tail cache + entries: head below it has a free slot
  Descriptor* slot;       // &descriptors[slot(head)]
  uint32_t phase_high;    // the phase of head in bit 31: bit 63 of each word once shifted (descriptor.h)
  uint32_t until_event;   // enqueues left before the room or the lap runs out (0: refresh first)
};

// Takes the ring over; no other thread may enqueue on it while the OwnedRing is in use. Reads
// nothing but the producer's counters and never waits: the first enqueue refreshes.
DISSECT_HD inline OwnedRing own(const RingHandle& ring) {
  return OwnedRing{ring, ring.producer->head, ring.producer->tail_cache + ring.entries, nullptr, 0, 0};
}

namespace detail {
// Brings the slot, the phase and the countdown to `head`, first waiting for room when the cached
// tail says the ring is full.
DISSECT_HD inline Status refresh(OwnedRing& owner) {
  const uint64_t head = owner.head;
  if (head >= owner.room_until) {
    const Status room = wait_for_slot<tuned, Sharing::exclusive>(owner.ring, head, owner.ring.timeout_ns);
    if (room != Status::ok) return room;
    owner.room_until = load_relaxed<Scope::gpu>(&owner.ring.producer->tail_cache) + owner.ring.entries;
  }
  const uint32_t slot = owner.ring.slot(head);
  const uint64_t room = owner.room_until - head;  // at most entries: the tail never passes head
  const uint32_t lap_left = owner.ring.entries - slot;
  owner.slot = &owner.ring.descriptors[slot];
  owner.phase_high = static_cast<uint32_t>(owner.ring.phase(head)) << 31;
  owner.until_event = room < lap_left ? static_cast<uint32_t>(room) : lap_left;
  return Status::ok;
}

// One posted 16-byte store into the next slot, then the bookkeeping (after the store, so it does
// not delay it). Requires until_event > 0.
DISSECT_HD inline void store_next(OwnedRing& owner, const Request& request, uint64_t* index) {
  const Descriptor d = encode(request, 0);
  const uint64_t phase = uint64_t{owner.phase_high} << 32;
  store_descriptor_posted(owner.slot, Descriptor{d.word0 | phase, d.word1 | phase});
  *index = owner.head;
  ++owner.head;
  ++owner.slot;
  --owner.until_event;
}
}  // namespace detail

// Makes every payload this thread has written visible to the system (the worker, and the NIC that
// reads the source buffer) before any descriptor it enqueues afterwards: one system-scope fence,
// paid once for a batch. enqueue(OwnedRing&) does not order payloads itself; that is the cost the
// tuned handoff moves out of each request (the baseline pays it in its release on ready[]).
DISSECT_HD inline void order_payloads() { fence_sequential<Scope::system>(); }

// The payload of `request` must already be visible to the system (order_payloads(), or written
// by an earlier kernel or by the NIC).
//
// The common case is written first and returns on its own so the compiler predicates it and the
// store is not behind a taken branch (measured on the H200 against variants of this function: 63
// cycles this way, 70 with the refresh check first, 89 with the slot as an index; one posted 16 B
// store alone: 43).
DISSECT_HD inline Status enqueue(OwnedRing& owner, const Request& request, uint64_t* index) {
  if (!request_fits(request)) return Status::invalid_request;
  if (owner.until_event != 0) {
    detail::store_next(owner, request, index);
    return Status::ok;
  }
  const Status room = detail::refresh(owner);
  if (room != Status::ok) return room;
  detail::store_next(owner, request, index);
  return Status::ok;
}

// Hands the ring back: its memory copy of the progress is brought up to date, so a later
// enqueue through the handle, own() again, or the worker's shutdown report see every descriptor.
DISSECT_HD inline void disown(const OwnedRing& owner) {
  store_relaxed<Scope::gpu>(&owner.ring.producer->head, owner.head);
}

}  // namespace dissect::proxy
