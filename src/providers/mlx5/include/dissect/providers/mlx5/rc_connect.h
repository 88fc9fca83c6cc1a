// What one side needs to move an RC QP from RESET to RTS, independent of the API that applies it
// (verbs ibv_modify_qp in qp_attr.h, or DEVX RST2INIT/INIT2RTR/RTR2RTS in devx_commands.h).
// Defaults are the values NVSHMEM, NCCL and Mooncake use (docs/mlx5_sources.md §5.1).
#pragma once

#include <cstdint>

namespace dissect::mlx5provider {

enum class LinkLayer : uint8_t { infiniband, ethernet };

// Access flags with the values of IBV_ACCESS_* (so they pass to verbs unchanged).
inline constexpr uint32_t RC_ACCESS_LOCAL_WRITE = 1;
inline constexpr uint32_t RC_ACCESS_REMOTE_WRITE = 2;
inline constexpr uint32_t RC_ACCESS_REMOTE_READ = 4;
inline constexpr uint32_t RC_ACCESS_REMOTE_ATOMIC = 8;

struct RcConnectParams {
  // Local side.
  uint8_t port_num = 1;
  uint16_t pkey_index = 0;
  uint32_t access = RC_ACCESS_LOCAL_WRITE | RC_ACCESS_REMOTE_WRITE | RC_ACCESS_REMOTE_READ |
                    RC_ACCESS_REMOTE_ATOMIC;
  uint8_t path_mtu = 5;             // enum ibv_mtu / PRM mtu: 5 = 4096 B
  uint8_t max_rd_atomic = 16;       // outstanding READ/atomic we initiate (verbs max_rd_atomic)
  uint8_t max_dest_rd_atomic = 16;  // outstanding READ/atomic we accept (max_dest_rd_atomic)
  uint8_t min_rnr_timer = 12;       // IB encoding: 12 = 0.64 ms
  uint8_t timeout = 20;             // local ACK timeout 4.096 us * 2^20 ~ 4.3 s
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;            // 7 = retry forever
  uint32_t sq_psn = 0;
  // Remote side, exchanged out of band.
  uint32_t remote_qpn = 0;
  uint32_t rq_psn = 0;  // the remote's sq_psn
  LinkLayer link_layer = LinkLayer::infiniband;
  uint16_t remote_lid = 0;
  uint8_t remote_gid[16] = {};
  bool use_grh = false;  // forced on for Ethernet (RoCE packets always carry a GRH)
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 255;
  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;
  uint8_t sl = 0;
};

// log2 rounded up, as the kernel encodes log_sra_max/log_rra_max (mlx5 qp.c:
// fls(max_rd_atomic - 1)).
constexpr uint8_t ceil_log2(uint32_t v) {
  uint8_t n = 0;
  while ((1u << n) < v) ++n;
  return n;
}
static_assert(ceil_log2(1) == 0 && ceil_log2(16) == 4 && ceil_log2(17) == 5);

}  // namespace dissect::mlx5provider
