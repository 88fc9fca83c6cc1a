// The worker's posting step over plain verbs (any RDMA NIC): one ibv_post_send chain per post,
// the last request signalled. Built with rdma-core only (DISSECT_HAVE_MLX5).
// Status: compiled in CI; never run on a NIC (no machine here has one).
#pragma once

#include <cstdint>
#include <memory>

#include "dissect/proxy/poster.h"

namespace dissect::ibverbs {
class Endpoint;
}

namespace dissect::proxy {

// `endpoint` must outlive the proxy; `max_send_wr` is the depth it was created with. Supports
// RDMA WRITE only (Endpoint has no atomics): fetch-add descriptors fail their ring.
std::unique_ptr<Poster> make_verbs_poster(ibverbs::Endpoint& endpoint, uint32_t max_send_wr);

}  // namespace dissect::proxy
