// CREATE_CQ: the completion queue context (cqc) and the command around it.
// Offsets: DOCA GPUNetIO's mlx5_ifc.h (as vendored by NCCL's gdaki transport) `mlx5_ifc_cqc_bits`
// and `mlx5_ifc_create_cq_in_bits`; the kernel's include/linux/mlx5/mlx5_ifc.h agrees on every field
// below except dbr_umem_id, which older kernels leave reserved at 0x20 (DEVX-only field).
#pragma once

#include "dissect/providers/mlx5/ifc_common.h"

namespace dissect::mlx5provider {

namespace cqc {
inline constexpr PrmField dbr_umem_valid{0x06, 1};
inline constexpr PrmField cqe_sz{0x08, 3};
inline constexpr PrmField cc{0x0b, 1};  // collapsed CQ: every CQE lands in entry 0
inline constexpr PrmField oi{0x0e, 1};  // overrun ignore: the NIC never checks the consumer index
inline constexpr PrmField dbr_umem_id{0x20, 32};
inline constexpr PrmField page_offset{0x54, 6};
inline constexpr PrmField log_cq_size{0x63, 5};
inline constexpr PrmField uar_page{0x68, 24};
inline constexpr PrmField c_eqn{0xb8, 8};
inline constexpr PrmField log_page_size{0xc3, 5};
inline constexpr PrmField dbr_addr{0x1c0, 64};
inline constexpr uint32_t bits = 0x200;
static_assert(all_valid({dbr_umem_valid, cqe_sz, cc, oi, dbr_umem_id, page_offset, log_cq_size,
                         uar_page, c_eqn, log_page_size, dbr_addr}));
}  // namespace cqc

namespace create_cq_in {
inline constexpr uint32_t cq_context = 0x80;  // struct mlx5_ifc_cqc_bits
inline constexpr PrmField cq_umem_offset{0x280, 64};
inline constexpr PrmField cq_umem_id{0x2c0, 32};
inline constexpr PrmField cq_umem_valid{0x2e0, 1};
inline constexpr uint32_t bits = 0x880;  // without the trailing pas[] (umem replaces it)
static_assert(cq_context + cqc::bits == 0x280);
static_assert(all_valid({cq_umem_offset, cq_umem_id, cq_umem_valid}));
}  // namespace create_cq_in

using CreateCqIn = PrmBuffer<create_cq_in::bits>;
using CreateCqOut = PrmBuffer<cmd_out::bits>;

}  // namespace dissect::mlx5provider
