// The mini-gda transport of the MoE client: the sending warp's leader builds the WQEs itself.
// Every QP is shared by the warps of its rank (any token warp may send to any expert), so posts
// reserve with an atomic and publish in reservation order (gda/submit.h, Sharing::shared).
//
//   send()    one RDMA WRITE of a message; the doorbell is rung only after every `batch`-th
//             message of a QP (DeepEP's kNumRequestInBatch = 4, message index = the slot): the
//             others are published and covered by a later doorbell
//   signal()  the 8-byte atomic fetch-add that follows the data of one (expert, rank) pair on the
//             same QP; always rung, so it also announces every message published before it. RC
//             executes a QP's WQEs in order, so the target sees the data before the count.
//
// Only the signal is signalled: its CQE retires the messages before it, and reserve() polls the
// CQ when the ring is full, so no separate completion wait is needed (DeepEP's puts are _nbi too).
#pragma once

#include <cstdint>

#include "dissect/gda/gda.h"

namespace dissect::moe {

template <typename Ordering>
struct GdaTransport {
  static constexpr const char* name = "mini-gda";
  static constexpr auto shared = gda::Sharing::shared;

  DISSECT_HD static gda::Status send(const nic::QpHandle& qp, const gda::WriteRequest& request,
                                     uint32_t message_index, uint32_t batch) {
    uint64_t base = 0;
    const gda::Status room = gda::reserve<Ordering, shared>(qp, gda::write_wqebbs(), &base);
    if (room != gda::Status::ok) return room;
    gda::write_rdma_write_wqe(qp, base, request, gda::Completion::unsignaled);
    const gda::Status published = gda::publish<shared>(qp, base, gda::write_wqebbs());
    if (published != gda::Status::ok) return published;
    if ((message_index + 1) % batch != 0) return gda::Status::ok;
    return gda::ring<Ordering, shared>(qp);
  }

  DISSECT_HD static gda::Status signal(const nic::QpHandle& qp, uint64_t remote_address,
                                       uint32_t rkey, uint64_t addend, uint64_t result_address,
                                       uint32_t result_lkey) {
    uint64_t base = 0;
    const gda::Status room = gda::reserve<Ordering, shared>(qp, gda::fetch_add_wqebbs(), &base);
    if (room != gda::Status::ok) return room;
    const gda::FetchAddRequest request{remote_address, rkey, addend, result_address, result_lkey};
    gda::write_fetch_add_wqe(qp, base, request, gda::Completion::signaled);
    const gda::Status published = gda::publish<shared>(qp, base, gda::fetch_add_wqebbs());
    if (published != gda::Status::ok) return published;
    return gda::ring<Ordering, shared>(qp);
  }
};

}  // namespace dissect::moe
