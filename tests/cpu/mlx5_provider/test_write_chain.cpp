// The ibverbs provider's write chain: linked, ids in order, only the last signaled.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include "dissect/providers/ibverbs/endpoint.h"

namespace dissect::ibverbs {
namespace {

TEST(WriteChain, LinksAndSignalsOnlyTheLast) {
  std::vector<RdmaWrite> writes = {
      {0x1000, 64, 11, 0x9000, 22},
      {0x2000, 128, 11, 0xa000, 22},
      {0x3000, 8, 11, 0xb000, 22, true, 0x01020304},
  };
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  build_write_chain(writes, 100, wrs, sges);
  ASSERT_EQ(wrs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(wrs[i].wr_id, 100 + i);
    EXPECT_EQ(wrs[i].num_sge, 1);
    EXPECT_EQ(wrs[i].sg_list, &sges[i]);
    EXPECT_EQ(sges[i].addr, writes[i].local_address);
    EXPECT_EQ(sges[i].length, writes[i].length);
    EXPECT_EQ(sges[i].lkey, 11u);
    EXPECT_EQ(wrs[i].wr.rdma.remote_addr, writes[i].remote_address);
    EXPECT_EQ(wrs[i].wr.rdma.rkey, 22u);
    EXPECT_EQ(wrs[i].next, i + 1 < 3 ? &wrs[i + 1] : nullptr);
    EXPECT_EQ(wrs[i].send_flags, i == 2 ? unsigned(IBV_SEND_SIGNALED) : 0u);
  }
  EXPECT_EQ(wrs[0].opcode, IBV_WR_RDMA_WRITE);
  EXPECT_EQ(wrs[2].opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
  EXPECT_EQ(wrs[2].imm_data, htonl(0x01020304));
}

TEST(WriteChain, EmptyChainIsEmpty) {
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  build_write_chain({}, 1, wrs, sges);
  EXPECT_TRUE(wrs.empty());
}

}  // namespace
}  // namespace dissect::ibverbs
