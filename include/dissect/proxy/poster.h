// How a worker hands a chain of requests to its NIC: the one step that differs between providers.
//
//   softnic / mlx5  make_mlx5_ring_poster(qp): builds mlx5 WQEs in the QP's send ring (host
//                   memory) with mini-gda's builders and rings the doorbell, as rdma-core's mlx5
//                   provider does; the softnic engine or a ConnectX consumes the same bytes.
//   ibverbs         make_verbs_poster(endpoint) (DISSECT_HAVE_MLX5 builds): one ibv_post_send
//                   chain per post.
//
// A poster is driven by one worker thread only. Tokens are monotonic per poster: a chain whose
// post() returned `end` has retired (its signalled last request completed, so every earlier one
// did too: RC completes in order) once poll() returns a value >= end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dissect/nic/handles.h"
#include "dissect/proxy/descriptor.h"

namespace dissect::proxy {

// One request with its addresses resolved through the window table.
struct PostItem {
  Operation operation;  // write, fetch_add, or invalid (post a no-op that keeps the chain whole)
  uint64_t local_address;
  uint32_t lkey;
  uint32_t length;      // bytes (write) or addend (fetch_add)
  uint64_t remote_address;
  uint32_t rkey;
};

class Poster {
 public:
  virtual ~Poster() = default;
  virtual std::string describe() const = 0;  // names the QP, for messages
  virtual uint32_t room() const = 0;         // requests post() may take now
  virtual bool supports(Operation operation) const = 0;
  virtual uint64_t post(const PostItem* items, uint32_t count) = 0;  // count <= room(); last signalled
  virtual uint64_t poll() = 0;               // consumes completions; the retired token
  virtual uint32_t error() const = 0;        // 0, or the first error's syndrome | 0x100
};

std::unique_ptr<Poster> make_mlx5_ring_poster(const nic::QpHandle& qp);

}  // namespace dissect::proxy
