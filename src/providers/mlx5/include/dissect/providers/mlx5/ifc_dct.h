// CREATE_DCT: the DC target context (dctc).
// Offsets: kernel include/linux/mlx5/mlx5_ifc.h `mlx5_ifc_dctc_bits` and
// `mlx5_ifc_create_dct_in_bits` (rdma-core's copy of dctc only names data_in_order).
#pragma once

#include "dissect/providers/mlx5/ifc_common.h"

namespace dissect::mlx5provider {

namespace dctc {
inline constexpr PrmField state{0x04, 4};
inline constexpr PrmField user_index{0x28, 24};
inline constexpr PrmField cqn{0x48, 24};
inline constexpr PrmField counter_set_id{0x60, 8};
inline constexpr PrmField atomic_mode{0x68, 4};
inline constexpr PrmField rre{0x6c, 1};
inline constexpr PrmField rwe{0x6d, 1};
inline constexpr PrmField rae{0x6e, 1};
inline constexpr PrmField cs_res{0x88, 8};
inline constexpr PrmField min_rnr_nak{0x93, 5};
inline constexpr PrmField srqn_xrqn{0xa8, 24};
inline constexpr PrmField pd{0xc8, 24};
inline constexpr PrmField tclass{0xe0, 8};
inline constexpr PrmField flow_label{0xec, 20};
inline constexpr PrmField dc_access_key{0x100, 64};
inline constexpr PrmField mtu{0x145, 3};
inline constexpr PrmField port{0x148, 8};
inline constexpr PrmField pkey_index{0x150, 16};
inline constexpr PrmField my_addr_index{0x168, 8};
inline constexpr PrmField hop_limit{0x178, 8};
inline constexpr PrmField eth_prio{0x1b5, 3};
inline constexpr PrmField dscp{0x1ba, 6};
inline constexpr uint32_t bits = 0x200;
static_assert(all_valid({state, user_index, cqn, counter_set_id, atomic_mode, rre, rwe, rae, cs_res,
                         min_rnr_nak, srqn_xrqn, pd, tclass, flow_label, dc_access_key, mtu, port,
                         pkey_index, my_addr_index, hop_limit, eth_prio, dscp}));
}  // namespace dctc

namespace create_dct_in {
inline constexpr uint32_t dct_context_entry = 0x80;
inline constexpr uint32_t bits = 0x400;  // dctc ends at 0x280, then 0x180 reserved
static_assert(dct_context_entry + dctc::bits == 0x280);
}  // namespace create_dct_in

using CreateDctIn = PrmBuffer<create_dct_in::bits>;
using CreateDctOut = PrmBuffer<cmd_out::bits>;

}  // namespace dissect::mlx5provider
