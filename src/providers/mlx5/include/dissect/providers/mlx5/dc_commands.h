// DEVX commands of a DC initiator (DCI): CREATE_QP with st = DCI, then RST2INIT / INIT2RTR /
// RTR2RTS. A DCI has no peer: the target (DCT number, DC key, route) travels in every WQE's
// address vector (mlx5_wqe_av, wqe.h), so INIT2RTR carries no remote_qpn, rlid or rgid, only the
// local path properties (PRM "DCI"; docs/mlx5_sources.md §5.2). The DC target (CREATE_DCT) is built by
// build_create_dct_in in devx_commands.h: a DCT is created ready and has no state sequence.
// Values follow NVSHMEM (ibgda_qp_rst2init, ibgda_dci_init2rtr, ibgda_qp_rtr2rts) and UCX
// (uct_dc_mlx5_iface_devx_dci_connect).
#pragma once

#include "dissect/providers/mlx5/devx_commands.h"

namespace dissect::mlx5provider {

// NVSHMEM's IBGDA_DC_ACCESS_KEY; any 64-bit value works if both sides agree.
inline constexpr uint64_t DC_ACCESS_KEY_DEFAULT = 0x5623CEAF;

struct DciCreateParams {
  CreateQpParams queue;                     // st is forced to DCI; rq_type stays ZERO_LEN_RQ
  uint8_t log_num_dci_stream_channels = 0;  // DCI streams (ConnectX-7+); 0 = a single stream
};

// The local half of a DCI's path: no remote fields, by construction.
struct DciConnectParams {
  uint8_t port_num = 1;
  uint16_t pkey_index = 0;
  LinkLayer link_layer = LinkLayer::infiniband;
  uint8_t path_mtu = MLX5_MTU_4096;
  uint8_t sl = 0;
  uint8_t traffic_class = 0;   // RoCE: also the DSCP source (tclass >> 2)
  uint8_t max_rd_atomic = 16;  // outstanding READ/atomic this DCI initiates
  uint8_t timeout = 20;        // local ACK timeout exponent
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint32_t sq_psn = 0;
};

inline CreateQpIn build_create_dci_in(const DciCreateParams& p) {
  CreateQpParams queue = p.queue;
  queue.st = MLX5_QPC_ST_DCI;
  // A DCI only sends: the responder side of DC lives in the DCT and its SRQ.
  queue.rq_type = MLX5_ZERO_LEN_RQ;
  queue.log_rq_size = 0;
  CreateQpIn in = build_create_qp_in(queue);
  constexpr uint32_t ctx = create_qp_in::qpc;
  set_field(in, at(ctx, qpc::full_handshake), 0);
  set_field(in, at(ctx, qpc::log_num_dci_stream_channels), p.log_num_dci_stream_channels);
  return in;
}

// RESET->INIT: port and P_Key only. No rre/rwe/rae: those grant remote access to a responder,
// and a DCI never responds. The DC key is not in the QPC: each WQE's AV carries it.
inline ModifyQpIn build_rst2init_dci_in(uint32_t qpn, const DciConnectParams& p) {
  ModifyQpIn in = modify_header(MLX5_CMD_OP_RST2INIT_QP, qpn);
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_field(in, at(ctx, qpc::pm_state), MLX5_QPC_PM_STATE_MIGRATED);
  set_field(in, primary_path(ctx, ads::vhca_port_num), p.port_num);
  // P_Keys exist only on InfiniBand; NVSHMEM and UCX leave the index unset on RoCE.
  if (p.link_layer == LinkLayer::infiniband) {
    set_field(in, primary_path(ctx, ads::pkey_index), p.pkey_index);
  }
  return in;
}

// INIT->RTR: MTU, message size and service level. No remote_qpn, rlid or rgid (see above).
inline ModifyQpIn build_init2rtr_dci_in(uint32_t qpn, const DciConnectParams& p) {
  ModifyQpIn in = modify_header(MLX5_CMD_OP_INIT2RTR_QP, qpn);
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_field(in, at(ctx, qpc::mtu), p.path_mtu);
  set_field(in, at(ctx, qpc::log_msg_max), 30);  // 1 GiB, as the RC path
  if (p.link_layer == LinkLayer::infiniband) {
    set_field(in, primary_path(ctx, ads::sl), p.sl);
  } else {
    // RoCE: the SL travels as the Ethernet priority and the traffic class as the DSCP.
    set_field(in, primary_path(ctx, ads::eth_prio), p.sl & 0x7);
    set_field(in, primary_path(ctx, ads::tclass), p.traffic_class);
    set_field(in, primary_path(ctx, ads::dscp), p.traffic_class >> 2);
  }
  return in;
}

// RTR->RTS: the requester's retry and ACK settings, the same fields as the RC transition.
inline ModifyQpIn build_rtr2rts_dci_in(uint32_t qpn, const DciConnectParams& p) {
  ModifyQpIn in = modify_header(MLX5_CMD_OP_RTR2RTS_QP, qpn);
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_requester_retry(in, p);
  set_field(in, primary_path(ctx, ads::ack_timeout), p.timeout);
  return in;
}

}  // namespace dissect::mlx5provider
