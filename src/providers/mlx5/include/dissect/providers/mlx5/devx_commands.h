// Builders for the DEVX commands of GPU-resident queues (docs/mlx5_sources.md §4.2: CREATE_CQ, CREATE_QP, the state transitions; §5).
// Pure functions from plain parameter structs to command dwords: the provider hands the result to
// mlx5dv_devx_obj_create / _modify unchanged, and the unit tests read it back field by field.
#pragma once

#include "dissect/providers/mlx5/ifc_cq.h"
#include "dissect/providers/mlx5/ifc_dct.h"
#include "dissect/providers/mlx5/ifc_hca_cap.h"
#include "dissect/providers/mlx5/ifc_qp.h"
#include "dissect/providers/mlx5/rc_connect.h"

namespace dissect::mlx5provider {

struct CreateCqParams {
  uint8_t log_cq_size = 0;
  uint32_t uar_page = 0;      // page_id of a UAR: required by the PRM though GPU pollers never arm
  uint8_t c_eqn = 0;          // from mlx5dv_devx_query_eqn
  uint32_t cq_umem_id = 0;
  uint64_t cq_umem_offset = 0;
  uint32_t dbr_umem_id = 0;
  uint64_t dbr_offset = 0;    // byte offset of the 8-byte CQ DBR inside its umem
  uint8_t log_page_size = 0;  // in 4 KiB units above 4 KiB: 64 KiB GPU pages -> 4
  bool overrun_ignore = true; // the GPU never writes the CQ DBR (gda.md §3.3)
  bool collapsed = false;
};

inline CreateCqIn build_create_cq_in(const CreateCqParams& p) {
  CreateCqIn in;
  constexpr uint32_t ctx = create_cq_in::cq_context;
  set_field(in, cmd_in::opcode, MLX5_CMD_OP_CREATE_CQ);
  set_field(in, at(ctx, cqc::cqe_sz), MLX5_CQC_CQE_SZ_64_BYTES);
  set_field(in, at(ctx, cqc::cc), p.collapsed ? 1 : 0);
  set_field(in, at(ctx, cqc::oi), p.overrun_ignore ? 1 : 0);
  set_field(in, at(ctx, cqc::log_cq_size), p.log_cq_size);
  set_field(in, at(ctx, cqc::uar_page), p.uar_page);
  set_field(in, at(ctx, cqc::c_eqn), p.c_eqn);
  set_field(in, at(ctx, cqc::log_page_size), p.log_page_size);
  // "dbr_umem_valid" switches dbr_addr from a process virtual address to an offset in dbr_umem_id.
  set_field(in, at(ctx, cqc::dbr_umem_valid), 1);
  set_field(in, at(ctx, cqc::dbr_umem_id), p.dbr_umem_id);
  set_field(in, at(ctx, cqc::dbr_addr), p.dbr_offset);
  set_field(in, create_cq_in::cq_umem_valid, 1);
  set_field(in, create_cq_in::cq_umem_id, p.cq_umem_id);
  set_field(in, create_cq_in::cq_umem_offset, p.cq_umem_offset);
  return in;
}

struct CreateQpParams {
  uint8_t st = MLX5_QPC_ST_RC;
  uint32_t pd = 0;
  uint32_t uar_page = 0;
  uint8_t rq_type = MLX5_ZERO_LEN_RQ;  // DOCA/Mooncake: no receive queue
  uint8_t log_sq_size = 0;             // in WQEBBs
  uint8_t log_rq_size = 0;
  uint8_t log_rq_stride = 0;           // stride = 16 B << log_rq_stride
  uint32_t cqn_snd = 0;
  uint32_t cqn_rcv = 0;
  uint32_t srqn = 0;                   // with rq_type = MLX5_SRQ_RQ
  uint32_t user_index = 0;
  uint8_t log_page_size = 0;
  uint32_t wq_umem_id = 0;
  uint64_t wq_umem_offset = 0;
  uint32_t dbr_umem_id = 0;
  uint64_t dbr_offset = 0;
};

inline CreateQpIn build_create_qp_in(const CreateQpParams& p) {
  CreateQpIn in;
  constexpr uint32_t ctx = create_qp_in::qpc;
  set_field(in, cmd_in::opcode, MLX5_CMD_OP_CREATE_QP);
  set_field(in, at(ctx, qpc::st), p.st);
  set_field(in, at(ctx, qpc::pm_state), MLX5_QPC_PM_STATE_MIGRATED);
  set_field(in, at(ctx, qpc::pd), p.pd);
  set_field(in, at(ctx, qpc::uar_page), p.uar_page);
  set_field(in, at(ctx, qpc::rq_type), p.rq_type);
  set_field(in, at(ctx, qpc::log_sq_size), p.log_sq_size);
  set_field(in, at(ctx, qpc::log_rq_size), p.log_rq_size);
  set_field(in, at(ctx, qpc::log_rq_stride), p.log_rq_stride);
  set_field(in, at(ctx, qpc::cqn_snd), p.cqn_snd);
  set_field(in, at(ctx, qpc::cqn_rcv), p.cqn_rcv);
  set_field(in, at(ctx, qpc::srqn_rmpn_xrqn), p.srqn);
  set_field(in, at(ctx, qpc::user_index), p.user_index);
  set_field(in, at(ctx, qpc::log_page_size), p.log_page_size);
  set_field(in, at(ctx, qpc::page_offset), 0);
  // No scatter-to-CQE: READ/atomic responses must land in the local buffer, where the GPU looks.
  set_field(in, at(ctx, qpc::cs_req), 0);
  set_field(in, at(ctx, qpc::cs_res), 0);
  set_field(in, at(ctx, qpc::dbr_umem_valid), 1);
  set_field(in, at(ctx, qpc::dbr_umem_id), p.dbr_umem_id);
  set_field(in, at(ctx, qpc::dbr_addr), p.dbr_offset);
  set_field(in, create_qp_in::wq_umem_valid, 1);
  set_field(in, create_qp_in::wq_umem_id, p.wq_umem_id);
  set_field(in, create_qp_in::wq_umem_offset, p.wq_umem_offset);
  return in;
}

inline ModifyQpIn modify_header(uint16_t opcode, uint32_t qpn) {
  ModifyQpIn in;
  set_field(in, cmd_in::opcode, opcode);
  set_field(in, modify_qp_in::qpn, qpn);
  return in;
}

inline ModifyQpIn build_rst2init_qp_in(uint32_t qpn, const RcConnectParams& p) {
  ModifyQpIn in = modify_header(MLX5_CMD_OP_RST2INIT_QP, qpn);
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_field(in, at(ctx, qpc::pm_state), MLX5_QPC_PM_STATE_MIGRATED);
  set_field(in, primary_path(ctx, ads::pkey_index), p.pkey_index);
  set_field(in, primary_path(ctx, ads::vhca_port_num), p.port_num);
  set_field(in, at(ctx, qpc::rre), (p.access & RC_ACCESS_REMOTE_READ) ? 1 : 0);
  set_field(in, at(ctx, qpc::rwe), (p.access & RC_ACCESS_REMOTE_WRITE) ? 1 : 0);
  set_field(in, at(ctx, qpc::rae), (p.access & RC_ACCESS_REMOTE_ATOMIC) ? 1 : 0);
  if (p.access & RC_ACCESS_REMOTE_ATOMIC) {
    set_field(in, at(ctx, qpc::atomic_mode), MLX5_ATOMIC_MODE_UP_TO_64);
  }
  return in;
}

// Remote MAC for RoCE comes from the caller (an ibv_ah's mlx5dv AV, as NVSHMEM does).
inline ModifyQpIn build_init2rtr_qp_in(uint32_t qpn, const RcConnectParams& p,
                                       const uint8_t (&rmac)[6], uint16_t udp_sport) {
  ModifyQpIn in = modify_header(MLX5_CMD_OP_INIT2RTR_QP, qpn);
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_field(in, at(ctx, qpc::mtu), p.path_mtu);
  set_field(in, at(ctx, qpc::log_msg_max), 30);  // 1 GiB, NVSHMEM and Mooncake
  set_field(in, at(ctx, qpc::remote_qpn), p.remote_qpn);
  set_field(in, at(ctx, qpc::next_rcv_psn), p.rq_psn);
  set_field(in, at(ctx, qpc::log_rra_max), ceil_log2(p.max_dest_rd_atomic));
  set_field(in, at(ctx, qpc::min_rnr_nak), p.min_rnr_timer);
  set_field(in, primary_path(ctx, ads::pkey_index), p.pkey_index);
  set_field(in, primary_path(ctx, ads::vhca_port_num), p.port_num);
  if (p.link_layer == LinkLayer::infiniband) {
    set_field(in, primary_path(ctx, ads::rlid), p.remote_lid);
    set_field(in, primary_path(ctx, ads::sl), p.sl);
    if (!p.use_grh) return in;
    set_field(in, primary_path(ctx, ads::grh), 1);
  } else {
    // RoCE: the GRH is implied, so ads.grh stays 0, and the SL travels as the Ethernet priority
    // (kernel mlx5 qp.c mlx5_set_path: dci_cfi_prio_sl = (sl & 0x7) << 4).
    set_field(in, primary_path(ctx, ads::eth_prio), p.sl & 0x7);
    set_field(in, primary_path(ctx, ads::udp_sport), udp_sport);
    set_bytes(in.dwords.data(), ctx + qpc::primary_address_path + ads::rmac_47_32, rmac, 6);
  }
  set_field(in, primary_path(ctx, ads::src_addr_index), p.sgid_index);
  set_field(in, primary_path(ctx, ads::hop_limit), p.hop_limit);
  set_field(in, primary_path(ctx, ads::tclass), p.traffic_class);
  set_field(in, primary_path(ctx, ads::flow_label), p.flow_label);
  set_bytes(in.dwords.data(), ctx + qpc::primary_address_path + ads::rgid_rip, p.remote_gid, 16);
  return in;
}

// The requester half of RTR->RTS, shared by RC QPs and DCIs: first PSN, retry counts, outstanding
// RDMA reads/atomics, and an ACK for every packet (as NVSHMEM, DOCA and DeepEP set it).
template <typename Params>
inline void set_requester_retry(ModifyQpIn& in, const Params& p) {
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_field(in, at(ctx, qpc::next_send_psn), p.sq_psn);
  set_field(in, at(ctx, qpc::retry_count), p.retry_cnt);
  set_field(in, at(ctx, qpc::rnr_retry), p.rnr_retry);
  set_field(in, at(ctx, qpc::log_sra_max), ceil_log2(p.max_rd_atomic));
  set_field(in, at(ctx, qpc::log_ack_req_freq), 0);
}

inline ModifyQpIn build_rtr2rts_qp_in(uint32_t qpn, const RcConnectParams& p) {
  ModifyQpIn in = modify_header(MLX5_CMD_OP_RTR2RTS_QP, qpn);
  constexpr uint32_t ctx = modify_qp_in::qpc;
  set_requester_retry(in, p);
  // The ACK timeout belongs to the address path in the PRM, though verbs sets it at RTR->RTS.
  set_field(in, primary_path(ctx, ads::ack_timeout), p.timeout);
  return in;
}

struct CreateDctParams {
  uint32_t pd = 0;
  uint32_t cqn = 0;
  uint32_t srqn = 0;  // a DCT receives into an SRQ
  uint64_t dc_access_key = 0;
  uint32_t user_index = 0;
  uint8_t port = 1;
  uint16_t pkey_index = 0;
  uint8_t mtu = MLX5_MTU_4096;
  uint8_t min_rnr_nak = 12;
  uint32_t access = RC_ACCESS_REMOTE_WRITE | RC_ACCESS_REMOTE_READ | RC_ACCESS_REMOTE_ATOMIC;
  uint8_t tclass = 0;
  uint32_t flow_label = 0;
  uint8_t hop_limit = 255;
  uint8_t my_addr_index = 0;  // local GID index (RoCE)
};

inline CreateDctIn build_create_dct_in(const CreateDctParams& p) {
  CreateDctIn in;
  constexpr uint32_t ctx = create_dct_in::dct_context_entry;
  set_field(in, cmd_in::opcode, MLX5_CMD_OP_CREATE_DCT);
  set_field(in, at(ctx, dctc::pd), p.pd);
  set_field(in, at(ctx, dctc::cqn), p.cqn);
  set_field(in, at(ctx, dctc::srqn_xrqn), p.srqn);
  set_field(in, at(ctx, dctc::user_index), p.user_index);
  set_field(in, at(ctx, dctc::dc_access_key), p.dc_access_key);
  set_field(in, at(ctx, dctc::port), p.port);
  set_field(in, at(ctx, dctc::pkey_index), p.pkey_index);
  set_field(in, at(ctx, dctc::mtu), p.mtu);
  set_field(in, at(ctx, dctc::min_rnr_nak), p.min_rnr_nak);
  set_field(in, at(ctx, dctc::rre), (p.access & RC_ACCESS_REMOTE_READ) ? 1 : 0);
  set_field(in, at(ctx, dctc::rwe), (p.access & RC_ACCESS_REMOTE_WRITE) ? 1 : 0);
  set_field(in, at(ctx, dctc::rae), (p.access & RC_ACCESS_REMOTE_ATOMIC) ? 1 : 0);
  if (p.access & RC_ACCESS_REMOTE_ATOMIC) {
    set_field(in, at(ctx, dctc::atomic_mode), MLX5_ATOMIC_MODE_UP_TO_64);
  }
  set_field(in, at(ctx, dctc::tclass), p.tclass);
  set_field(in, at(ctx, dctc::flow_label), p.flow_label);
  set_field(in, at(ctx, dctc::hop_limit), p.hop_limit);
  set_field(in, at(ctx, dctc::my_addr_index), p.my_addr_index);
  set_field(in, at(ctx, dctc::cs_res), 0);
  return in;
}

inline QueryHcaCapIn build_query_hca_cap_in(uint16_t cap_type, uint16_t current_or_max) {
  QueryHcaCapIn in;
  set_field(in, cmd_in::opcode, MLX5_CMD_OP_QUERY_HCA_CAP);
  set_field(in, cmd_in::op_mod, static_cast<uint16_t>(cap_type << 1) | current_or_max);
  return in;
}

// The capabilities the GPU-resident path checks (NVSHMEM ibgda_create_qp and
// nvshmemt_ib_common_check_nic_ext_atomic_support refuse a device that lacks them).
struct HcaCaps {
  uint32_t cqe_version = 0;
  uint32_t log_bf_reg_size = 0;
  bool compact_address_vector = false;
  bool dct = false;
  bool roce = false;
  uint32_t port_type = 0;
  uint32_t log_max_qp_sz = 0;
  uint32_t log_max_cq_sz = 0;
  uint32_t log_max_msg = 0;
  uint16_t atomic_operations = 0;
  uint16_t atomic_size_qp = 0;
  uint16_t atomic_size_dc = 0;
};

inline HcaCaps parse_hca_caps(const QueryHcaCapOut& general, const QueryHcaCapOut& atomic) {
  constexpr uint32_t cap = query_hca_cap_out::capability;
  HcaCaps c;
  c.cqe_version = static_cast<uint32_t>(get_field(general, at(cap, cmd_hca_cap::cqe_version)));
  c.log_bf_reg_size =
      static_cast<uint32_t>(get_field(general, at(cap, cmd_hca_cap::log_bf_reg_size)));
  c.compact_address_vector = get_field(general, at(cap, cmd_hca_cap::compact_address_vector));
  c.dct = get_field(general, at(cap, cmd_hca_cap::dct));
  c.roce = get_field(general, at(cap, cmd_hca_cap::roce));
  c.port_type = static_cast<uint32_t>(get_field(general, at(cap, cmd_hca_cap::port_type)));
  c.log_max_qp_sz = static_cast<uint32_t>(get_field(general, at(cap, cmd_hca_cap::log_max_qp_sz)));
  c.log_max_cq_sz = static_cast<uint32_t>(get_field(general, at(cap, cmd_hca_cap::log_max_cq_sz)));
  c.log_max_msg = static_cast<uint32_t>(get_field(general, at(cap, cmd_hca_cap::log_max_msg)));
  c.atomic_operations =
      static_cast<uint16_t>(get_field(atomic, at(cap, atomic_caps::atomic_operations)));
  c.atomic_size_qp = static_cast<uint16_t>(get_field(atomic, at(cap, atomic_caps::atomic_size_qp)));
  c.atomic_size_dc = static_cast<uint16_t>(get_field(atomic, at(cap, atomic_caps::atomic_size_dc)));
  return c;
}

// Empty string when the device can host GPU-resident queues; otherwise what is missing.
inline const char* gpu_queue_caps_problem(const HcaCaps& c) {
  if (c.cqe_version != 1) return "hca_cap.cqe_version != 1";
  constexpr uint16_t needed_ops = MLX5_ATOMIC_OPS_CMP_SWAP | MLX5_ATOMIC_OPS_FETCH_ADD;
  if ((c.atomic_operations & needed_ops) != needed_ops) return "atomic CAS/FA not supported";
  if (!(c.atomic_size_qp & MLX5_ATOMIC_SIZE_8_BYTES)) return "8-byte QP atomics not supported";
  return "";
}

}  // namespace dissect::mlx5provider
