// The mini-proxy transport of the MoE client (moe/transport_gda.h states the contract): the
// sending warp's leader writes one 16 B descriptor with the tuned handoff (proxy/handoff.h: a
// private reservation and one 16-byte store that carries its own validity) and a CPU worker turns
// it into the RDMA operation.
//
// Mapping: rank r runs one proxy::Proxy whose worker d owns the QP towards rank d; the ring for
// (destination d, local expert l) is rings[d x L + l]. The ring's worker must be worker d, so the
// proxy numbers rings l x ranks + d (worker = ring % ranks; the rig builds `rings` that way) and
// window d is (r's arena -> d's arena, d's rkey). Descriptors of one ring are posted in order on
// one QP, so the signal follows its data. Doorbell batching is the worker's: it chains up to
// ProxyConfig::batch consecutive descriptors of a ring into one post (one doorbell).
//
// Every warp of the rank may send to any ring, so producers share rings (Sharing::shared). The
// release store of each descriptor (system scope) orders the lanes' payload stores before it: the
// lanes met at a warp barrier first, and the fence is cumulative.
#pragma once

#include <cstdint>

#include "dissect/gda/status.h"
#include "dissect/moe/handle.h"
#include "dissect/proxy/handoff.h"

namespace dissect::moe {

struct ProxyTransport {
  static constexpr const char* name = "mini-proxy";

  DISSECT_HD static const proxy::RingHandle& ring_towards(const MoeRankHandle& h, uint32_t d,
                                                          uint32_t local) {
    return h.rings[uint64_t{d} * local_experts(h.shape) + local];
  }

  DISSECT_HD static gda::Status send(const MoeRankHandle& h, uint32_t d, uint32_t local,
                                     uint64_t local_offset, uint64_t remote_offset, uint32_t bytes,
                                     uint32_t /*message_index: the worker batches*/) {
    const proxy::Request request{proxy::Operation::write, d, bytes,
                                 static_cast<uint32_t>(local_offset), remote_offset};
    uint64_t index = 0;
    return proxy::enqueue<proxy::tuned, proxy::Sharing::shared>(ring_towards(h, d, local), request,
                                                                &index, h.timeout_ns);
  }

  DISSECT_HD static gda::Status signal(const MoeRankHandle& h, uint32_t d, uint32_t local,
                                       uint64_t remote_offset, uint32_t addend) {
    const proxy::Request request{proxy::Operation::fetch_add, d, addend,
                                 static_cast<uint32_t>(atomic_result_offset(h, d, local)),
                                 remote_offset};
    uint64_t index = 0;
    return proxy::enqueue<proxy::tuned, proxy::Sharing::shared>(ring_towards(h, d, local), request,
                                                                &index, h.timeout_ns);
  }
};

}  // namespace dissect::moe
