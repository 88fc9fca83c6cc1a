// Command opcodes, the shared command header, and enumerations used in more than one context.
// Sources: rdma-core providers/mlx5/mlx5_ifc.h (enum of MLX5_CMD_OP_*; the *_in_bits/_out_bits
// headers), kernel include/linux/mlx5/mlx5_ifc.h, kernel include/linux/mlx5/qp.h.
#pragma once

#include <initializer_list>

#include "dissect/providers/mlx5/prm_field.h"

namespace dissect::mlx5provider {

enum mlx5_cmd_op : uint16_t {
  MLX5_CMD_OP_QUERY_HCA_CAP = 0x100,
  MLX5_CMD_OP_CREATE_CQ = 0x400,
  MLX5_CMD_OP_DESTROY_CQ = 0x401,
  MLX5_CMD_OP_CREATE_QP = 0x500,
  MLX5_CMD_OP_DESTROY_QP = 0x501,
  MLX5_CMD_OP_RST2INIT_QP = 0x502,
  MLX5_CMD_OP_INIT2RTR_QP = 0x503,
  MLX5_CMD_OP_RTR2RTS_QP = 0x504,
  MLX5_CMD_OP_2ERR_QP = 0x507,
  MLX5_CMD_OP_2RST_QP = 0x50a,
  MLX5_CMD_OP_QUERY_QP = 0x50b,
  MLX5_CMD_OP_CREATE_DCT = 0x710,
  MLX5_CMD_OP_DESTROY_DCT = 0x711,
  MLX5_CMD_OP_QUERY_DCT = 0x713,
};

constexpr bool all_valid(std::initializer_list<PrmField> fields) {
  for (PrmField f : fields) {
    if (!is_valid_field(f)) return false;
  }
  return true;
}

// Every command input starts with opcode/uid/op_mod; every output with status/syndrome
// (mlx5_ifc *_in_bits / *_out_bits).
namespace cmd_in {
inline constexpr PrmField opcode{0x00, 16};
inline constexpr PrmField uid{0x10, 16};
inline constexpr PrmField op_mod{0x30, 16};
}  // namespace cmd_in
namespace cmd_out {
inline constexpr PrmField status{0x00, 8};
inline constexpr PrmField syndrome{0x20, 32};
// CREATE_CQ / CREATE_QP / CREATE_DCT outputs return the object number here (cqn, qpn, dctn).
inline constexpr PrmField object_number{0x48, 24};
inline constexpr uint32_t bits = 0x80;
}  // namespace cmd_out
static_assert(all_valid({cmd_in::opcode, cmd_in::uid, cmd_in::op_mod, cmd_out::status,
                         cmd_out::syndrome, cmd_out::object_number}));

// qpc.st (kernel mlx5_ifc.h MLX5_QPC_ST_*).
enum mlx5_qpc_st : uint8_t { MLX5_QPC_ST_RC = 0x0, MLX5_QPC_ST_UD = 0x2, MLX5_QPC_ST_DCI = 0x5 };
// qpc.pm_state: path migration "migrated" is what every DEVX user writes (MLX5_QPC_PM_STATE_MIGRATED).
inline constexpr uint8_t MLX5_QPC_PM_STATE_MIGRATED = 0x3;
// qpc.rq_type (MLX5_NON_ZERO_RQ / MLX5_SRQ_RQ / MLX5_ZERO_LEN_RQ).
enum mlx5_qpc_rq_type : uint8_t {
  MLX5_NON_ZERO_RQ = 0x0,
  MLX5_SRQ_RQ = 0x1,
  MLX5_ZERO_LEN_RQ = 0x3,
};
// qpc.atomic_mode / dctc.atomic_mode: 3 = "up to 64-bit" atomics, as NVSHMEM and Mooncake set.
inline constexpr uint8_t MLX5_ATOMIC_MODE_UP_TO_64 = 0x3;
// cqc.cqe_sz (MLX5_CQC_CQE_SZ_*).
enum mlx5_cqc_cqe_sz : uint8_t { MLX5_CQC_CQE_SZ_64_BYTES = 0x0, MLX5_CQC_CQE_SZ_128_BYTES = 0x1 };
// Path MTU: the PRM encoding equals enum ibv_mtu (256 B = 1 ... 4096 B = 5).
enum mlx5_mtu : uint8_t {
  MLX5_MTU_256 = 1,
  MLX5_MTU_512 = 2,
  MLX5_MTU_1024 = 3,
  MLX5_MTU_2048 = 4,
  MLX5_MTU_4096 = 5,
};
// log_page_size fields count in 4 KiB adapter pages (MLX5_ADAPTER_PAGE_SHIFT = 12).
inline constexpr uint32_t MLX5_ADAPTER_PAGE_SHIFT = 12;

}  // namespace dissect::mlx5provider
