// The transports of the MoE client, as compile-time policies with one contract:
//
//   send(h, d, l, local_offset, remote_offset, bytes, message_index)
//            one RDMA WRITE of `bytes` from this rank's arena at local_offset to rank d's arena
//            at remote_offset, on the channel for (destination d, local expert l): a QP for
//            mini-gda, a descriptor ring for mini-proxy (moe/transport_proxy.h)
//   signal(h, d, l, remote_offset, addend)
//            an 8-byte atomic fetch-add on rank d's word at remote_offset, on the same channel,
//            after everything sent on it: RC executes a QP's WQEs in order, so the target sees the
//            data before the count or flag
//
// Called by one lane (the warp's leader) after the lanes' payload stores and a warp barrier.
//
// mini-gda: the leader builds the WQEs itself. Every QP is shared by the warps of its rank (any
// token warp may send to any expert), so posts reserve with an atomic and publish in reservation
// order (gda/submit.h, Sharing::shared). The doorbell is rung only after every `doorbell_batch`-th
// message of a QP (DeepEP's kNumRequestInBatch = 4, message index = the slot); the others are
// published and covered by a later doorbell, at the latest the signal's, which always rings. Only
// the signal is signalled: its CQE retires the messages before it, and reserve() polls the CQ when
// the ring is full, so no separate completion wait is needed (DeepEP's puts are _nbi too).
#pragma once

#include <cstdint>

#include "dissect/gda/gda.h"
#include "dissect/moe/handle.h"

namespace dissect::moe {

template <typename Ordering>
struct GdaTransport {
  static constexpr const char* name = "mini-gda";
  static constexpr auto shared = gda::Sharing::shared;

  DISSECT_HD static gda::Status send(const MoeRankHandle& h, uint32_t d, uint32_t local,
                                     uint64_t local_offset, uint64_t remote_offset, uint32_t bytes,
                                     uint32_t message_index) {
    const nic::QpHandle& qp = qp_towards(h, d, local);
    const gda::WriteRequest request{reinterpret_cast<uint64_t>(h.arena + local_offset), h.lkey,
                                    bytes, h.peers[d].base + remote_offset, h.peers[d].rkey};
    uint64_t base = 0;
    const gda::Status room = gda::reserve<Ordering, shared>(qp, gda::write_wqebbs(), &base);
    if (room != gda::Status::ok) return room;
    gda::note_post<Ordering>(qp, base,
                             gda::write_rdma_write_wqe(qp, base, request, gda::Completion::unsignaled));
    const gda::Status published = gda::publish<shared>(qp, base, gda::write_wqebbs());
    if (published != gda::Status::ok) return published;
    if ((message_index + 1) % h.doorbell_batch != 0) return gda::Status::ok;
    return gda::ring<Ordering, shared>(qp);
  }

  DISSECT_HD static gda::Status signal(const MoeRankHandle& h, uint32_t d, uint32_t local,
                                       uint64_t remote_offset, uint32_t addend) {
    const nic::QpHandle& qp = qp_towards(h, d, local);
    const uint64_t result = reinterpret_cast<uint64_t>(h.arena + atomic_result_offset(h, d, local));
    const gda::FetchAddRequest request{h.peers[d].base + remote_offset, h.peers[d].rkey, addend,
                                       result, h.lkey};
    uint64_t base = 0;
    const gda::Status room = gda::reserve<Ordering, shared>(qp, gda::fetch_add_wqebbs(), &base);
    if (room != gda::Status::ok) return room;
    gda::note_post<Ordering>(qp, base,
                             gda::write_fetch_add_wqe(qp, base, request, gda::Completion::signaled));
    const gda::Status published = gda::publish<shared>(qp, base, gda::fetch_add_wqebbs());
    if (published != gda::Status::ok) return published;
    return gda::ring<Ordering, shared>(qp);
  }
};

}  // namespace dissect::moe
