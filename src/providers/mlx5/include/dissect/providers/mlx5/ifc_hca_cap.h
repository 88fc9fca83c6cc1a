// QUERY_HCA_CAP: the general-device and atomic capability pages fields the GPU-resident path needs.
// Offsets: rdma-core providers/mlx5/mlx5_ifc.h `mlx5_ifc_query_hca_cap_in_bits`,
// `mlx5_ifc_query_hca_cap_out_bits`, `mlx5_ifc_cmd_hca_cap_bits`, `mlx5_ifc_atomic_caps_bits`.
#pragma once

#include "dissect/providers/mlx5/ifc_common.h"

namespace dissect::mlx5provider {

// op_mod = capability type << 1 | (1 = current values, 0 = maximum) (mlx5_ifc.h
// MLX5_SET_HCA_CAP_OP_MOD_*, HCA_CAP_OPMOD_GET_CUR).
enum mlx5_cap_type : uint16_t { MLX5_CAP_GENERAL = 0, MLX5_CAP_ATOMIC = 3 };
inline constexpr uint16_t HCA_CAP_OPMOD_GET_MAX = 0;
inline constexpr uint16_t HCA_CAP_OPMOD_GET_CUR = 1;

namespace query_hca_cap_in {
inline constexpr uint32_t bits = 0x80;
}
namespace query_hca_cap_out {
inline constexpr uint32_t capability = 0x80;  // union mlx5_ifc_hca_cap_union_bits, 0x8000 bits
inline constexpr uint32_t bits = 0x80 + 0x8000;
}  // namespace query_hca_cap_out

namespace cmd_hca_cap {
inline constexpr PrmField log_max_qp_sz{0x88, 8};
inline constexpr PrmField log_max_cq_sz{0xc8, 8};
inline constexpr PrmField port_type{0x1b6, 2};  // 0 = InfiniBand, 1 = Ethernet
inline constexpr PrmField log_max_msg{0x1c3, 5};
inline constexpr PrmField cqe_version{0x1fc, 4};
inline constexpr PrmField compact_address_vector{0x200, 1};
inline constexpr PrmField dct{0x21a, 1};
inline constexpr PrmField roce{0x21d, 1};
inline constexpr PrmField atomic{0x21e, 1};
inline constexpr PrmField uar_4k{0x240, 1};
inline constexpr PrmField log_bf_reg_size{0x26b, 5};
inline constexpr PrmField log_max_atomic_size_qp{0x580, 8};
inline constexpr PrmField log_max_atomic_size_dc{0x598, 8};
static_assert(all_valid({log_max_qp_sz, log_max_cq_sz, port_type, log_max_msg, cqe_version,
                         compact_address_vector, dct, roce, atomic, uar_4k, log_bf_reg_size,
                         log_max_atomic_size_qp, log_max_atomic_size_dc}));
}  // namespace cmd_hca_cap

namespace atomic_caps {
inline constexpr PrmField atomic_operations{0x90, 16};
inline constexpr PrmField atomic_size_qp{0xb0, 16};
inline constexpr PrmField atomic_size_dc{0xd0, 16};
static_assert(all_valid({atomic_operations, atomic_size_qp, atomic_size_dc}));
}  // namespace atomic_caps

// atomic_operations bits (kernel include/linux/mlx5/driver.h MLX5_ATOMIC_OPS_*) and atomic_size
// bits (bit n set = 2^n-byte operands supported; 0x4 = 4 B, 0x8 = 8 B).
enum mlx5_atomic_operations : uint16_t {
  MLX5_ATOMIC_OPS_CMP_SWAP = 1u << 0,
  MLX5_ATOMIC_OPS_FETCH_ADD = 1u << 1,
  MLX5_ATOMIC_OPS_MASKED_CMP_SWAP = 1u << 2,
  MLX5_ATOMIC_OPS_MASKED_FETCH_ADD = 1u << 3,
};
inline constexpr uint16_t MLX5_ATOMIC_SIZE_4_BYTES = 1u << 2;
inline constexpr uint16_t MLX5_ATOMIC_SIZE_8_BYTES = 1u << 3;

using QueryHcaCapIn = PrmBuffer<query_hca_cap_in::bits>;
using QueryHcaCapOut = PrmBuffer<query_hca_cap_out::bits>;

}  // namespace dissect::mlx5provider
