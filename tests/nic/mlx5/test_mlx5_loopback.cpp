// On a machine with an mlx5 NIC: open it, create host-resident QPs through Route B, connect two of
// them to each other on one port (loopback) and check the handles the submitter would use. Also
// run the ibverbs provider's write chain through the same loopback.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "dissect/providers/ibverbs/endpoint.h"
#include "dissect/providers/mlx5/mlx5_provider.h"

namespace dissect::mlx5provider {
namespace {

TEST(Mlx5Nic, OpensAndCreatesHostQueues) {
  const auto devices = list_mlx5_devices();
  if (devices.empty()) GTEST_SKIP() << "RDMA devices present, but none is mlx5";
  Mlx5Options options;
  options.device = devices.front();
  options.doorbell = DoorbellMode::cpu_assisted;  // no GPU needed
  auto nic = open_mlx5_nic(options);
  auto pd = nic->create_pd();
  nic::QpAttributes attributes;
  attributes.sq_wqebbs = 256;
  auto a = pd->create_qp(attributes);
  auto b = pd->create_qp(attributes);
  const nic::QpHandle h = a->handle();
  EXPECT_NE(h.sq.buffer, nullptr);
  EXPECT_GE(h.sq.wqebb_count, 256u);
  EXPECT_EQ(h.sq.wqebb_count & (h.sq.wqebb_count - 1), 0u);
  EXPECT_NE(h.doorbell, nullptr);
  EXPECT_NE(h.send_cq.cqes, nullptr);
  a->connect(b->endpoint());
  b->connect(a->endpoint());
}

TEST(IbverbsEndpoint, LoopbackWriteChain) {
  ibverbs::EndpointOptions options;
  ibverbs::Endpoint a(options);
  ibverbs::Endpoint b(options);
  a.connect(b.address());
  b.connect(a.address());
  std::vector<uint8_t> source(4096, 0x5a), target(4096, 0);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  ibv_mr* src = a.register_memory(source.data(), source.size(), access);
  ibv_mr* dst = b.register_memory(target.data(), target.size(), access);
  std::vector<ibverbs::RdmaWrite> writes;
  for (int i = 0; i < 4; ++i) {
    writes.push_back({reinterpret_cast<uint64_t>(source.data()) + i * 1024u, 1024, src->lkey,
                      reinterpret_cast<uint64_t>(target.data()) + i * 1024u, dst->rkey});
  }
  const uint64_t last = a.post_write_chain(writes);
  std::vector<uint64_t> done;
  for (int spin = 0; spin < 10000000 && done.empty(); ++spin) done = a.poll(1);
  ASSERT_EQ(done.size(), 1u) << "no completion for the chain";
  EXPECT_EQ(done[0], last);
  EXPECT_EQ(std::memcmp(source.data(), target.data(), target.size()), 0);
  a.deregister_memory(src);
  b.deregister_memory(dst);
}

}  // namespace
}  // namespace dissect::mlx5provider
