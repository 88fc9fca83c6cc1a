// The DEVX command builders write the values the research brief (gda.md §4.2, §5.1) prescribes,
// each into its PRM field, and nothing the caller did not ask for.
#include <gtest/gtest.h>

#include "dissect/providers/mlx5/devx_commands.h"

namespace dissect::mlx5provider {
namespace {

TEST(DevxBuilders, CreateCq) {
  CreateCqParams p;
  p.log_cq_size = 10;
  p.uar_page = 0x1234;
  p.c_eqn = 7;
  p.cq_umem_id = 0xa1;
  p.cq_umem_offset = 0x10000;
  p.dbr_umem_id = 0xb2;
  p.dbr_offset = 0x40;
  p.log_page_size = 4;
  const CreateCqIn in = build_create_cq_in(p);
  constexpr uint32_t c = create_cq_in::cq_context;
  EXPECT_EQ(get_field(in, cmd_in::opcode), 0x400u);
  EXPECT_EQ(get_field(in, at(c, cqc::log_cq_size)), 10u);
  EXPECT_EQ(get_field(in, at(c, cqc::uar_page)), 0x1234u);
  EXPECT_EQ(get_field(in, at(c, cqc::c_eqn)), 7u);
  EXPECT_EQ(get_field(in, at(c, cqc::cqe_sz)), 0u);  // 64-byte CQEs
  EXPECT_EQ(get_field(in, at(c, cqc::oi)), 1u);
  EXPECT_EQ(get_field(in, at(c, cqc::cc)), 0u);
  EXPECT_EQ(get_field(in, at(c, cqc::dbr_umem_valid)), 1u);
  EXPECT_EQ(get_field(in, at(c, cqc::dbr_umem_id)), 0xb2u);
  EXPECT_EQ(get_field(in, at(c, cqc::dbr_addr)), 0x40u);
  EXPECT_EQ(get_field(in, at(c, cqc::log_page_size)), 4u);
  EXPECT_EQ(get_field(in, create_cq_in::cq_umem_valid), 1u);
  EXPECT_EQ(get_field(in, create_cq_in::cq_umem_id), 0xa1u);
  EXPECT_EQ(get_field(in, create_cq_in::cq_umem_offset), 0x10000u);
}

TEST(DevxBuilders, CreateQpRcWithoutReceiveQueue) {
  CreateQpParams p;
  p.pd = 0x55;
  p.uar_page = 0x77;
  p.log_sq_size = 10;
  p.cqn_snd = 0x401;
  p.cqn_rcv = 0x402;
  p.user_index = 3;
  p.wq_umem_id = 9;
  p.wq_umem_offset = 0x2000;
  p.dbr_umem_id = 10;
  p.dbr_offset = 8;
  const CreateQpIn in = build_create_qp_in(p);
  constexpr uint32_t q = create_qp_in::qpc;
  EXPECT_EQ(get_field(in, cmd_in::opcode), 0x500u);
  EXPECT_EQ(get_field(in, at(q, qpc::st)), MLX5_QPC_ST_RC);
  EXPECT_EQ(get_field(in, at(q, qpc::pm_state)), 3u);
  EXPECT_EQ(get_field(in, at(q, qpc::pd)), 0x55u);
  EXPECT_EQ(get_field(in, at(q, qpc::uar_page)), 0x77u);
  EXPECT_EQ(get_field(in, at(q, qpc::rq_type)), MLX5_ZERO_LEN_RQ);
  EXPECT_EQ(get_field(in, at(q, qpc::log_sq_size)), 10u);
  EXPECT_EQ(get_field(in, at(q, qpc::log_rq_size)), 0u);
  EXPECT_EQ(get_field(in, at(q, qpc::cqn_snd)), 0x401u);
  EXPECT_EQ(get_field(in, at(q, qpc::cqn_rcv)), 0x402u);
  EXPECT_EQ(get_field(in, at(q, qpc::user_index)), 3u);
  EXPECT_EQ(get_field(in, at(q, qpc::cs_req)), 0u);
  EXPECT_EQ(get_field(in, at(q, qpc::cs_res)), 0u);
  EXPECT_EQ(get_field(in, at(q, qpc::page_offset)), 0u);
  EXPECT_EQ(get_field(in, at(q, qpc::dbr_umem_valid)), 1u);
  EXPECT_EQ(get_field(in, at(q, qpc::dbr_umem_id)), 10u);
  EXPECT_EQ(get_field(in, at(q, qpc::dbr_addr)), 8u);
  EXPECT_EQ(get_field(in, create_qp_in::wq_umem_valid), 1u);
  EXPECT_EQ(get_field(in, create_qp_in::wq_umem_id), 9u);
  EXPECT_EQ(get_field(in, create_qp_in::wq_umem_offset), 0x2000u);
}

RcConnectParams ib_params() {
  RcConnectParams p;
  p.port_num = 1;
  p.pkey_index = 2;
  p.remote_qpn = 0xabcde;
  p.rq_psn = 0x111;
  p.sq_psn = 0x222;
  p.remote_lid = 0x33;
  p.sl = 5;
  return p;
}

TEST(DevxBuilders, Rst2Init) {
  const ModifyQpIn in = build_rst2init_qp_in(0x1234, ib_params());
  constexpr uint32_t q = modify_qp_in::qpc;
  EXPECT_EQ(get_field(in, cmd_in::opcode), 0x502u);
  EXPECT_EQ(get_field(in, modify_qp_in::qpn), 0x1234u);
  EXPECT_EQ(get_field(in, at(q, qpc::pm_state)), 3u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::pkey_index)), 2u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::vhca_port_num)), 1u);
  EXPECT_EQ(get_field(in, at(q, qpc::rre)), 1u);
  EXPECT_EQ(get_field(in, at(q, qpc::rwe)), 1u);
  EXPECT_EQ(get_field(in, at(q, qpc::rae)), 1u);
  EXPECT_EQ(get_field(in, at(q, qpc::atomic_mode)), 3u);
}

TEST(DevxBuilders, Init2RtrInfiniband) {
  const uint8_t rmac[6] = {};
  const ModifyQpIn in = build_init2rtr_qp_in(0x1234, ib_params(), rmac, 0);
  constexpr uint32_t q = modify_qp_in::qpc;
  EXPECT_EQ(get_field(in, cmd_in::opcode), 0x503u);
  EXPECT_EQ(get_field(in, at(q, qpc::mtu)), 5u);
  EXPECT_EQ(get_field(in, at(q, qpc::log_msg_max)), 30u);
  EXPECT_EQ(get_field(in, at(q, qpc::remote_qpn)), 0xabcdeu);
  EXPECT_EQ(get_field(in, at(q, qpc::next_rcv_psn)), 0x111u);
  EXPECT_EQ(get_field(in, at(q, qpc::log_rra_max)), 4u);
  EXPECT_EQ(get_field(in, at(q, qpc::min_rnr_nak)), 12u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::rlid)), 0x33u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::sl)), 5u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::grh)), 0u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::hop_limit)), 0u);  // no GRH: left alone
}

TEST(DevxBuilders, Init2RtrRoce) {
  RcConnectParams p = ib_params();
  p.link_layer = LinkLayer::ethernet;
  p.sgid_index = 3;
  p.traffic_class = 0x68;
  p.hop_limit = 64;
  for (int i = 0; i < 16; ++i) p.remote_gid[i] = static_cast<uint8_t>(0xf0 + i);
  const uint8_t rmac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
  const ModifyQpIn in = build_init2rtr_qp_in(7, p, rmac, 0xc123);
  constexpr uint32_t q = modify_qp_in::qpc;
  EXPECT_EQ(get_field(in, primary_path(q, ads::grh)), 0u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::rlid)), 0u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::eth_prio)), 5u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::sl)), 0u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::udp_sport)), 0xc123u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::src_addr_index)), 3u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::hop_limit)), 64u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::tclass)), 0x68u);
  // rgid_rip: qpc at bit 0xc0, primary path at +0xc0, rgid_rip at +0x80 => bit 0x200 => byte 0x40.
  for (int i = 0; i < 16; ++i) EXPECT_EQ(in.byte(0x40 + i), 0xf0 + i);
  // rmac_47_32: 0xc0 + 0xc0 + 0x130 = bit 0x2b0 => byte 0x56.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(in.byte(0x56 + i), rmac[i]);
}

TEST(DevxBuilders, Rtr2Rts) {
  const ModifyQpIn in = build_rtr2rts_qp_in(0x1234, ib_params());
  constexpr uint32_t q = modify_qp_in::qpc;
  EXPECT_EQ(get_field(in, cmd_in::opcode), 0x504u);
  EXPECT_EQ(get_field(in, at(q, qpc::next_send_psn)), 0x222u);
  EXPECT_EQ(get_field(in, at(q, qpc::retry_count)), 7u);
  EXPECT_EQ(get_field(in, at(q, qpc::rnr_retry)), 7u);
  EXPECT_EQ(get_field(in, at(q, qpc::log_sra_max)), 4u);
  EXPECT_EQ(get_field(in, at(q, qpc::log_ack_req_freq)), 0u);
  EXPECT_EQ(get_field(in, primary_path(q, ads::ack_timeout)), 20u);
}

TEST(DevxBuilders, CreateDct) {
  CreateDctParams p;
  p.pd = 1;
  p.cqn = 2;
  p.srqn = 3;
  p.dc_access_key = 0x5623CEAFull;  // NVSHMEM's IBGDA_DC_ACCESS_KEY
  const CreateDctIn in = build_create_dct_in(p);
  constexpr uint32_t d = create_dct_in::dct_context_entry;
  EXPECT_EQ(get_field(in, cmd_in::opcode), 0x710u);
  EXPECT_EQ(get_field(in, at(d, dctc::pd)), 1u);
  EXPECT_EQ(get_field(in, at(d, dctc::cqn)), 2u);
  EXPECT_EQ(get_field(in, at(d, dctc::srqn_xrqn)), 3u);
  EXPECT_EQ(get_field(in, at(d, dctc::dc_access_key)), 0x5623CEAFull);
  EXPECT_EQ(get_field(in, at(d, dctc::mtu)), 5u);
  EXPECT_EQ(get_field(in, at(d, dctc::port)), 1u);
  EXPECT_EQ(get_field(in, at(d, dctc::rwe)), 1u);
  EXPECT_EQ(get_field(in, at(d, dctc::atomic_mode)), 3u);
  EXPECT_EQ(get_field(in, at(d, dctc::hop_limit)), 255u);
}

TEST(DevxBuilders, QueryHcaCapOpMod) {
  EXPECT_EQ(get_field(build_query_hca_cap_in(MLX5_CAP_GENERAL, HCA_CAP_OPMOD_GET_CUR),
                      cmd_in::op_mod), 1u);
  EXPECT_EQ(get_field(build_query_hca_cap_in(MLX5_CAP_ATOMIC, HCA_CAP_OPMOD_GET_CUR),
                      cmd_in::op_mod), 7u);
  EXPECT_EQ(get_field(build_query_hca_cap_in(MLX5_CAP_GENERAL, 0), cmd_in::opcode), 0x100u);
}

TEST(DevxBuilders, ParseHcaCapsAndVerdict) {
  QueryHcaCapOut general;
  QueryHcaCapOut atomic;
  constexpr uint32_t cap = query_hca_cap_out::capability;
  set_field(general, at(cap, cmd_hca_cap::cqe_version), 1);
  set_field(general, at(cap, cmd_hca_cap::log_bf_reg_size), 9);
  set_field(general, at(cap, cmd_hca_cap::compact_address_vector), 1);
  set_field(atomic, at(cap, atomic_caps::atomic_operations), 0xf);
  set_field(atomic, at(cap, atomic_caps::atomic_size_qp), 0xc);
  HcaCaps caps = parse_hca_caps(general, atomic);
  EXPECT_EQ(caps.cqe_version, 1u);
  EXPECT_EQ(caps.log_bf_reg_size, 9u);
  EXPECT_TRUE(caps.compact_address_vector);
  EXPECT_STREQ(gpu_queue_caps_problem(caps), "");
  caps.cqe_version = 0;
  EXPECT_STREQ(gpu_queue_caps_problem(caps), "hca_cap.cqe_version != 1");
}

}  // namespace
}  // namespace dissect::mlx5provider
