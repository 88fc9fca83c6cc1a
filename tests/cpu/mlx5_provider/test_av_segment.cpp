// The DC address-vector segment against rdma-core itself: our mlx5_wqe_av has the layout of
// mlx5dv.h's struct mlx5_wqe_av field by field, and set_dc_av_seg / build_full_av produce the
// bytes that rdma-core's mlx5_create_ah (verbs.c) followed by mlx5_send_wr_set_dc_addr (qp.c)
// produce, for InfiniBand with a LID and for RoCE with a GID. The oracle below fills rdma-core's
// struct with rdma-core's own statements' semantics (htobe*, the same shifts).
#include <endian.h>
#include <gtest/gtest.h>
#include <infiniband/mlx5dv.h>

#include <cstddef>
#include <cstring>

#include "dissect/providers/mlx5/address_vector.h"

namespace dissect::mlx5provider {
namespace {

using ours = mlx5::mlx5_wqe_av;
using theirs = ::mlx5_wqe_av;

static_assert(sizeof(ours) == sizeof(theirs));
static_assert(offsetof(ours, dc_key) == offsetof(theirs, key.dc_key));
static_assert(offsetof(ours, dqp_dct) == offsetof(theirs, dqp_dct));
static_assert(offsetof(ours, stat_rate_sl) == offsetof(theirs, stat_rate_sl));
static_assert(offsetof(ours, fl_mlid) == offsetof(theirs, fl_mlid));
static_assert(offsetof(ours, rlid) == offsetof(theirs, rlid));
static_assert(offsetof(ours, reserved0) == offsetof(theirs, reserved0));
static_assert(offsetof(ours, rmac) == offsetof(theirs, rmac));
static_assert(offsetof(ours, tclass) == offsetof(theirs, tclass));
static_assert(offsetof(ours, hop_limit) == offsetof(theirs, hop_limit));
static_assert(offsetof(ours, grh_gid_fl) == offsetof(theirs, grh_gid_fl));
static_assert(offsetof(ours, rgid) == offsetof(theirs, rgid));
static_assert(mlx5::MLX5_EXTENDED_UD_AV == MLX5_EXTENDED_UD_AV);

// mlx5_create_ah for an InfiniBand port, ah_attr with dlid, sl, src_path_bits, no GRH.
theirs rdma_core_ib_ah(uint16_t dlid, uint8_t sl, uint8_t src_path_bits, uint8_t static_rate) {
  theirs av;
  std::memset(&av, 0, sizeof(av));
  av.fl_mlid = src_path_bits & 0x7f;
  av.rlid = htobe16(dlid);
  av.stat_rate_sl = static_cast<uint8_t>((static_rate << 4) | (sl & 0xf));
  return av;
}

// mlx5_create_ah for a RoCE v2 port: GRH always, grh bit 0, sport in rlid, MAC from the kernel.
theirs rdma_core_roce_ah(const uint8_t (&dgid)[16], uint8_t sgid_index, uint8_t sl,
                         uint8_t tclass, uint8_t hop_limit, uint16_t sport,
                         const uint8_t (&dmac)[6]) {
  theirs av;
  std::memset(&av, 0, sizeof(av));
  av.rlid = htobe16(sport);
  av.stat_rate_sl = static_cast<uint8_t>((sl & 0x7) << 1);
  av.tclass = tclass;
  av.hop_limit = hop_limit;
  av.grh_gid_fl = htobe32(static_cast<uint32_t>(sgid_index) << 20);
  std::memcpy(av.rgid, dgid, 16);
  std::memcpy(av.rmac, dmac, 6);
  return av;
}

// mlx5_send_wr_set_dc_addr: copy the AH's AV, then the DCT number, extended bit and key.
theirs rdma_core_set_dc_addr(const theirs& ah_av, uint32_t dctn, uint64_t dc_key) {
  theirs seg;
  std::memcpy(&seg, &ah_av, sizeof(seg));
  seg.dqp_dct |= htobe32(dctn | MLX5_EXTENDED_UD_AV);
  seg.key.dc_key = htobe64(dc_key);
  return seg;
}

void expect_same_bytes(const ours& a, const theirs& b) {
  const auto* x = reinterpret_cast<const uint8_t*>(&a);
  const auto* y = reinterpret_cast<const uint8_t*>(&b);
  for (size_t i = 0; i < sizeof(theirs); ++i) EXPECT_EQ(x[i], y[i]) << "AV byte " << i;
}

TEST(AvSegment, SetDcAvSegMatchesRdmaCoreOnAnyRoute) {
  const theirs route = rdma_core_ib_ah(0x1234, 3, 0x81, 7);
  ours our_route;
  std::memcpy(&our_route, &route, sizeof(route));
  ours seg;
  std::memset(&seg, 0xcc, sizeof(seg));  // the builder must overwrite every byte
  mlx5::set_dc_av_seg(&seg, our_route, 0xabcdef, 0x5623CEAFull);
  expect_same_bytes(seg, rdma_core_set_dc_addr(route, 0xabcdef, 0x5623CEAFull));
}

TEST(AvSegment, InfinibandLidTargetMatchesRdmaCore) {
  DcTarget t;
  t.dct_number = 0x00a1b2;
  t.dc_key = 0x0102030405060708ull;
  t.lid = 0x0042;
  t.sl = 9;
  t.src_path_bits = 0x05;
  t.static_rate = 0;
  const theirs want = rdma_core_set_dc_addr(rdma_core_ib_ah(0x0042, 9, 0x05, 0), 0x00a1b2,
                                            0x0102030405060708ull);
  expect_same_bytes(build_full_av(t), want);
}

TEST(AvSegment, RoceGidTargetMatchesRdmaCore) {
  uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7};
  const uint8_t mac[6] = {0x02, 0x42, 0xac, 0x11, 0x00, 0x07};
  DcTarget t;
  t.dct_number = 0x000777;
  t.dc_key = 0x5623CEAF;
  t.link_layer = LinkLayer::ethernet;
  std::memcpy(t.gid, gid, 16);
  t.sgid_index = 3;
  t.sl = 5;
  t.traffic_class = 0x68;
  t.hop_limit = 64;
  t.udp_sport = 0xc123;
  std::memcpy(t.rmac, mac, 6);
  const theirs want = rdma_core_set_dc_addr(
      rdma_core_roce_ah(gid, 3, 5, 0x68, 64, 0xc123, mac), 0x000777, 0x5623CEAF);
  expect_same_bytes(build_full_av(t), want);
}

TEST(AvSegment, CompactSegmentKeepsExtendedBitClear) {
  const theirs route = rdma_core_ib_ah(7, 1, 0, 0);
  mlx5::mlx5_wqe_av_compact compact_route;
  std::memcpy(&compact_route, &route, sizeof(compact_route));
  mlx5::mlx5_wqe_av_compact seg;
  mlx5::set_dc_av_compact_seg(&seg, compact_route, 0x102, 0x5623CEAF);
  const theirs full = rdma_core_set_dc_addr(route, 0x102, 0x5623CEAF);
  const auto* c = reinterpret_cast<const uint8_t*>(&seg);
  const auto* f = reinterpret_cast<const uint8_t*>(&full);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(c[i], i == 8 ? (f[i] & 0x7f) : f[i]) << "compact AV byte " << i;
  }
}

TEST(AvSegment, DcWriteTakesTwoBasicBlocksFullOneCompact) {
  EXPECT_EQ(mlx5::DC_AV_DS, 3u);
  EXPECT_EQ(mlx5::DC_WRITE_DS, 6u);
  EXPECT_EQ(mlx5::wqebbs_for_ds(mlx5::DC_WRITE_DS), 2u);
  EXPECT_EQ(mlx5::DC_WRITE_COMPACT_DS, 4u);
  EXPECT_EQ(mlx5::wqebbs_for_ds(mlx5::DC_WRITE_COMPACT_DS), 1u);
}

}  // namespace
}  // namespace dissect::mlx5provider
