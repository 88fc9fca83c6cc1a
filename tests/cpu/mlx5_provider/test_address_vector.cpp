// DC address vectors against the bytes rdma-core's mlx5_create_ah + mlx5_send_wr_set_dc_addr
// produce, offset by offset (docs/mlx5_sources.md §1.9).
#include <gtest/gtest.h>

#include <cstring>

#include "dissect/providers/mlx5/address_vector.h"

namespace dissect::mlx5provider {
namespace {

const uint8_t* bytes(const void* p) { return static_cast<const uint8_t*>(p); }

TEST(AddressVector, FullInfinibandNoGrh) {
  DcTarget t;
  t.dct_number = 0x123456;
  t.dc_key = 0x0102030405060708ull;
  t.lid = 0xbeef;
  t.sl = 0xa;
  t.src_path_bits = 0x85;
  const mlx5::mlx5_wqe_av av = build_full_av(t);
  const uint8_t* b = bytes(&av);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], i + 1) << "dc_key byte " << i;
  EXPECT_EQ(b[8], 0x80);  // MLX5_EXTENDED_UD_AV
  EXPECT_EQ(b[9], 0x12);
  EXPECT_EQ(b[10], 0x34);
  EXPECT_EQ(b[11], 0x56);
  EXPECT_EQ(b[12], 0x0a);  // stat_rate_sl: rate 0, sl in bits 3..0
  EXPECT_EQ(b[13], 0x05);  // fl_mlid: src_path_bits & 0x7f
  EXPECT_EQ(b[14], 0xbe);
  EXPECT_EQ(b[15], 0xef);
  for (int i = 16; i < 48; ++i) EXPECT_EQ(b[i], 0) << "byte " << i;  // no GRH, no MAC
}

TEST(AddressVector, FullInfinibandWithGrh) {
  DcTarget t;
  t.dct_number = 1;
  t.use_grh = true;
  t.sgid_index = 0x3;
  t.flow_label = 0x12345;
  t.traffic_class = 0x20;
  t.hop_limit = 0x40;
  for (int i = 0; i < 16; ++i) t.gid[i] = static_cast<uint8_t>(i + 0x10);
  const mlx5::mlx5_wqe_av av = build_full_av(t);
  const uint8_t* b = bytes(&av);
  EXPECT_EQ(b[26], 0x20);  // tclass
  EXPECT_EQ(b[27], 0x40);  // hop_limit
  // grh_gid_fl = 1 << 30 | sgid_index << 20 | flow_label = 0x40312345.
  EXPECT_EQ(b[28], 0x40);
  EXPECT_EQ(b[29], 0x31);
  EXPECT_EQ(b[30], 0x23);
  EXPECT_EQ(b[31], 0x45);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(b[32 + i], i + 0x10);
}

TEST(AddressVector, FullRoce) {
  DcTarget t;
  t.dct_number = 0xabcdef;
  t.link_layer = LinkLayer::ethernet;
  t.sl = 0x5;
  t.static_rate = 0x7;
  t.sgid_index = 1;
  t.hop_limit = 64;
  t.udp_sport = 0xc0de;
  const uint8_t mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
  std::memcpy(t.rmac, mac, 6);
  t.gid[10] = 0xff;
  t.gid[11] = 0xff;
  t.gid[15] = 0x07;
  const mlx5::mlx5_wqe_av av = build_full_av(t);
  const uint8_t* b = bytes(&av);
  EXPECT_EQ(b[8], 0x80);
  EXPECT_EQ(b[9], 0xab);
  EXPECT_EQ(b[12], 0x7a);  // rate << 4 | (sl & 7) << 1
  EXPECT_EQ(b[13], 0x00);
  EXPECT_EQ(b[14], 0xc0);  // rlid carries the UDP source port
  EXPECT_EQ(b[15], 0xde);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b[20 + i], mac[i]);
  EXPECT_EQ(b[27], 64);
  // grh bit stays 0 on RoCE: grh_gid_fl = sgid_index << 20.
  EXPECT_EQ(b[28], 0x00);
  EXPECT_EQ(b[29], 0x10);
  EXPECT_EQ(b[42], 0xff);
  EXPECT_EQ(b[47], 0x07);
}

TEST(AddressVector, RoceFlowLabelPicksUdpPort) {
  EXPECT_EQ(flow_label_to_udp_sport(0), 0xC000);
  EXPECT_EQ(flow_label_to_udp_sport(0x00001), 0xC001);
  EXPECT_EQ(flow_label_to_udp_sport(0x04000), 0xC001);  // bit 14 folds onto bit 0
  DcTarget t;
  t.link_layer = LinkLayer::ethernet;
  t.flow_label = 0x4003;
  const mlx5::mlx5_wqe_av av = build_full_av(t);
  EXPECT_EQ(av.rlid.value(), 0xC002);
}

TEST(AddressVector, CompactIsFirstSixteenBytesWithoutExtendedBit) {
  DcTarget t;
  t.dct_number = 0x000102;
  t.dc_key = 0x5623CEAFull;
  t.lid = 7;
  t.sl = 1;
  const mlx5::mlx5_wqe_av full = build_full_av(t);
  const mlx5::mlx5_wqe_av_compact compact = build_compact_av(t);
  const uint8_t* f = bytes(&full);
  const uint8_t* c = bytes(&compact);
  EXPECT_EQ(c[8], 0x00);  // extended bit clear
  EXPECT_EQ(f[8], 0x80);
  for (int i = 0; i < 16; ++i) {
    if (i != 8) {
      EXPECT_EQ(c[i], f[i]) << "byte " << i;
    }
  }
  EXPECT_EQ(c[11], 0x02);
  EXPECT_EQ(c[15], 7);
}

TEST(AddressVector, CompactRefusesGrh) {
  DcTarget roce;
  roce.link_layer = LinkLayer::ethernet;
  EXPECT_THROW(build_compact_av(roce), std::invalid_argument);
  DcTarget routed;
  routed.use_grh = true;
  EXPECT_THROW(build_compact_av(routed), std::invalid_argument);
}

}  // namespace
}  // namespace dissect::mlx5provider
