// Doorbell record and doorbell value.
//
// The doorbell record (DBR) is 8 bytes in memory the NIC reads: word 0 (MLX5_RCV_DBR) holds the
// receive-queue producer counter, word 1 (MLX5_SND_DBR) the send-queue producer counter, each as
// BE32(counter & 0xffff), where the send counter is the next free WQEBB index (rdma-core qp.c
// post_send_db). The doorbell is one 8-byte store to the UAR register; it carries the first 8 bytes
// of a control segment, of which the NIC inspects only the WQE index and the QP number. Like
// NVSHMEM, DeepEP and DOCA we ring with a synthetic control word: index = next free WQEBB, opcode 0,
// ds 0. docs/mlx5_sources.md §2.1-§2.2.
#pragma once

#include <cstdint>

#include "dissect/mlx5/endian.h"

namespace dissect::mlx5 {

enum mlx5_dbr_word : uint32_t { MLX5_RCV_DBR = 0, MLX5_SND_DBR = 1 };
enum mlx5_cq_dbr_word : uint32_t { MLX5_CQ_SET_CI = 0, MLX5_CQ_ARM_DB = 1 };

struct mlx5_qp_dbrec {
  be32 rcv_counter;   // MLX5_RCV_DBR
  be32 send_counter;  // MLX5_SND_DBR
};
static_assert(sizeof(mlx5_qp_dbrec) == 8);

DISSECT_HD constexpr be32 dbrec_value(uint64_t producer_counter) {
  return be32::from_host(static_cast<uint32_t>(producer_counter & 0xffff));
}

// The 8-byte memory image stored to the doorbell register for a send queue whose next free WQEBB
// is `producer_counter`. Byte order is the control segment's: opmod_idx_opcode then qpn_ds.
DISSECT_HD constexpr uint64_t doorbell_value(uint64_t producer_counter, uint32_t qpn) {
  const uint32_t opmod_idx_opcode = static_cast<uint32_t>(producer_counter & 0xffff) << 8;
  const uint32_t qpn_ds = qpn << 8;
  return static_cast<uint64_t>(byte_swap(opmod_idx_opcode)) |
         (static_cast<uint64_t>(byte_swap(qpn_ds)) << 32);
}
DISSECT_HD constexpr uint16_t doorbell_wqe_index(uint64_t doorbell) {
  return static_cast<uint16_t>((byte_swap(static_cast<uint32_t>(doorbell)) >> 8) & 0xffff);
}
DISSECT_HD constexpr uint32_t doorbell_qpn(uint64_t doorbell) {
  return byte_swap(static_cast<uint32_t>(doorbell >> 32)) >> 8;
}

static_assert(doorbell_wqe_index(doorbell_value(0x12345, 0xabcdef)) == 0x2345);
static_assert(doorbell_qpn(doorbell_value(0x12345, 0xabcdef)) == 0xabcdef);

}  // namespace dissect::mlx5
