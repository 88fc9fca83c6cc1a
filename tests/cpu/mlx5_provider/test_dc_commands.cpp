// DC DEVX commands, field by field and as whole commands: each builder writes exactly the fields
// listed here (an independent re-statement of NVSHMEM's and UCX's DCI/DCT commands) and nothing
// else, so a DCI can never carry a remote address or responder rights by accident.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "dissect/providers/mlx5/dc.h"
#include "dissect/providers/mlx5/dc_commands.h"

namespace dissect::mlx5provider {
namespace {

using Fields = std::vector<std::pair<PrmField, uint64_t>>;

// The command must equal a zeroed command with exactly `fields` written.
template <uint32_t Bits>
void expect_exactly(const PrmBuffer<Bits>& got, const Fields& fields) {
  PrmBuffer<Bits> want;
  for (const auto& [field, value] : fields) {
    EXPECT_EQ(get_field(got, field), value) << "field at bit 0x" << std::hex << field.bit_offset;
    set_field(want, field, value);
  }
  for (uint32_t i = 0; i < PrmBuffer<Bits>::bytes; ++i) {
    EXPECT_EQ(got.byte(i), want.byte(i)) << "unexpected bits in byte 0x" << std::hex << i;
  }
}

constexpr uint32_t kCreateQpc = create_qp_in::qpc;
constexpr uint32_t kModifyQpc = modify_qp_in::qpc;

TEST(DcCommands, CreateDci) {
  DciCreateParams p;
  p.queue.pd = 0x55;
  p.queue.uar_page = 0x77;
  p.queue.log_sq_size = 10;
  p.queue.cqn_snd = 0x401;
  p.queue.cqn_rcv = 0x401;
  p.queue.user_index = 2;
  p.queue.log_page_size = 4;
  p.queue.wq_umem_id = 9;
  p.queue.wq_umem_offset = 0x10000;
  p.queue.dbr_umem_id = 10;
  p.queue.dbr_offset = 0x40;
  p.queue.rq_type = MLX5_SRQ_RQ;  // overridden: a DCI has no receive side
  p.queue.log_rq_size = 5;        // overridden
  p.log_num_dci_stream_channels = 3;
  expect_exactly(build_create_dci_in(p),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_CREATE_QP},
                        {at(kCreateQpc, qpc::st), MLX5_QPC_ST_DCI},
                        {at(kCreateQpc, qpc::pm_state), MLX5_QPC_PM_STATE_MIGRATED},
                        {at(kCreateQpc, qpc::pd), 0x55},
                        {at(kCreateQpc, qpc::uar_page), 0x77},
                        {at(kCreateQpc, qpc::rq_type), MLX5_ZERO_LEN_RQ},
                        {at(kCreateQpc, qpc::log_sq_size), 10},
                        {at(kCreateQpc, qpc::cqn_snd), 0x401},
                        {at(kCreateQpc, qpc::cqn_rcv), 0x401},
                        {at(kCreateQpc, qpc::user_index), 2},
                        {at(kCreateQpc, qpc::log_page_size), 4},
                        {at(kCreateQpc, qpc::log_num_dci_stream_channels), 3},
                        {at(kCreateQpc, qpc::dbr_umem_valid), 1},
                        {at(kCreateQpc, qpc::dbr_umem_id), 10},
                        {at(kCreateQpc, qpc::dbr_addr), 0x40},
                        {create_qp_in::wq_umem_valid, 1},
                        {create_qp_in::wq_umem_id, 9},
                        {create_qp_in::wq_umem_offset, 0x10000}});
}

TEST(DcCommands, CreateDciStBytesMatchThePrm) {
  // qpc.st is bits 0x08..0x0f of the QPC, which starts at byte 0x18 of create_qp_in.
  const CreateQpIn in = build_create_dci_in(DciCreateParams{});
  EXPECT_EQ(in.byte(0x19), 0x05);
  EXPECT_EQ(in.byte(0x1a) & 0x18, 0x18);  // pm_state = migrated (bits 0x13..0x14)
}

DciConnectParams ib_dci() {
  DciConnectParams p;
  p.port_num = 1;
  p.pkey_index = 2;
  p.path_mtu = MLX5_MTU_2048;
  p.sl = 5;
  return p;
}

DciConnectParams roce_dci() {
  DciConnectParams p = ib_dci();
  p.link_layer = LinkLayer::ethernet;
  p.traffic_class = 0x68;
  return p;
}

TEST(DcCommands, Rst2InitDciInfiniband) {
  expect_exactly(build_rst2init_dci_in(0x1234, ib_dci()),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_RST2INIT_QP},
                        {modify_qp_in::qpn, 0x1234},
                        {at(kModifyQpc, qpc::pm_state), MLX5_QPC_PM_STATE_MIGRATED},
                        {primary_path(kModifyQpc, ads::vhca_port_num), 1},
                        {primary_path(kModifyQpc, ads::pkey_index), 2}});
}

TEST(DcCommands, Rst2InitDciRoceHasNoPkey) {
  expect_exactly(build_rst2init_dci_in(7, roce_dci()),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_RST2INIT_QP},
                        {modify_qp_in::qpn, 7},
                        {at(kModifyQpc, qpc::pm_state), MLX5_QPC_PM_STATE_MIGRATED},
                        {primary_path(kModifyQpc, ads::vhca_port_num), 1}});
}

TEST(DcCommands, Init2RtrDciInfinibandHasNoRemote) {
  expect_exactly(build_init2rtr_dci_in(0x1234, ib_dci()),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_INIT2RTR_QP},
                        {modify_qp_in::qpn, 0x1234},
                        {at(kModifyQpc, qpc::mtu), MLX5_MTU_2048},
                        {at(kModifyQpc, qpc::log_msg_max), 30},
                        {primary_path(kModifyQpc, ads::sl), 5}});
}

TEST(DcCommands, Init2RtrDciRoce) {
  expect_exactly(build_init2rtr_dci_in(7, roce_dci()),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_INIT2RTR_QP},
                        {modify_qp_in::qpn, 7},
                        {at(kModifyQpc, qpc::mtu), MLX5_MTU_2048},
                        {at(kModifyQpc, qpc::log_msg_max), 30},
                        {primary_path(kModifyQpc, ads::eth_prio), 5},
                        {primary_path(kModifyQpc, ads::tclass), 0x68},
                        {primary_path(kModifyQpc, ads::dscp), 0x1a}});
}

TEST(DcCommands, Rtr2RtsDci) {
  DciConnectParams p = ib_dci();
  p.sq_psn = 0x222;
  p.max_rd_atomic = 8;
  expect_exactly(build_rtr2rts_dci_in(0x1234, p),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_RTR2RTS_QP},
                        {modify_qp_in::qpn, 0x1234},
                        {at(kModifyQpc, qpc::next_send_psn), 0x222},
                        {at(kModifyQpc, qpc::retry_count), 7},
                        {at(kModifyQpc, qpc::rnr_retry), 7},
                        {at(kModifyQpc, qpc::log_sra_max), 3},
                        {primary_path(kModifyQpc, ads::ack_timeout), 20}});
}

TEST(DcCommands, CreateDctWholeCommand) {
  CreateDctParams p;
  p.pd = 0x11;
  p.cqn = 0x22;
  p.srqn = 0x33;
  p.dc_access_key = DC_ACCESS_KEY_DEFAULT;
  p.user_index = 4;
  p.port = 2;
  p.pkey_index = 1;
  p.mtu = MLX5_MTU_1024;
  p.min_rnr_nak = 12;
  p.tclass = 0x20;
  p.flow_label = 0x12345;
  p.hop_limit = 64;
  p.my_addr_index = 3;
  constexpr uint32_t d = create_dct_in::dct_context_entry;
  expect_exactly(build_create_dct_in(p),
                 Fields{{cmd_in::opcode, MLX5_CMD_OP_CREATE_DCT},
                        {at(d, dctc::pd), 0x11},
                        {at(d, dctc::cqn), 0x22},
                        {at(d, dctc::srqn_xrqn), 0x33},
                        {at(d, dctc::user_index), 4},
                        {at(d, dctc::dc_access_key), 0x5623CEAF},
                        {at(d, dctc::port), 2},
                        {at(d, dctc::pkey_index), 1},
                        {at(d, dctc::mtu), MLX5_MTU_1024},
                        {at(d, dctc::min_rnr_nak), 12},
                        {at(d, dctc::rre), 1},
                        {at(d, dctc::rwe), 1},
                        {at(d, dctc::rae), 1},
                        {at(d, dctc::atomic_mode), MLX5_ATOMIC_MODE_UP_TO_64},
                        {at(d, dctc::tclass), 0x20},
                        {at(d, dctc::flow_label), 0x12345},
                        {at(d, dctc::hop_limit), 64},
                        {at(d, dctc::my_addr_index), 3}});
}

TEST(DcCommands, CreateDctWriteOnlyHasNoAtomicMode) {
  CreateDctParams p;
  p.access = RC_ACCESS_REMOTE_WRITE;
  const CreateDctIn in = build_create_dct_in(p);
  constexpr uint32_t d = create_dct_in::dct_context_entry;
  EXPECT_EQ(get_field(in, at(d, dctc::rwe)), 1u);
  EXPECT_EQ(get_field(in, at(d, dctc::rre)), 0u);
  EXPECT_EQ(get_field(in, at(d, dctc::rae)), 0u);
  EXPECT_EQ(get_field(in, at(d, dctc::atomic_mode)), 0u);
}

// What the nic API hands a DCI submitter for an mlx5 DCT (dc.h dct_endpoint): number, key, LID
// and GID as the DCT reported them; a RoCE target refused by name (its AV needs the next hop's MAC).
TEST(DcEndpoint, AnInfinibandTargetKeepsItsNumberKeyLidAndGid) {
  DcTarget t;
  t.dct_number = 0x12345;
  t.dc_key = 0x5623CEAF;
  t.lid = 0x2a;
  for (int i = 0; i < 16; ++i) t.gid[i] = static_cast<uint8_t>(0xf0 + i);
  const nic::DctEndpoint e = dct_endpoint(t);
  EXPECT_EQ(e.dctn, 0x12345u);
  EXPECT_EQ(e.dc_key, 0x5623CEAFu);
  EXPECT_EQ(e.lid, 0x2a);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(e.gid[i], 0xf0 + i) << "gid byte " << i;
  t.link_layer = LinkLayer::ethernet;
  try {
    dct_endpoint(t);
    ADD_FAILURE() << "a RoCE target was accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("74565"), std::string::npos) << error.what();  // the DCT's number
    EXPECT_NE(std::string(error.what()).find("address_vector"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dissect::mlx5provider
