// Every DEVX command field, set alone in a zeroed command: exactly the bytes the PRM puts it in
// change, with exactly the expected values; and clearing it in an all-ones command clears exactly
// those bits.
//
// The expected bytes below were derived from the mlx5_ifc bit layouts, not from our headers:
// rdma-core providers/mlx5/mlx5_ifc.h (ads, qpc, rst2init/init2rtr/rtr2rts_qp_in, cmd_hca_cap,
// atomic_caps, query_hca_cap_out), the kernel's include/linux/mlx5/mlx5_ifc.h (dctc,
// create_dct_in, the wq_umem tail of create_qp_in) and DOCA GPUNetIO's mlx5_ifc.h as vendored by
// NCCL (cqc with dbr_umem_id, create_cq_in). A field at PRM bit offset o, width w, occupies bits
// o..o+w-1 counted from the most significant bit of byte 0; each row lists the non-zero bytes
// after writing all ones, then after writing the pattern value shown.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "dissect/providers/mlx5/devx_commands.h"

namespace dissect::mlx5provider {
namespace {

struct FieldCase {
  const char* name;
  PrmField field;
  uint64_t pattern;
  std::vector<std::pair<uint32_t, uint8_t>> ones_bytes;
  std::vector<std::pair<uint32_t, uint8_t>> pattern_bytes;
};

const FieldCase kCreateCq[] = {
    {"create_cq_in.opcode", cmd_in::opcode, 0x2d3dull, {{0x0, 0xff}, {0x1, 0xff}}, {{0x0, 0x2d}, {0x1, 0x3d}}},
    {"create_cq_in.op_mod", cmd_in::op_mod, 0x2d3dull, {{0x6, 0xff}, {0x7, 0xff}}, {{0x6, 0x2d}, {0x7, 0x3d}}},
    {"create_cq_in.uid", cmd_in::uid, 0x2d3dull, {{0x2, 0xff}, {0x3, 0xff}}, {{0x2, 0x2d}, {0x3, 0x3d}}},
    {"create_cq_in.cq_context.dbr_umem_valid", at(create_cq_in::cq_context, cqc::dbr_umem_valid), 0x1ull, {{0x10, 0x02}}, {{0x10, 0x02}}},
    {"create_cq_in.cq_context.cqe_sz", at(create_cq_in::cq_context, cqc::cqe_sz), 0x5ull, {{0x11, 0xe0}}, {{0x11, 0xa0}}},
    {"create_cq_in.cq_context.cc", at(create_cq_in::cq_context, cqc::cc), 0x1ull, {{0x11, 0x10}}, {{0x11, 0x10}}},
    {"create_cq_in.cq_context.oi", at(create_cq_in::cq_context, cqc::oi), 0x1ull, {{0x11, 0x02}}, {{0x11, 0x02}}},
    {"create_cq_in.cq_context.dbr_umem_id", at(create_cq_in::cq_context, cqc::dbr_umem_id), 0xf1e2d3dull, {{0x14, 0xff}, {0x15, 0xff}, {0x16, 0xff}, {0x17, 0xff}}, {{0x14, 0x0f}, {0x15, 0x1e}, {0x16, 0x2d}, {0x17, 0x3d}}},
    {"create_cq_in.cq_context.page_offset", at(create_cq_in::cq_context, cqc::page_offset), 0x3dull, {{0x1a, 0x0f}, {0x1b, 0xc0}}, {{0x1a, 0x0f}, {0x1b, 0x40}}},
    {"create_cq_in.cq_context.log_cq_size", at(create_cq_in::cq_context, cqc::log_cq_size), 0x1dull, {{0x1c, 0x1f}}, {{0x1c, 0x1d}}},
    {"create_cq_in.cq_context.uar_page", at(create_cq_in::cq_context, cqc::uar_page), 0x1e2d3dull, {{0x1d, 0xff}, {0x1e, 0xff}, {0x1f, 0xff}}, {{0x1d, 0x1e}, {0x1e, 0x2d}, {0x1f, 0x3d}}},
    {"create_cq_in.cq_context.c_eqn", at(create_cq_in::cq_context, cqc::c_eqn), 0x3dull, {{0x27, 0xff}}, {{0x27, 0x3d}}},
    {"create_cq_in.cq_context.log_page_size", at(create_cq_in::cq_context, cqc::log_page_size), 0x1dull, {{0x28, 0x1f}}, {{0x28, 0x1d}}},
    {"create_cq_in.cq_context.dbr_addr", at(create_cq_in::cq_context, cqc::dbr_addr), 0xa5c396e10f1e2d3dull, {{0x48, 0xff}, {0x49, 0xff}, {0x4a, 0xff}, {0x4b, 0xff}, {0x4c, 0xff}, {0x4d, 0xff}, {0x4e, 0xff}, {0x4f, 0xff}}, {{0x48, 0xa5}, {0x49, 0xc3}, {0x4a, 0x96}, {0x4b, 0xe1}, {0x4c, 0x0f}, {0x4d, 0x1e}, {0x4e, 0x2d}, {0x4f, 0x3d}}},
    {"create_cq_in.cq_umem_offset", create_cq_in::cq_umem_offset, 0xa5c396e10f1e2d3dull, {{0x50, 0xff}, {0x51, 0xff}, {0x52, 0xff}, {0x53, 0xff}, {0x54, 0xff}, {0x55, 0xff}, {0x56, 0xff}, {0x57, 0xff}}, {{0x50, 0xa5}, {0x51, 0xc3}, {0x52, 0x96}, {0x53, 0xe1}, {0x54, 0x0f}, {0x55, 0x1e}, {0x56, 0x2d}, {0x57, 0x3d}}},
    {"create_cq_in.cq_umem_id", create_cq_in::cq_umem_id, 0xf1e2d3dull, {{0x58, 0xff}, {0x59, 0xff}, {0x5a, 0xff}, {0x5b, 0xff}}, {{0x58, 0x0f}, {0x59, 0x1e}, {0x5a, 0x2d}, {0x5b, 0x3d}}},
    {"create_cq_in.cq_umem_valid", create_cq_in::cq_umem_valid, 0x1ull, {{0x5c, 0x80}}, {{0x5c, 0x80}}},
};

const FieldCase kCreateQp[] = {
    {"create_qp_in_k.qpc.state", at(create_qp_in::qpc, qpc::state), 0xdull, {{0x18, 0xf0}}, {{0x18, 0xd0}}},
    {"create_qp_in_k.qpc.st", at(create_qp_in::qpc, qpc::st), 0x3dull, {{0x19, 0xff}}, {{0x19, 0x3d}}},
    {"create_qp_in_k.qpc.pm_state", at(create_qp_in::qpc, qpc::pm_state), 0x1ull, {{0x1a, 0x18}}, {{0x1a, 0x08}}},
    {"create_qp_in_k.qpc.pd", at(create_qp_in::qpc, qpc::pd), 0x1e2d3dull, {{0x1d, 0xff}, {0x1e, 0xff}, {0x1f, 0xff}}, {{0x1d, 0x1e}, {0x1e, 0x2d}, {0x1f, 0x3d}}},
    {"create_qp_in_k.qpc.mtu", at(create_qp_in::qpc, qpc::mtu), 0x5ull, {{0x20, 0xe0}}, {{0x20, 0xa0}}},
    {"create_qp_in_k.qpc.log_msg_max", at(create_qp_in::qpc, qpc::log_msg_max), 0x1dull, {{0x20, 0x1f}}, {{0x20, 0x1d}}},
    {"create_qp_in_k.qpc.log_rq_size", at(create_qp_in::qpc, qpc::log_rq_size), 0xdull, {{0x21, 0x78}}, {{0x21, 0x68}}},
    {"create_qp_in_k.qpc.log_rq_stride", at(create_qp_in::qpc, qpc::log_rq_stride), 0x5ull, {{0x21, 0x07}}, {{0x21, 0x05}}},
    {"create_qp_in_k.qpc.no_sq", at(create_qp_in::qpc, qpc::no_sq), 0x1ull, {{0x22, 0x80}}, {{0x22, 0x80}}},
    {"create_qp_in_k.qpc.log_sq_size", at(create_qp_in::qpc, qpc::log_sq_size), 0xdull, {{0x22, 0x78}}, {{0x22, 0x68}}},
    {"create_qp_in_k.qpc.uar_page", at(create_qp_in::qpc, qpc::uar_page), 0x1e2d3dull, {{0x25, 0xff}, {0x26, 0xff}, {0x27, 0xff}}, {{0x25, 0x1e}, {0x26, 0x2d}, {0x27, 0x3d}}},
    {"create_qp_in_k.qpc.user_index", at(create_qp_in::qpc, qpc::user_index), 0x1e2d3dull, {{0x29, 0xff}, {0x2a, 0xff}, {0x2b, 0xff}}, {{0x29, 0x1e}, {0x2a, 0x2d}, {0x2b, 0x3d}}},
    {"create_qp_in_k.qpc.log_page_size", at(create_qp_in::qpc, qpc::log_page_size), 0x1dull, {{0x2c, 0x1f}}, {{0x2c, 0x1d}}},
    {"create_qp_in_k.qpc.remote_qpn", at(create_qp_in::qpc, qpc::remote_qpn), 0x1e2d3dull, {{0x2d, 0xff}, {0x2e, 0xff}, {0x2f, 0xff}}, {{0x2d, 0x1e}, {0x2e, 0x2d}, {0x2f, 0x3d}}},
    {"create_qp_in_k.qpc.full_handshake", at(create_qp_in::qpc, qpc::full_handshake), 0x1ull, {{0x28, 0x10}}, {{0x28, 0x10}}},
    {"create_qp_in_k.qpc.log_num_dci_stream_channels", at(create_qp_in::qpc, qpc::log_num_dci_stream_channels), 0xdull, {{0x94, 0x0f}}, {{0x94, 0x0d}}},
    {"create_qp_in_k.qpc.log_num_dci_errored_streams", at(create_qp_in::qpc, qpc::log_num_dci_errored_streams), 0xdull, {{0x98, 0x0f}}, {{0x98, 0x0d}}},
    {"create_qp_in_k.qpc.log_ack_req_freq", at(create_qp_in::qpc, qpc::log_ack_req_freq), 0xdull, {{0x88, 0xf0}}, {{0x88, 0xd0}}},
    {"create_qp_in_k.qpc.log_sra_max", at(create_qp_in::qpc, qpc::log_sra_max), 0x5ull, {{0x89, 0xe0}}, {{0x89, 0xa0}}},
    {"create_qp_in_k.qpc.retry_count", at(create_qp_in::qpc, qpc::retry_count), 0x5ull, {{0x89, 0x07}}, {{0x89, 0x05}}},
    {"create_qp_in_k.qpc.rnr_retry", at(create_qp_in::qpc, qpc::rnr_retry), 0x5ull, {{0x8a, 0xe0}}, {{0x8a, 0xa0}}},
    {"create_qp_in_k.qpc.next_send_psn", at(create_qp_in::qpc, qpc::next_send_psn), 0x1e2d3dull, {{0x91, 0xff}, {0x92, 0xff}, {0x93, 0xff}}, {{0x91, 0x1e}, {0x92, 0x2d}, {0x93, 0x3d}}},
    {"create_qp_in_k.qpc.cqn_snd", at(create_qp_in::qpc, qpc::cqn_snd), 0x1e2d3dull, {{0x95, 0xff}, {0x96, 0xff}, {0x97, 0xff}}, {{0x95, 0x1e}, {0x96, 0x2d}, {0x97, 0x3d}}},
    {"create_qp_in_k.qpc.log_rra_max", at(create_qp_in::qpc, qpc::log_rra_max), 0x5ull, {{0xa9, 0xe0}}, {{0xa9, 0xa0}}},
    {"create_qp_in_k.qpc.atomic_mode", at(create_qp_in::qpc, qpc::atomic_mode), 0xdull, {{0xa9, 0x0f}}, {{0xa9, 0x0d}}},
    {"create_qp_in_k.qpc.rre", at(create_qp_in::qpc, qpc::rre), 0x1ull, {{0xaa, 0x80}}, {{0xaa, 0x80}}},
    {"create_qp_in_k.qpc.rwe", at(create_qp_in::qpc, qpc::rwe), 0x1ull, {{0xaa, 0x40}}, {{0xaa, 0x40}}},
    {"create_qp_in_k.qpc.rae", at(create_qp_in::qpc, qpc::rae), 0x1ull, {{0xaa, 0x20}}, {{0xaa, 0x20}}},
    {"create_qp_in_k.qpc.page_offset", at(create_qp_in::qpc, qpc::page_offset), 0x3dull, {{0xaa, 0x0f}, {0xab, 0xc0}}, {{0xaa, 0x0f}, {0xab, 0x40}}},
    {"create_qp_in_k.qpc.min_rnr_nak", at(create_qp_in::qpc, qpc::min_rnr_nak), 0x1dull, {{0xac, 0x1f}}, {{0xac, 0x1d}}},
    {"create_qp_in_k.qpc.next_rcv_psn", at(create_qp_in::qpc, qpc::next_rcv_psn), 0x1e2d3dull, {{0xad, 0xff}, {0xae, 0xff}, {0xaf, 0xff}}, {{0xad, 0x1e}, {0xae, 0x2d}, {0xaf, 0x3d}}},
    {"create_qp_in_k.qpc.cqn_rcv", at(create_qp_in::qpc, qpc::cqn_rcv), 0x1e2d3dull, {{0xb5, 0xff}, {0xb6, 0xff}, {0xb7, 0xff}}, {{0xb5, 0x1e}, {0xb6, 0x2d}, {0xb7, 0x3d}}},
    {"create_qp_in_k.qpc.dbr_addr", at(create_qp_in::qpc, qpc::dbr_addr), 0xa5c396e10f1e2d3dull, {{0xb8, 0xff}, {0xb9, 0xff}, {0xba, 0xff}, {0xbb, 0xff}, {0xbc, 0xff}, {0xbd, 0xff}, {0xbe, 0xff}, {0xbf, 0xff}}, {{0xb8, 0xa5}, {0xb9, 0xc3}, {0xba, 0x96}, {0xbb, 0xe1}, {0xbc, 0x0f}, {0xbd, 0x1e}, {0xbe, 0x2d}, {0xbf, 0x3d}}},
    {"create_qp_in_k.qpc.rq_type", at(create_qp_in::qpc, qpc::rq_type), 0x5ull, {{0xc4, 0x07}}, {{0xc4, 0x05}}},
    {"create_qp_in_k.qpc.srqn_rmpn_xrqn", at(create_qp_in::qpc, qpc::srqn_rmpn_xrqn), 0x1e2d3dull, {{0xc5, 0xff}, {0xc6, 0xff}, {0xc7, 0xff}}, {{0xc5, 0x1e}, {0xc6, 0x2d}, {0xc7, 0x3d}}},
    {"create_qp_in_k.qpc.cs_req", at(create_qp_in::qpc, qpc::cs_req), 0x3dull, {{0xde, 0xff}}, {{0xde, 0x3d}}},
    {"create_qp_in_k.qpc.cs_res", at(create_qp_in::qpc, qpc::cs_res), 0x3dull, {{0xdf, 0xff}}, {{0xdf, 0x3d}}},
    {"create_qp_in_k.qpc.dc_access_key", at(create_qp_in::qpc, qpc::dc_access_key), 0xa5c396e10f1e2d3dull, {{0xe0, 0xff}, {0xe1, 0xff}, {0xe2, 0xff}, {0xe3, 0xff}, {0xe4, 0xff}, {0xe5, 0xff}, {0xe6, 0xff}, {0xe7, 0xff}}, {{0xe0, 0xa5}, {0xe1, 0xc3}, {0xe2, 0x96}, {0xe3, 0xe1}, {0xe4, 0x0f}, {0xe5, 0x1e}, {0xe6, 0x2d}, {0xe7, 0x3d}}},
    {"create_qp_in_k.qpc.dbr_umem_valid", at(create_qp_in::qpc, qpc::dbr_umem_valid), 0x1ull, {{0xe8, 0x10}}, {{0xe8, 0x10}}},
    {"create_qp_in_k.qpc.dbr_umem_id", at(create_qp_in::qpc, qpc::dbr_umem_id), 0xf1e2d3dull, {{0xfc, 0xff}, {0xfd, 0xff}, {0xfe, 0xff}, {0xff, 0xff}}, {{0xfc, 0x0f}, {0xfd, 0x1e}, {0xfe, 0x2d}, {0xff, 0x3d}}},
    {"create_qp_in_k.opt_param_mask", create_qp_in::opt_param_mask, 0xf1e2d3dull, {{0x10, 0xff}, {0x11, 0xff}, {0x12, 0xff}, {0x13, 0xff}}, {{0x10, 0x0f}, {0x11, 0x1e}, {0x12, 0x2d}, {0x13, 0x3d}}},
    {"create_qp_in_k.wq_umem_offset", create_qp_in::wq_umem_offset, 0xa5c396e10f1e2d3dull, {{0x100, 0xff}, {0x101, 0xff}, {0x102, 0xff}, {0x103, 0xff}, {0x104, 0xff}, {0x105, 0xff}, {0x106, 0xff}, {0x107, 0xff}}, {{0x100, 0xa5}, {0x101, 0xc3}, {0x102, 0x96}, {0x103, 0xe1}, {0x104, 0x0f}, {0x105, 0x1e}, {0x106, 0x2d}, {0x107, 0x3d}}},
    {"create_qp_in_k.wq_umem_id", create_qp_in::wq_umem_id, 0xf1e2d3dull, {{0x108, 0xff}, {0x109, 0xff}, {0x10a, 0xff}, {0x10b, 0xff}}, {{0x108, 0x0f}, {0x109, 0x1e}, {0x10a, 0x2d}, {0x10b, 0x3d}}},
    {"create_qp_in_k.wq_umem_valid", create_qp_in::wq_umem_valid, 0x1ull, {{0x10c, 0x80}}, {{0x10c, 0x80}}},
};

const FieldCase kModifyQp[] = {
    {"rst2init_qp_in.qpn", modify_qp_in::qpn, 0x1e2d3dull, {{0x9, 0xff}, {0xa, 0xff}, {0xb, 0xff}}, {{0x9, 0x1e}, {0xa, 0x2d}, {0xb, 0x3d}}},
    {"rst2init_qp_in.opt_param_mask", modify_qp_in::opt_param_mask, 0xf1e2d3dull, {{0x10, 0xff}, {0x11, 0xff}, {0x12, 0xff}, {0x13, 0xff}}, {{0x10, 0x0f}, {0x11, 0x1e}, {0x12, 0x2d}, {0x13, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.fl", primary_path(modify_qp_in::qpc, ads::fl), 0x1ull, {{0x30, 0x80}}, {{0x30, 0x80}}},
    {"rst2init_qp_in.qpc.primary_address_path.pkey_index", primary_path(modify_qp_in::qpc, ads::pkey_index), 0x2d3dull, {{0x32, 0xff}, {0x33, 0xff}}, {{0x32, 0x2d}, {0x33, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.grh", primary_path(modify_qp_in::qpc, ads::grh), 0x1ull, {{0x35, 0x80}}, {{0x35, 0x80}}},
    {"rst2init_qp_in.qpc.primary_address_path.mlid", primary_path(modify_qp_in::qpc, ads::mlid), 0x3dull, {{0x35, 0x7f}}, {{0x35, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.rlid", primary_path(modify_qp_in::qpc, ads::rlid), 0x2d3dull, {{0x36, 0xff}, {0x37, 0xff}}, {{0x36, 0x2d}, {0x37, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.ack_timeout", primary_path(modify_qp_in::qpc, ads::ack_timeout), 0x1dull, {{0x38, 0xf8}}, {{0x38, 0xe8}}},
    {"rst2init_qp_in.qpc.primary_address_path.src_addr_index", primary_path(modify_qp_in::qpc, ads::src_addr_index), 0x3dull, {{0x39, 0xff}}, {{0x39, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.stat_rate", primary_path(modify_qp_in::qpc, ads::stat_rate), 0xdull, {{0x3a, 0x0f}}, {{0x3a, 0x0d}}},
    {"rst2init_qp_in.qpc.primary_address_path.hop_limit", primary_path(modify_qp_in::qpc, ads::hop_limit), 0x3dull, {{0x3b, 0xff}}, {{0x3b, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.tclass", primary_path(modify_qp_in::qpc, ads::tclass), 0x3dull, {{0x3c, 0x0f}, {0x3d, 0xf0}}, {{0x3c, 0x03}, {0x3d, 0xd0}}},
    {"rst2init_qp_in.qpc.primary_address_path.flow_label", primary_path(modify_qp_in::qpc, ads::flow_label), 0xe2d3dull, {{0x3d, 0x0f}, {0x3e, 0xff}, {0x3f, 0xff}}, {{0x3d, 0x0e}, {0x3e, 0x2d}, {0x3f, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.dscp", primary_path(modify_qp_in::qpc, ads::dscp), 0x3dull, {{0x51, 0x3f}}, {{0x51, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.udp_sport", primary_path(modify_qp_in::qpc, ads::udp_sport), 0x2d3dull, {{0x52, 0xff}, {0x53, 0xff}}, {{0x52, 0x2d}, {0x53, 0x3d}}},
    {"rst2init_qp_in.qpc.primary_address_path.eth_prio", primary_path(modify_qp_in::qpc, ads::eth_prio), 0x5ull, {{0x54, 0x70}}, {{0x54, 0x50}}},
    {"rst2init_qp_in.qpc.primary_address_path.sl", primary_path(modify_qp_in::qpc, ads::sl), 0xdull, {{0x54, 0x0f}}, {{0x54, 0x0d}}},
    {"rst2init_qp_in.qpc.primary_address_path.vhca_port_num", primary_path(modify_qp_in::qpc, ads::vhca_port_num), 0x3dull, {{0x55, 0xff}}, {{0x55, 0x3d}}},
    {"init2rtr_qp_in.qpc.mtu", at(modify_qp_in::qpc, qpc::mtu), 0x5ull, {{0x20, 0xe0}}, {{0x20, 0xa0}}},
    {"init2rtr_qp_in.qpc.remote_qpn", at(modify_qp_in::qpc, qpc::remote_qpn), 0x1e2d3dull, {{0x2d, 0xff}, {0x2e, 0xff}, {0x2f, 0xff}}, {{0x2d, 0x1e}, {0x2e, 0x2d}, {0x2f, 0x3d}}},
    {"init2rtr_qp_in.qpc.next_rcv_psn", at(modify_qp_in::qpc, qpc::next_rcv_psn), 0x1e2d3dull, {{0xad, 0xff}, {0xae, 0xff}, {0xaf, 0xff}}, {{0xad, 0x1e}, {0xae, 0x2d}, {0xaf, 0x3d}}},
    {"init2rtr_qp_in.qpc.min_rnr_nak", at(modify_qp_in::qpc, qpc::min_rnr_nak), 0x1dull, {{0xac, 0x1f}}, {{0xac, 0x1d}}},
    {"init2rtr_qp_in.qpc.log_rra_max", at(modify_qp_in::qpc, qpc::log_rra_max), 0x5ull, {{0xa9, 0xe0}}, {{0xa9, 0xa0}}},
    {"rtr2rts_qp_in.qpc.next_send_psn", at(modify_qp_in::qpc, qpc::next_send_psn), 0x1e2d3dull, {{0x91, 0xff}, {0x92, 0xff}, {0x93, 0xff}}, {{0x91, 0x1e}, {0x92, 0x2d}, {0x93, 0x3d}}},
    {"rtr2rts_qp_in.qpc.retry_count", at(modify_qp_in::qpc, qpc::retry_count), 0x5ull, {{0x89, 0x07}}, {{0x89, 0x05}}},
    {"rtr2rts_qp_in.qpc.rnr_retry", at(modify_qp_in::qpc, qpc::rnr_retry), 0x5ull, {{0x8a, 0xe0}}, {{0x8a, 0xa0}}},
    {"rtr2rts_qp_in.qpc.log_sra_max", at(modify_qp_in::qpc, qpc::log_sra_max), 0x5ull, {{0x89, 0xe0}}, {{0x89, 0xa0}}},
};

const FieldCase kCreateDct[] = {
    {"create_dct_in.dct_context_entry.state", at(create_dct_in::dct_context_entry, dctc::state), 0xdull, {{0x10, 0x0f}}, {{0x10, 0x0d}}},
    {"create_dct_in.dct_context_entry.user_index", at(create_dct_in::dct_context_entry, dctc::user_index), 0x1e2d3dull, {{0x15, 0xff}, {0x16, 0xff}, {0x17, 0xff}}, {{0x15, 0x1e}, {0x16, 0x2d}, {0x17, 0x3d}}},
    {"create_dct_in.dct_context_entry.cqn", at(create_dct_in::dct_context_entry, dctc::cqn), 0x1e2d3dull, {{0x19, 0xff}, {0x1a, 0xff}, {0x1b, 0xff}}, {{0x19, 0x1e}, {0x1a, 0x2d}, {0x1b, 0x3d}}},
    {"create_dct_in.dct_context_entry.counter_set_id", at(create_dct_in::dct_context_entry, dctc::counter_set_id), 0x3dull, {{0x1c, 0xff}}, {{0x1c, 0x3d}}},
    {"create_dct_in.dct_context_entry.atomic_mode", at(create_dct_in::dct_context_entry, dctc::atomic_mode), 0xdull, {{0x1d, 0xf0}}, {{0x1d, 0xd0}}},
    {"create_dct_in.dct_context_entry.rre", at(create_dct_in::dct_context_entry, dctc::rre), 0x1ull, {{0x1d, 0x08}}, {{0x1d, 0x08}}},
    {"create_dct_in.dct_context_entry.rwe", at(create_dct_in::dct_context_entry, dctc::rwe), 0x1ull, {{0x1d, 0x04}}, {{0x1d, 0x04}}},
    {"create_dct_in.dct_context_entry.rae", at(create_dct_in::dct_context_entry, dctc::rae), 0x1ull, {{0x1d, 0x02}}, {{0x1d, 0x02}}},
    {"create_dct_in.dct_context_entry.cs_res", at(create_dct_in::dct_context_entry, dctc::cs_res), 0x3dull, {{0x21, 0xff}}, {{0x21, 0x3d}}},
    {"create_dct_in.dct_context_entry.min_rnr_nak", at(create_dct_in::dct_context_entry, dctc::min_rnr_nak), 0x1dull, {{0x22, 0x1f}}, {{0x22, 0x1d}}},
    {"create_dct_in.dct_context_entry.srqn_xrqn", at(create_dct_in::dct_context_entry, dctc::srqn_xrqn), 0x1e2d3dull, {{0x25, 0xff}, {0x26, 0xff}, {0x27, 0xff}}, {{0x25, 0x1e}, {0x26, 0x2d}, {0x27, 0x3d}}},
    {"create_dct_in.dct_context_entry.pd", at(create_dct_in::dct_context_entry, dctc::pd), 0x1e2d3dull, {{0x29, 0xff}, {0x2a, 0xff}, {0x2b, 0xff}}, {{0x29, 0x1e}, {0x2a, 0x2d}, {0x2b, 0x3d}}},
    {"create_dct_in.dct_context_entry.tclass", at(create_dct_in::dct_context_entry, dctc::tclass), 0x3dull, {{0x2c, 0xff}}, {{0x2c, 0x3d}}},
    {"create_dct_in.dct_context_entry.flow_label", at(create_dct_in::dct_context_entry, dctc::flow_label), 0xe2d3dull, {{0x2d, 0x0f}, {0x2e, 0xff}, {0x2f, 0xff}}, {{0x2d, 0x0e}, {0x2e, 0x2d}, {0x2f, 0x3d}}},
    {"create_dct_in.dct_context_entry.dc_access_key", at(create_dct_in::dct_context_entry, dctc::dc_access_key), 0xa5c396e10f1e2d3dull, {{0x30, 0xff}, {0x31, 0xff}, {0x32, 0xff}, {0x33, 0xff}, {0x34, 0xff}, {0x35, 0xff}, {0x36, 0xff}, {0x37, 0xff}}, {{0x30, 0xa5}, {0x31, 0xc3}, {0x32, 0x96}, {0x33, 0xe1}, {0x34, 0x0f}, {0x35, 0x1e}, {0x36, 0x2d}, {0x37, 0x3d}}},
    {"create_dct_in.dct_context_entry.mtu", at(create_dct_in::dct_context_entry, dctc::mtu), 0x5ull, {{0x38, 0x07}}, {{0x38, 0x05}}},
    {"create_dct_in.dct_context_entry.port", at(create_dct_in::dct_context_entry, dctc::port), 0x3dull, {{0x39, 0xff}}, {{0x39, 0x3d}}},
    {"create_dct_in.dct_context_entry.pkey_index", at(create_dct_in::dct_context_entry, dctc::pkey_index), 0x2d3dull, {{0x3a, 0xff}, {0x3b, 0xff}}, {{0x3a, 0x2d}, {0x3b, 0x3d}}},
    {"create_dct_in.dct_context_entry.my_addr_index", at(create_dct_in::dct_context_entry, dctc::my_addr_index), 0x3dull, {{0x3d, 0xff}}, {{0x3d, 0x3d}}},
    {"create_dct_in.dct_context_entry.hop_limit", at(create_dct_in::dct_context_entry, dctc::hop_limit), 0x3dull, {{0x3f, 0xff}}, {{0x3f, 0x3d}}},
    {"create_dct_in.dct_context_entry.eth_prio", at(create_dct_in::dct_context_entry, dctc::eth_prio), 0x5ull, {{0x46, 0x07}}, {{0x46, 0x05}}},
    {"create_dct_in.dct_context_entry.dscp", at(create_dct_in::dct_context_entry, dctc::dscp), 0x3dull, {{0x47, 0x3f}}, {{0x47, 0x3d}}},
};

const FieldCase kHcaCap[] = {
    {"hcaout.cmd_hca_cap.log_max_qp_sz", at(query_hca_cap_out::capability, cmd_hca_cap::log_max_qp_sz), 0x3dull, {{0x21, 0xff}}, {{0x21, 0x3d}}},
    {"hcaout.cmd_hca_cap.log_max_cq_sz", at(query_hca_cap_out::capability, cmd_hca_cap::log_max_cq_sz), 0x3dull, {{0x29, 0xff}}, {{0x29, 0x3d}}},
    {"hcaout.cmd_hca_cap.port_type", at(query_hca_cap_out::capability, cmd_hca_cap::port_type), 0x1ull, {{0x46, 0x03}}, {{0x46, 0x01}}},
    {"hcaout.cmd_hca_cap.log_max_msg", at(query_hca_cap_out::capability, cmd_hca_cap::log_max_msg), 0x1dull, {{0x48, 0x1f}}, {{0x48, 0x1d}}},
    {"hcaout.cmd_hca_cap.cqe_version", at(query_hca_cap_out::capability, cmd_hca_cap::cqe_version), 0xdull, {{0x4f, 0x0f}}, {{0x4f, 0x0d}}},
    {"hcaout.cmd_hca_cap.compact_address_vector", at(query_hca_cap_out::capability, cmd_hca_cap::compact_address_vector), 0x1ull, {{0x50, 0x80}}, {{0x50, 0x80}}},
    {"hcaout.cmd_hca_cap.dct", at(query_hca_cap_out::capability, cmd_hca_cap::dct), 0x1ull, {{0x53, 0x20}}, {{0x53, 0x20}}},
    {"hcaout.cmd_hca_cap.roce", at(query_hca_cap_out::capability, cmd_hca_cap::roce), 0x1ull, {{0x53, 0x04}}, {{0x53, 0x04}}},
    {"hcaout.cmd_hca_cap.atomic", at(query_hca_cap_out::capability, cmd_hca_cap::atomic), 0x1ull, {{0x53, 0x02}}, {{0x53, 0x02}}},
    {"hcaout.cmd_hca_cap.uar_4k", at(query_hca_cap_out::capability, cmd_hca_cap::uar_4k), 0x1ull, {{0x58, 0x80}}, {{0x58, 0x80}}},
    {"hcaout.cmd_hca_cap.log_bf_reg_size", at(query_hca_cap_out::capability, cmd_hca_cap::log_bf_reg_size), 0x1dull, {{0x5d, 0x1f}}, {{0x5d, 0x1d}}},
    {"hcaout.cmd_hca_cap.log_max_atomic_size_qp", at(query_hca_cap_out::capability, cmd_hca_cap::log_max_atomic_size_qp), 0x3dull, {{0xc0, 0xff}}, {{0xc0, 0x3d}}},
    {"hcaout.cmd_hca_cap.log_max_atomic_size_dc", at(query_hca_cap_out::capability, cmd_hca_cap::log_max_atomic_size_dc), 0x3dull, {{0xc3, 0xff}}, {{0xc3, 0x3d}}},
    {"hcaout2.atomic_caps.atomic_operations", at(query_hca_cap_out::capability, atomic_caps::atomic_operations), 0x2d3dull, {{0x22, 0xff}, {0x23, 0xff}}, {{0x22, 0x2d}, {0x23, 0x3d}}},
    {"hcaout2.atomic_caps.atomic_size_qp", at(query_hca_cap_out::capability, atomic_caps::atomic_size_qp), 0x2d3dull, {{0x26, 0xff}, {0x27, 0xff}}, {{0x26, 0x2d}, {0x27, 0x3d}}},
    {"hcaout2.atomic_caps.atomic_size_dc", at(query_hca_cap_out::capability, atomic_caps::atomic_size_dc), 0x2d3dull, {{0x2a, 0xff}, {0x2b, 0xff}}, {{0x2a, 0x2d}, {0x2b, 0x3d}}},
};

uint64_t all_ones(uint32_t width) { return width == 64 ? ~0ull : ((1ull << width) - 1); }

template <uint32_t Bits>
void expect_only(const PrmBuffer<Bits>& buffer, uint8_t background,
                 const std::vector<std::pair<uint32_t, uint8_t>>& expected, const char* name) {
  std::vector<uint8_t> want(PrmBuffer<Bits>::bytes, background);
  for (const auto& [offset, value] : expected) want[offset] = value;
  for (uint32_t i = 0; i < PrmBuffer<Bits>::bytes; ++i) {
    ASSERT_EQ(buffer.byte(i), want[i]) << name << ": byte " << i;
  }
}

template <uint32_t Bits, size_t N>
void check_cases(const FieldCase (&cases)[N]) {
  for (const FieldCase& c : cases) {
    SCOPED_TRACE(c.name);
    PrmBuffer<Bits> buffer;
    set_field(buffer, c.field, all_ones(c.field.width));
    expect_only(buffer, 0x00, c.ones_bytes, c.name);
    EXPECT_EQ(get_field(buffer, c.field), all_ones(c.field.width));

    PrmBuffer<Bits> patterned;
    set_field(patterned, c.field, c.pattern);
    expect_only(patterned, 0x00, c.pattern_bytes, c.name);
    EXPECT_EQ(get_field(patterned, c.field), c.pattern);

    // Clearing the field in an all-ones command touches no neighbour bit.
    PrmBuffer<Bits> full;
    std::memset(full.data(), 0xff, PrmBuffer<Bits>::bytes);
    set_field(full, c.field, 0);
    std::vector<std::pair<uint32_t, uint8_t>> cleared;
    for (const auto& [offset, value] : c.ones_bytes) {
      cleared.emplace_back(offset, static_cast<uint8_t>(~value));
    }
    expect_only(full, 0xff, cleared, c.name);
  }
}

TEST(DevxLayout, CreateCqFields) { check_cases<create_cq_in::bits>(kCreateCq); }
TEST(DevxLayout, CreateQpFields) { check_cases<create_qp_in::bits>(kCreateQp); }
TEST(DevxLayout, ModifyQpFields) { check_cases<modify_qp_in::bits>(kModifyQp); }
TEST(DevxLayout, CreateDctFields) { check_cases<create_dct_in::bits>(kCreateDct); }
TEST(DevxLayout, QueryHcaCapFields) { check_cases<query_hca_cap_out::bits>(kHcaCap); }

TEST(DevxLayout, CommandSizes) {
  // DEVX_ST_SZ_BYTES of each input as rdma-core/NVSHMEM pass it to mlx5dv_devx_obj_create.
  EXPECT_EQ(CreateCqIn::bytes, 272u);
  EXPECT_EQ(CreateQpIn::bytes, 272u);
  EXPECT_EQ(ModifyQpIn::bytes, 272u);
  EXPECT_EQ(CreateDctIn::bytes, 128u);
  EXPECT_EQ(QueryHcaCapIn::bytes, 16u);
  EXPECT_EQ(QueryHcaCapOut::bytes, 4112u);
  EXPECT_EQ(CreateCqOut::bytes, 16u);
}

TEST(DevxLayout, SixtyFourBitFieldIsTwoBigEndianDwords) {
  CreateCqIn in;
  set_field(in, create_cq_in::cq_umem_offset, 0x0102030405060708ull);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(in.byte(0x50 + i), i + 1);
}

}  // namespace
}  // namespace dissect::mlx5provider
