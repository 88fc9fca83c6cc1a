// The ibverbs provider: plain verbs for the proxy workers, on any RDMA NIC (mlx5, rxe, EFA-less
// verbs devices). A worker drains its descriptor ring into one ibv_post_send call per batch: the
// writes are linked through ibv_send_wr::next and only the last one is signaled, so one CQE
// retires the whole chain (RC completes in order).
//
// Threads: one worker owns an Endpoint; nothing here is shared between threads.
// Status: compiled in CI against rdma-core 44; never run on a NIC (docs/hardware.md).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/providers/mlx5/qp_attr.h"

namespace dissect::ibverbs {

struct RdmaWrite {
  uint64_t local_address;
  uint32_t length;
  uint32_t lkey;
  uint64_t remote_address;
  uint32_t rkey;
  bool with_immediate = false;
  uint32_t immediate = 0;  // host order; sent big-endian as verbs defines imm_data
};

struct EndpointOptions {
  std::string device;     // "mlx5_0"; empty = the first device
  uint8_t port_num = 1;
  uint8_t gid_index = 0;
  uint32_t max_send_wr = 1024;
  uint32_t max_recv_wr = 0;
  uint32_t max_inline = 0;
};

struct EndpointAddress {
  uint32_t qpn = 0;
  uint16_t lid = 0;
  uint8_t gid[16] = {};
};

class Endpoint {
 public:
  explicit Endpoint(const EndpointOptions& options);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  EndpointAddress address() const;
  void connect(const EndpointAddress& remote);
  ibv_mr* register_memory(void* address, size_t length, int access);
  void deregister_memory(ibv_mr* mr);

  // Posts `writes` as one chain; returns the wr_id of the signaled last write.
  uint64_t post_write_chain(const std::vector<RdmaWrite>& writes);
  // Polls up to `max` completions; returns the wr_ids of those that succeeded and throws
  // VerbsError (with the QP number and the ibv_wc_status text) on the first failed one.
  std::vector<uint64_t> poll(int max);

  const std::string& device_name() const;

 private:
  struct Resources;
  std::unique_ptr<Resources> r_;
};

// The linked work requests for `writes`, exposed for unit tests: wr[i].next = &wr[i + 1], only the
// last signaled, ids first_id, first_id + 1, ...
void build_write_chain(const std::vector<RdmaWrite>& writes, uint64_t first_id,
                       std::vector<ibv_send_wr>& wrs, std::vector<ibv_sge>& sges);

}  // namespace dissect::ibverbs
