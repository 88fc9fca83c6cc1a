// The connection-state model of the softnic (profile.h; the paper's §4.3.3 and Figure 10): a
// QP-context cache per NIC and what its misses cost. A model, not a ConnectX: it is calibrated to
// the paper's curve (profile.cpp, cx7-ib), and every result it shapes says so.
//
// The cache: profile.qp_cache_entries tags in the NIC's table memory (NicTables::qp_cache), each
// the number of the QP whose context the slot holds, or a DC connection's key (dc_responder_key,
// top bit set); 0 = empty (QPNs start at QPN_BASE). A context maps to one slot (direct mapped:
// cache_slot), and a lookup is one atomic exchange: it installs the context and misses when the
// slot held another. The GPU engine's warps and the host engine's threads all look up at once
// without a lock; two lookups of one slot racing are ordered by the exchange, so each sees the tag
// its predecessor left, and a run's miss count depends only on the order lookups reach a slot.
// Direct mapped with a mixing hash rather than LRU: a cyclic sweep over more contexts than an LRU
// cache holds misses every time, a cliff; the paper's curves decline gradually from about 1,350
// active connections, as a hashed cache does (a context hits while no other active one shares its
// slot: a fraction e^(-F/entries) of F contexts). Tests rely on the hash only through cache_slot.
//
// When: once per window (up to 32 WQEs of one QP; finish_window) and once per DC WQE
// (execute_dc_write), so writes per connection visit amortise misses as they do on a NIC. The
// requester's context (send processing) is looked up in its own NIC's cache, the responder QP's
// or DCT's (receive processing) in the responder NIC's; a miss adds its side's miss cost to the
// pipe of the NIC that missed, and receiving also costs the responder's pipe its per-message time
// (profile.h). Send and receive processing share one pipe per NIC: a NIC that sends and receives
// pays both, the initial penalty of simultaneous traffic in Figure 10a.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/softnic/impl/context.h"
#include "dissect/softnic/profile.h"
#include "pipe.h"
#include "table_scope.h"

namespace dissect::softnic {

// The slot of context `number` in a cache of `entries`: the number mixed (murmur3's finalizer),
// then reduced by a multiply (any entry count, no modulo). Mixed so that the consecutive numbers a
// NIC hands out land as random keys do, which the fit assumes (1 - (1 - 1/N)^(F - 1) of F
// contexts share a slot: profile.cpp). A Fibonacci hash alone spreads consecutive numbers evenly
// (the three-distance theorem): F < N of them never shared a slot, and the cache fell off a cliff
// at N instead of declining from the fitted onset; at 4,096 QPs a direction (8,192 contexts in
// 12,288 entries) the rig counted 0.001 misses a message where the fit has 0.015, and ran above
// its own ceiling (H100, stop 41).
DISSECT_HD inline uint32_t cache_slot(uint32_t number, uint32_t entries) {
  uint32_t h = number;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return static_cast<uint32_t>((uint64_t{h} * entries) >> 32);
}

// Counts one lookup of `nic`'s cache (and its miss). `S`: TABLE_SCOPE for the engine's own NIC,
// system for a responder NIC that may be another GPU's (peer memory).
template <Scope S>
DISSECT_HD inline void count_lookup(NicTables& nic, bool receive, bool miss) {
  ContextCacheCounters& c = nic.context_cache;
  add_relaxed<S>(receive ? &c.receive_lookups : &c.send_lookups, 1);
  if (miss) add_relaxed<S>(receive ? &c.receive_misses : &c.send_misses, 1);
}

// Installs context `number` in `nic`'s cache (owner-space `tags`, as this engine reaches them);
// true when the slot held it already. `S` as count_lookup's.
template <Scope S>
DISSECT_HD inline bool install_context(uint32_t* tags, uint32_t entries, uint32_t number) {
  return exchange<S>(&tags[cache_slot(number, entries)], number) == number;
}

// Looks context `number` up and counts it; true on a miss.
template <Scope S>
DISSECT_HD inline bool lookup_context(NicTables& nic, uint32_t* tags, uint32_t entries,
                                      uint32_t number, bool receive) {
  const bool miss = !install_context<S>(tags, entries, number);
  count_lookup<S>(nic, receive, miss);
  return miss;
}

// The requester side: `local_units` grows by a send miss. `local` is the requester's NIC, the
// engine's own: its cache and counters at TABLE_SCOPE.
// `tags`: local.qp_cache (a copy the caller holds: reading it from the table header is a round trip).
DISSECT_HD inline void send_processing(NicTables& local, uint32_t* tags, const TimingProfile& p, uint32_t qpn,
                                       double* local_units) {
  if (p.send_context_miss_ns == 0 || tags == nullptr) return;
  if (lookup_context<TABLE_SCOPE>(local, tags, p.qp_cache_entries, qpn, false)) {
    *local_units += static_cast<double>(p.send_context_miss_ns) * PIPE_UNITS_PER_NS;
  }
}

// The responder side of `messages` messages to context `number` on `responder` (as this engine
// reaches it; `header`: its table header, a copy is fine; `window`: how its pointers are reached):
// the responder's own profile prices them. Returns when the responder's pipe is free of them (ns),
// 0 when it models no connection state.
DISSECT_HD inline uint64_t receive_processing(NicTables& responder, const NicTables& header,
                                              const RemoteWindow& window, uint32_t number,
                                              uint32_t messages) {
  const TimingProfile& r = header.profile;
  if (!connection_model(r)) return 0;
  double units = r.receive_message_rate_mps > 0
                     ? messages * 1e3 / r.receive_message_rate_mps * PIPE_UNITS_PER_NS
                     : 0;
  if (r.receive_context_miss_ns != 0 && header.qp_cache != nullptr) {
    uint32_t* tags = reinterpret_cast<uint32_t*>(reinterpret_cast<uintptr_t>(header.qp_cache) + window.delta);
    if (lookup_context<Scope::system>(responder, tags, r.qp_cache_entries, number, true)) {
      units += static_cast<double>(r.receive_context_miss_ns) * PIPE_UNITS_PER_NS;
    }
  }
  if (units <= 0) return 0;
  return claim_pipe<Scope::system>(&responder.pipe_busy_until, static_cast<uint64_t>(units));
}

// DC (execute_dc_write: every DC WQE runs alone, so it is looked up per WQE). The DCI's context is
// the requester's, the responder state the DCT keeps for that DCI the responder's. What a ConnectX
// does that this does not: a DCI connects to one DCT at a time, and a new destination costs a DC
// connect (and the old one's disconnect) handshake on the wire; the DCT creates a responder context
// per connected DCI and drops it on disconnect. The model prices a destination change as a send
// miss (the DCI's context set up again), keys the DCT's per-connection state by (initiator NIC,
// DCI, DCT), so it occupies the responder's cache as an RC responder QP would, and adds no latency
// for the handshake itself. DC therefore keeps fewer initiator contexts than RC but still pays for
// every active initiator-target pair at the target: the decline Figure 10b shows for DC. The
// handshake's latency is the timing profile's dc_connect_ns (engine/dc_timing.h), apart from
// this model.
DISSECT_HD inline uint32_t dc_responder_key(uint32_t initiator_nic, uint32_t dci_qpn, uint32_t dctn) {
  return 0x80000000u | ((initiator_nic * 0x9E3779B1u ^ dci_qpn * 0x85EBCA77u ^ dctn * 0xC2B2AE3Du) & 0x7fffffffu);
}
// The DCI's context at its own NIC, for a WRITE to DCT `dctn` of `target`: pipe units of a send
// miss (a miss, or a new destination: the context set up again; 0 for a hit). `destination`: the
// DCI's current target (QpContext::dc_destination), updated here.
// `tags`: local.qp_cache, as send_processing's.
DISSECT_HD inline double dc_send_lookup(NicTables& local, uint32_t* tags, uint32_t dci_qpn, uint32_t* destination,
                                        const NicTables& target, uint32_t dctn) {
  const TimingProfile& p = local.profile;
  const uint32_t to = dctn ^ (target.nic_id << 20);
  const bool reconnect = *destination != to;
  *destination = to;
  if (p.send_context_miss_ns == 0 || tags == nullptr) return 0;
  const bool miss = !install_context<TABLE_SCOPE>(tags, p.qp_cache_entries, dci_qpn) || reconnect;
  count_lookup<TABLE_SCOPE>(local, false, miss);
  return miss ? static_cast<double>(p.send_context_miss_ns) * PIPE_UNITS_PER_NS : 0;
}

// Returns when the claimed pipes (the DCI's NIC's and, for another NIC, the target's receive side)
// let the payload move, in ns; the caller waits (dc_timing.h). `send`: the DCI's lookup now; false
// for a DC lone window, which makes it after its CQE (dc_charge_send_lookup).
DISSECT_HD inline DISSECT_COLD uint64_t dc_connection_state(NicTables& local, uint32_t dci_qpn,
                                                            uint32_t* destination, NicTables& target,
                                                            uint32_t dctn, uint64_t bytes, bool send = true) {
  double units = pipe_ns(local.profile, 1, static_cast<double>(bytes)) * PIPE_UNITS_PER_NS;
  if (send) units += dc_send_lookup(local, local.qp_cache, dci_qpn, destination, target, dctn);
  uint64_t ready = claim_pipe<TABLE_SCOPE>(&local.pipe_busy_until, static_cast<uint64_t>(units));
  if (&target != &local) {
    const uint64_t received = receive_processing(target, target, RemoteWindow{},
                                                 dc_responder_key(local.nic_id, dci_qpn, dctn), 1);
    if (received > ready) ready = received;
  }
  return ready;
}

// A DC lone window's DCI lookup, after its CQE: a miss claims its cost of the local pipe, so it
// delays the NIC's later messages rather than this one (the lookup's round trips off the latency
// path, as RC's charge_connection_state).
DISSECT_HD inline DISSECT_COLD void dc_charge_send_lookup(NicTables& local, uint32_t* tags, uint32_t dci_qpn,
                                                          uint32_t* destination, const NicTables& target,
                                                          uint32_t dctn) {
  const double units = dc_send_lookup(local, tags, dci_qpn, destination, target, dctn);
  if (units > 0) claim_pipe<TABLE_SCOPE>(&local.pipe_busy_until, static_cast<uint64_t>(units));
}

}  // namespace dissect::softnic
