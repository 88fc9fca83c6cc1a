// What a rank's kernels are handed (trivially copyable, in device memory or by value): the shape,
// the arena layout, this rank's arena and keys, every peer's window, and this rank's QPs.
//
// Channels as DeepEP maps its QPs: one QP per (destination rank, local expert index), qps[d x L + l], on
// which this rank sends everything for expert l of rank d in dispatch and, in combine, everything
// its own local expert l returns to rank d. QP (r -> d, l) is connected to QP (d -> r, l); for
// d == r the QP is connected to itself (the NIC loops it back: no NVLink shortcut here). With
// mini-proxy the same index names a descriptor ring; rank d's rings are served by the worker whose
// QP goes to d (moe/transport_proxy.h).
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/moe/layout.h"
#include "dissect/moe/shape.h"
#include "dissect/nic/handles.h"
#include "dissect/proxy/ring.h"

namespace dissect::moe {

// Rank d's arena as the NIC addresses it (in one process, its pointer; across processes, the
// address the bootstrap exchanged) and d's rkey.
struct PeerWindow {
  uint64_t base;
  uint32_t rkey;
};

struct MoeRankHandle {
  MoeShape shape;
  ArenaLayout layout;
  uint32_t rank;
  uint8_t* arena;           // this rank's arena, as its own threads address it
  uint32_t lkey;            // the arena's lkey (the NIC reads send_x and expert_out through it)
  const PeerWindow* peers;  // [ranks]
  const nic::QpHandle* qps; // mini-gda: [ranks x local_experts], qps[d x L + l]
  const proxy::RingHandle* rings;  // mini-proxy: [ranks x local_experts], the same index
  uint32_t doorbell_batch;  // ring the doorbell after every Nth message of a QP (DeepEP: 4)
  uint64_t timeout_ns;      // bound of every wait for a count or a flag
};
static_assert(std::is_trivially_copyable_v<MoeRankHandle>, "handed to kernels by value");

// Send-queue depth every QP needs, in WQEBBs: a phase posts at most max_tokens messages and one
// signal on a QP, all unsignalled but the signal, so the ring must hold them at once; the previous
// phase's signal retires what came before.
DISSECT_HD inline uint32_t required_sq_wqebbs(const MoeShape& s) {
  uint32_t n = 1;
  while (n < s.max_tokens + 1) n <<= 1;
  return n;
}

template <typename T>
DISSECT_HD inline T* region(const MoeRankHandle& h, uint64_t offset) {
  return reinterpret_cast<T*>(h.arena + offset);
}
// The word each channel's fetch-adds return their old value to (never read).
DISSECT_HD inline uint64_t atomic_result_offset(const MoeRankHandle& h, uint32_t rank, uint32_t local) {
  return h.layout.atomic_result + (uint64_t{rank} * local_experts(h.shape) + local) * 8;
}
DISSECT_HD inline const nic::QpHandle& qp_towards(const MoeRankHandle& h, uint32_t rank,
                                                  uint32_t local) {
  return h.qps[uint64_t{rank} * local_experts(h.shape) + local];
}

}  // namespace dissect::moe
