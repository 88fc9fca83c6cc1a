// The 64-byte mlx5 CQE, its error form and syndromes, named as rdma-core's mlx5dv.h names them.
//
// Ownership (rdma-core cq.c get_sw_cqe): software owns CQE number n (a free-running counter) when
// its opcode is not INVALID and its owner bit equals bit log2(cqe_count) of n, so the expected
// owner bit flips every time the counter wraps the power-of-two ring. Layout: docs/mlx5_sources.md §3.1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dissect/mlx5/endian.h"

namespace dissect::mlx5 {

inline constexpr uint32_t MLX5_CQE_SIZE = 64;
inline constexpr uint8_t MLX5_CQE_OWNER_MASK = 1;

// CQE opcodes: op_own >> 4.
enum mlx5_cqe_opcode : uint8_t {
  MLX5_CQE_REQ = 0,
  MLX5_CQE_RESP_WR_IMM = 1,
  MLX5_CQE_RESP_SEND = 2,
  MLX5_CQE_RESP_SEND_IMM = 3,
  MLX5_CQE_RESP_SEND_INV = 4,
  MLX5_CQE_RESIZE_CQ = 5,
  MLX5_CQE_NO_PACKET = 6,
  MLX5_CQE_SIG_ERR = 12,
  MLX5_CQE_REQ_ERR = 13,
  MLX5_CQE_RESP_ERR = 14,
  MLX5_CQE_INVALID = 15,
};

// Error syndromes (mlx5dv.h; mapped to ibv_wc_status by rdma-core cq.c mlx5_handle_error_cqe).
enum mlx5_cqe_syndrome : uint8_t {
  MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR = 0x01,
  MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR = 0x02,
  MLX5_CQE_SYNDROME_LOCAL_PROT_ERR = 0x04,
  MLX5_CQE_SYNDROME_WR_FLUSH_ERR = 0x05,
  MLX5_CQE_SYNDROME_MW_BIND_ERR = 0x06,
  MLX5_CQE_SYNDROME_BAD_RESP_ERR = 0x10,
  MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR = 0x11,
  MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR = 0x12,
  MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR = 0x13,
  MLX5_CQE_SYNDROME_REMOTE_OP_ERR = 0x14,
  MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR = 0x15,
  MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR = 0x16,
  MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR = 0x22,
};

// The PRM name of a CQE error syndrome, for messages.
DISSECT_HD constexpr const char* syndrome_name(uint8_t syndrome) {
  switch (syndrome) {
    case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR: return "local length error";
    case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR: return "local QP operation error";
    case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR: return "local protection error";
    case MLX5_CQE_SYNDROME_WR_FLUSH_ERR: return "work request flushed";
    case MLX5_CQE_SYNDROME_MW_BIND_ERR: return "memory window bind error";
    case MLX5_CQE_SYNDROME_BAD_RESP_ERR: return "bad response";
    case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR: return "local access error";
    case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR: return "remote invalid request";
    case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR: return "remote access error";
    case MLX5_CQE_SYNDROME_REMOTE_OP_ERR: return "remote operation error";
    case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR: return "remote aborted";
    default: return "unknown syndrome";
  }
}

struct mlx5_cqe64 {
  uint8_t reserved0[2];
  be16 wqe_id;
  uint8_t reserved4[13];
  uint8_t ml_path;
  uint8_t reserved18[4];
  be16 slid;
  be32 flags_rqpn;
  uint8_t hds_ip_ext;
  uint8_t l4_hdr_type_etc;
  be16 vlan_info;
  be32 srqn_uidx;
  be32 imm_inval_pkey;  // responder: the immediate of a WRITE_IMM / SEND_IMM
  uint8_t app;
  uint8_t app_op;
  be16 app_info;
  be32 byte_cnt;  // responder: bytes received
  be64 timestamp;
  be32 sop_drop_qpn;  // qpn 23..0; requester: opcode of the completed WQE in 31..24
  be16 wqe_counter;   // wqe_index of the completed (signalled) WQE
  uint8_t signature;
  uint8_t op_own;  // opcode 7..4 | format 3..2 | solicited 1 | owner 0
};

struct mlx5_err_cqe {
  uint8_t reserved0[32];
  be32 srqn;
  uint8_t reserved36[16];
  uint8_t hw_err_synd;
  uint8_t hw_synd_type;
  uint8_t vendor_err_synd;
  uint8_t syndrome;
  be32 s_wqe_opcode_qpn;  // opcode of the failing WQE 31..24 | qpn 23..0
  be16 wqe_counter;
  uint8_t signature;
  uint8_t op_own;
};

static_assert(sizeof(mlx5_cqe64) == 64);
static_assert(offsetof(mlx5_cqe64, srqn_uidx) == 32);
static_assert(offsetof(mlx5_cqe64, imm_inval_pkey) == 36);
static_assert(offsetof(mlx5_cqe64, byte_cnt) == 44);
static_assert(offsetof(mlx5_cqe64, timestamp) == 48);
static_assert(offsetof(mlx5_cqe64, sop_drop_qpn) == 56);
static_assert(offsetof(mlx5_cqe64, wqe_counter) == 60);
static_assert(offsetof(mlx5_cqe64, op_own) == 63);
static_assert(sizeof(mlx5_err_cqe) == 64);
static_assert(offsetof(mlx5_err_cqe, vendor_err_synd) == 54);
static_assert(offsetof(mlx5_err_cqe, syndrome) == 55);
static_assert(offsetof(mlx5_err_cqe, s_wqe_opcode_qpn) == 56);
static_assert(offsetof(mlx5_err_cqe, wqe_counter) == 60);

DISSECT_HD constexpr uint8_t cqe_opcode(uint8_t op_own) { return op_own >> 4; }
DISSECT_HD constexpr uint8_t cqe_owner(uint8_t op_own) { return op_own & MLX5_CQE_OWNER_MASK; }
// The owner bit a CQE carries when written as the n-th CQE into a ring of `cqe_count` entries.
DISSECT_HD constexpr uint8_t cqe_owner_for(uint64_t n, uint32_t cqe_count) {
  return static_cast<uint8_t>((n & cqe_count) ? 1 : 0);
}
DISSECT_HD constexpr uint8_t make_op_own(uint8_t opcode, uint64_t n, uint32_t cqe_count) {
  return static_cast<uint8_t>((opcode << 4) | cqe_owner_for(n, cqe_count));
}
// True when software owns CQE number n (rdma-core get_sw_cqe).
DISSECT_HD constexpr bool cqe_is_sw_owned(uint8_t op_own, uint64_t n, uint32_t cqe_count) {
  return cqe_opcode(op_own) != MLX5_CQE_INVALID && cqe_owner(op_own) == cqe_owner_for(n, cqe_count);
}
// How a fresh CQ ring is initialised: INVALID opcode, owner 1 (DOCA's 0xF1), so that entry n of
// the first lap (expected owner 0) is not mistaken for a valid CQE.
inline constexpr uint8_t MLX5_CQE_INITIAL_OP_OWN = (MLX5_CQE_INVALID << 4) | 1;

}  // namespace dissect::mlx5
