// mlx5 formats: segment bytes against rdma-core's own builders and the PRM tables of
// docs/mlx5_sources.md; doorbell and ring arithmetic.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/ring.h"
#include "dissect/mlx5/wqe.h"

#if DISSECT_HAVE_MLX5DV_HEADER
#include <infiniband/mlx5dv.h>
#endif

namespace m = dissect::mlx5;

namespace {

template <typename T>
std::vector<uint8_t> bytes_of(const T& value) {
  std::vector<uint8_t> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

#if DISSECT_HAVE_MLX5DV_HEADER
TEST(Formats, ControlSegmentMatchesRdmaCore) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const uint16_t index = static_cast<uint16_t>(random());
    const uint8_t opcode = static_cast<uint8_t>(random());
    const uint8_t opmod = static_cast<uint8_t>(random());
    const uint32_t qpn = static_cast<uint32_t>(random()) & 0xffffff;
    const uint8_t fm_ce_se = static_cast<uint8_t>(random());
    const uint8_t ds = static_cast<uint8_t>(random() & 0x3f);
    const uint8_t signature = static_cast<uint8_t>(random());
    const uint32_t imm = static_cast<uint32_t>(random());

    ::mlx5_wqe_ctrl_seg oracle;
    std::memset(&oracle, 0, sizeof oracle);
    ::mlx5dv_set_ctrl_seg(&oracle, index, opcode, opmod, qpn, fm_ce_se, ds, signature, imm);
    m::mlx5_wqe_ctrl_seg ours;
    std::memset(&ours, 0xee, sizeof ours);
    m::set_ctrl_seg(&ours, index, opcode, opmod, qpn, fm_ce_se, ds, signature, m::be32::from_raw(imm));
    ASSERT_EQ(bytes_of(oracle), bytes_of(ours)) << "trial " << trial;
    EXPECT_EQ(m::ctrl_wqe_index(ours), index);
    EXPECT_EQ(m::ctrl_opcode(ours), opcode);
    EXPECT_EQ(m::ctrl_qpn(ours), qpn);
    EXPECT_EQ(m::ctrl_ds(ours), ds);
  }
}

TEST(Formats, DataSegmentMatchesRdmaCore) {
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const uint32_t length = static_cast<uint32_t>(random()) & 0x7fffffff;
    const uint32_t lkey = static_cast<uint32_t>(random());
    const uint64_t address = random();
    ::mlx5_wqe_data_seg oracle;
    ::mlx5dv_set_data_seg(&oracle, length, lkey, address);
    m::mlx5_wqe_data_seg ours;
    m::set_data_seg(&ours, length, lkey, address);
    ASSERT_EQ(bytes_of(oracle), bytes_of(ours)) << "trial " << trial;
  }
}

TEST(Formats, StructSizesMatchRdmaCore) {
  EXPECT_EQ(sizeof(::mlx5_wqe_ctrl_seg), sizeof(m::mlx5_wqe_ctrl_seg));
  EXPECT_EQ(sizeof(::mlx5_wqe_raddr_seg), sizeof(m::mlx5_wqe_raddr_seg));
  EXPECT_EQ(sizeof(::mlx5_wqe_atomic_seg), sizeof(m::mlx5_wqe_atomic_seg));
  EXPECT_EQ(sizeof(::mlx5_wqe_av), sizeof(m::mlx5_wqe_av));
  EXPECT_EQ(sizeof(::mlx5_cqe64), sizeof(m::mlx5_cqe64));
  EXPECT_EQ(offsetof(::mlx5_cqe64, wqe_counter), offsetof(m::mlx5_cqe64, wqe_counter));
  EXPECT_EQ(offsetof(::mlx5_cqe64, sop_drop_qpn), offsetof(m::mlx5_cqe64, sop_drop_qpn));
  EXPECT_EQ(offsetof(::mlx5_cqe64, imm_inval_pkey), offsetof(m::mlx5_cqe64, imm_inval_pkey));
  EXPECT_EQ(int{MLX5_OPCODE_RDMA_WRITE}, int{m::MLX5_OPCODE_RDMA_WRITE});
  EXPECT_EQ(int{MLX5_OPCODE_RDMA_WRITE_IMM}, int{m::MLX5_OPCODE_RDMA_WRITE_IMM});
  EXPECT_EQ(int{MLX5_OPCODE_ATOMIC_FA}, int{m::MLX5_OPCODE_ATOMIC_FA});
  EXPECT_EQ(int{MLX5_WQE_CTRL_CQ_UPDATE}, int{m::MLX5_WQE_CTRL_CQ_UPDATE});
  EXPECT_EQ(uint32_t{MLX5_INLINE_SEG}, m::MLX5_INLINE_SEG);
  EXPECT_EQ(int{MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR}, int{m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR});
  EXPECT_EQ(int{MLX5_CQE_SYNDROME_WR_FLUSH_ERR}, int{m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR});
  EXPECT_EQ(int{MLX5_CQE_REQ_ERR}, int{m::MLX5_CQE_REQ_ERR});
}
#else
TEST(Formats, RdmaCoreOracle) {
  GTEST_SKIP() << "rdma-core's infiniband/mlx5dv.h not found: install libibverbs-dev";
}
#endif

// PRM / gda.md §1.5: raddr BE64 @0, rkey BE32 @8, reserved @12.
TEST(Formats, RemoteAddressSegmentLayout) {
  m::mlx5_wqe_raddr_seg seg;
  std::memset(&seg, 0xee, sizeof seg);
  m::set_raddr_seg(&seg, 0x0102030405060708ull, 0xa1b2c3d4u);
  const std::vector<uint8_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 0xa1, 0xb2, 0xc3, 0xd4, 0, 0, 0, 0};
  EXPECT_EQ(bytes_of(seg), expected);
}

// gda.md §1.7: BE32(length | 0x80000000), payload raw at +4.
TEST(Formats, InlineHeaderAndSizes) {
  m::mlx5_wqe_inl_data_seg seg{m::be32::from_host(13 | m::MLX5_INLINE_SEG)};
  EXPECT_EQ(bytes_of(seg), (std::vector<uint8_t>{0x80, 0, 0, 13}));
  for (uint32_t n = 1; n <= 12; ++n) EXPECT_EQ(m::rc_write_inline_ds(n), 3u) << n;
  for (uint32_t n = 13; n <= 28; ++n) EXPECT_EQ(m::rc_write_inline_ds(n), 4u) << n;
  EXPECT_EQ(m::rc_write_inline_ds(29), 5u);
  EXPECT_EQ(m::wqebbs_for_ds(m::rc_write_inline_ds(220)), 4u);
}

// gda.md §1.8 / §1.10: FA swap_add BE64 @0, compare @8.
TEST(Formats, AtomicSegmentLayout) {
  m::mlx5_wqe_atomic_seg seg;
  std::memset(&seg, 0xee, sizeof seg);
  m::set_atomic_fetch_add_seg(&seg, 0x1122334455667788ull);
  const std::vector<uint8_t> expected = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                         0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(bytes_of(seg), expected);
}

// gda.md §1.9: dc_key BE64 @0, dqp_dct BE32 @8 (bit 31 = extended AV), rlid BE16 @14, rgid @32.
TEST(Formats, AddressVectorLayout) {
  m::mlx5_wqe_av av{};
  av.dc_key = m::be64::from_host(0x1234);
  av.dqp_dct = m::be32::from_host(m::MLX5_EXTENDED_UD_AV | 0xabcdef);
  av.rlid = m::be16::from_host(0x0102);
  av.rgid[0] = 0xfe;
  const auto b = bytes_of(av);
  EXPECT_EQ(b[6], 0x12);
  EXPECT_EQ(b[7], 0x34);
  EXPECT_EQ(b[8], 0x80);
  EXPECT_EQ(b[9], 0xab);
  EXPECT_EQ(b[11], 0xef);
  EXPECT_EQ(b[14], 0x01);
  EXPECT_EQ(b[15], 0x02);
  EXPECT_EQ(b[32], 0xfe);
  EXPECT_EQ(sizeof(m::mlx5_wqe_av_compact), 16u);
}

// gda.md §3.1: error CQE syndrome @55, s_wqe_opcode_qpn @56, wqe_counter @60, op_own @63.
TEST(Formats, ErrorCqeLayout) {
  uint8_t raw[64] = {};
  raw[55] = m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
  raw[56] = m::MLX5_OPCODE_RDMA_WRITE;
  raw[57] = 0x00;
  raw[58] = 0x01;
  raw[59] = 0x23;
  raw[60] = 0x45;
  raw[61] = 0x67;
  raw[63] = static_cast<uint8_t>(m::MLX5_CQE_REQ_ERR << 4 | 1);
  m::mlx5_err_cqe e;
  std::memcpy(&e, raw, sizeof e);
  EXPECT_EQ(e.syndrome, m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  EXPECT_EQ(e.s_wqe_opcode_qpn.value(), (uint32_t{m::MLX5_OPCODE_RDMA_WRITE} << 24) | 0x123u);
  EXPECT_EQ(e.wqe_counter.value(), 0x4567);
  EXPECT_EQ(m::cqe_opcode(e.op_own), m::MLX5_CQE_REQ_ERR);
  EXPECT_EQ(m::cqe_owner(e.op_own), 1);
}

TEST(Formats, CqeOwnershipFlipsEveryLap) {
  const uint32_t count = 8;
  for (uint64_t n = 0; n < 64; ++n) {
    const uint8_t op_own = m::make_op_own(m::MLX5_CQE_REQ, n, count);
    EXPECT_TRUE(m::cqe_is_sw_owned(op_own, n, count)) << n;
    EXPECT_FALSE(m::cqe_is_sw_owned(op_own, n + count, count)) << n;
  }
  EXPECT_FALSE(m::cqe_is_sw_owned(m::MLX5_CQE_INITIAL_OP_OWN, 0, count));
  EXPECT_FALSE(m::cqe_is_sw_owned(m::MLX5_CQE_INITIAL_OP_OWN, count, count));
}

// gda.md §2.1-2.2: dbrec = BE32(pi & 0xffff); doorbell = ctrl's first 8 bytes.
TEST(Formats, DoorbellRecordAndValue) {
  EXPECT_EQ(m::dbrec_value(0x12345).raw, m::byte_swap(uint32_t{0x2345}));
  const uint64_t doorbell = m::doorbell_value(0x10005, 0x000abc);
  uint8_t image[8];
  std::memcpy(image, &doorbell, 8);
  const std::vector<uint8_t> expected = {0x00, 0x00, 0x05, 0x00, 0x00, 0x0a, 0xbc, 0x00};
  EXPECT_EQ(std::vector<uint8_t>(image, image + 8), expected);
  m::mlx5_wqe_ctrl_seg ctrl{};
  m::set_ctrl_seg(&ctrl, 5, 0, 0, 0xabc, 0, 0, 0, m::be32{0});
  EXPECT_EQ(std::memcmp(&ctrl, image, 8), 0);
}

TEST(Formats, RingSegmentsWrapAtTheEnd) {
  std::vector<uint8_t> buffer(4 * 64);
  m::send_ring ring{buffer.data(), 4};
  // A 2-WQEBB WQE starting in the last slot: segments 0..3 in slot 3, 4..7 in slot 0.
  EXPECT_EQ(ring.segment(7, 0), buffer.data() + 3 * 64);
  EXPECT_EQ(ring.segment(7, 3), buffer.data() + 3 * 64 + 48);
  EXPECT_EQ(ring.segment(7, 4), buffer.data());
  EXPECT_EQ(ring.segment(7, 5), buffer.data() + 16);
  EXPECT_EQ(ring.byte_at(7, 70), buffer.data() + 6);
}

TEST(Formats, WidenIndex16) {
  for (uint64_t reference : {uint64_t{5}, uint64_t{0x10003}, uint64_t{0x7fff1234}}) {
    for (uint64_t back = 0; back < 32768; back += 97) {
      if (back > reference) break;
      const uint64_t original = reference - back;
      EXPECT_EQ(m::widen_index16(static_cast<uint16_t>(original), reference), original);
    }
  }
}

}  // namespace
