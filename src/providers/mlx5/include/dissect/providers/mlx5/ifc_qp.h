// CREATE_QP and the RST2INIT / INIT2RTR / RTR2RTS modify commands: the address path (ads), the
// QP context (qpc) and the commands around it.
// Offsets: rdma-core providers/mlx5/mlx5_ifc.h `mlx5_ifc_ads_bits`, `mlx5_ifc_qpc_bits`,
// `mlx5_ifc_rst2init_qp_in_bits` (the same in the kernel's mlx5_ifc.h); the wq_umem_* tail of
// create_qp_in from the kernel's `mlx5_ifc_create_qp_in_bits` (rdma-core's copy omits it); the DCI
// fields (full_handshake, log_num_dci_*) from the kernel's qpc_bits and UCX's ib_mlx5_ifc.h.
#pragma once

#include "dissect/providers/mlx5/ifc_common.h"

namespace dissect::mlx5provider {

namespace ads {  // struct mlx5_ifc_ads_bits (address path), 0x160 bits
inline constexpr PrmField fl{0x00, 1};
inline constexpr PrmField pkey_index{0x10, 16};
inline constexpr PrmField grh{0x28, 1};
inline constexpr PrmField mlid{0x29, 7};
inline constexpr PrmField rlid{0x30, 16};
inline constexpr PrmField ack_timeout{0x40, 5};
inline constexpr PrmField src_addr_index{0x48, 8};
inline constexpr PrmField stat_rate{0x54, 4};
inline constexpr PrmField hop_limit{0x58, 8};
inline constexpr PrmField tclass{0x64, 8};
inline constexpr PrmField flow_label{0x6c, 20};
inline constexpr uint32_t rgid_rip = 0x80;  // 16 bytes
inline constexpr PrmField dscp{0x10a, 6};
inline constexpr PrmField udp_sport{0x110, 16};
inline constexpr PrmField eth_prio{0x121, 3};
inline constexpr PrmField sl{0x124, 4};
inline constexpr PrmField vhca_port_num{0x128, 8};
inline constexpr uint32_t rmac_47_32 = 0x130;  // rmac_47_32 (16 bits) then rmac_31_0: 6 bytes
inline constexpr uint32_t bits = 0x160;
static_assert(all_valid({fl, pkey_index, grh, mlid, rlid, ack_timeout, src_addr_index, stat_rate,
                         hop_limit, tclass, flow_label, dscp, udp_sport, eth_prio, sl,
                         vhca_port_num}));
}  // namespace ads

namespace qpc {  // struct mlx5_ifc_qpc_bits, 0x740 bits
inline constexpr PrmField state{0x00, 4};
inline constexpr PrmField st{0x08, 8};
inline constexpr PrmField pm_state{0x13, 2};
inline constexpr PrmField pd{0x28, 24};
inline constexpr PrmField mtu{0x40, 3};
inline constexpr PrmField log_msg_max{0x43, 5};
inline constexpr PrmField log_rq_size{0x49, 4};
inline constexpr PrmField log_rq_stride{0x4d, 3};
inline constexpr PrmField no_sq{0x50, 1};
inline constexpr PrmField log_sq_size{0x51, 4};
inline constexpr PrmField uar_page{0x68, 24};
inline constexpr PrmField full_handshake{0x83, 1};  // DCI: handshake on every new target
inline constexpr PrmField user_index{0x88, 24};
inline constexpr PrmField log_page_size{0xa3, 5};
inline constexpr PrmField remote_qpn{0xa8, 24};
inline constexpr uint32_t primary_address_path = 0xc0;  // struct mlx5_ifc_ads_bits
inline constexpr PrmField log_ack_req_freq{0x380, 4};
inline constexpr PrmField log_sra_max{0x388, 3};
inline constexpr PrmField retry_count{0x38d, 3};
inline constexpr PrmField rnr_retry{0x390, 3};
inline constexpr PrmField next_send_psn{0x3c8, 24};
inline constexpr PrmField log_num_dci_stream_channels{0x3e4, 4};  // DCI streams; 0 = one stream
inline constexpr PrmField cqn_snd{0x3e8, 24};
inline constexpr PrmField log_num_dci_errored_streams{0x404, 4};
inline constexpr PrmField log_rra_max{0x488, 3};
inline constexpr PrmField atomic_mode{0x48c, 4};
inline constexpr PrmField rre{0x490, 1};
inline constexpr PrmField rwe{0x491, 1};
inline constexpr PrmField rae{0x492, 1};
inline constexpr PrmField page_offset{0x494, 6};
inline constexpr PrmField min_rnr_nak{0x4a3, 5};
inline constexpr PrmField next_rcv_psn{0x4a8, 24};
inline constexpr PrmField cqn_rcv{0x4e8, 24};
inline constexpr PrmField dbr_addr{0x500, 64};
inline constexpr PrmField rq_type{0x565, 3};
inline constexpr PrmField srqn_rmpn_xrqn{0x568, 24};
inline constexpr PrmField cs_req{0x630, 8};
inline constexpr PrmField cs_res{0x638, 8};
inline constexpr PrmField dc_access_key{0x640, 64};
inline constexpr PrmField dbr_umem_valid{0x683, 1};
inline constexpr PrmField dbr_umem_id{0x720, 32};
inline constexpr uint32_t bits = 0x740;
static_assert(primary_address_path + ads::bits == 0x220);
static_assert(all_valid({state, st, pm_state, pd, mtu, log_msg_max, log_rq_size, log_rq_stride,
                         no_sq, log_sq_size, uar_page, full_handshake, user_index, log_page_size,
                         remote_qpn,
                         log_ack_req_freq, log_sra_max, retry_count, rnr_retry, next_send_psn,
                         log_num_dci_stream_channels, cqn_snd, log_num_dci_errored_streams,
                         log_rra_max, atomic_mode, rre, rwe, rae, page_offset,
                         min_rnr_nak, next_rcv_psn, cqn_rcv, dbr_addr, rq_type, srqn_rmpn_xrqn,
                         cs_req, cs_res, dc_access_key, dbr_umem_valid, dbr_umem_id}));
}  // namespace qpc

// The address-path field `f` of the QPC nested at bit `qpc_base` of a command.
constexpr PrmField primary_path(uint32_t qpc_base, PrmField f) {
  return at(qpc_base + qpc::primary_address_path, f);
}

namespace create_qp_in {
inline constexpr PrmField opt_param_mask{0x80, 32};
inline constexpr uint32_t qpc = 0xc0;
inline constexpr PrmField wq_umem_offset{0x800, 64};
inline constexpr PrmField wq_umem_id{0x840, 32};
inline constexpr PrmField wq_umem_valid{0x860, 1};
inline constexpr uint32_t bits = 0x880;  // without pas[]
static_assert(qpc + qpc::bits == 0x800);
static_assert(all_valid({opt_param_mask, wq_umem_offset, wq_umem_id, wq_umem_valid}));
}  // namespace create_qp_in

// RST2INIT_QP, INIT2RTR_QP and RTR2RTS_QP inputs share one layout.
namespace modify_qp_in {
inline constexpr PrmField qpn{0x48, 24};
inline constexpr PrmField opt_param_mask{0x80, 32};
inline constexpr uint32_t qpc = 0xc0;
inline constexpr uint32_t bits = 0x880;
static_assert(all_valid({qpn, opt_param_mask}));
}  // namespace modify_qp_in

using CreateQpIn = PrmBuffer<create_qp_in::bits>;
using CreateQpOut = PrmBuffer<cmd_out::bits>;
using ModifyQpIn = PrmBuffer<modify_qp_in::bits>;
using ModifyQpOut = PrmBuffer<cmd_out::bits>;

}  // namespace dissect::mlx5provider
