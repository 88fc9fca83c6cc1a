// A WQE aimed at a responder that is gone (its QP destroyed, its whole SoftNic destroyed) or not in
// RTS completes with TRANSPORT_RETRY_EXC_ERR, one aimed at a deregistered region with
// REMOTE_ACCESS_ERR, and touches nothing: no write lands, no receive CQE,
// no use of freed memory (the ASan build runs these).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace gda = dissect::gda;
namespace m = dissect::mlx5;
namespace nic = dissect::nic;
using dissect::softnic::SoftNic;
using Policy = gda::ordering::system_release_store;
constexpr auto kExclusive = gda::Sharing::exclusive;

namespace {

constexpr uint8_t kCanary = 0x5c;

struct Side {
  std::unique_ptr<SoftNic> softnic = std::make_unique<SoftNic>();
  std::unique_ptr<nic::ProtectionDomain> pd = softnic->create_pd();
  std::vector<uint8_t> buffer = std::vector<uint8_t>(4096, kCanary);
  nic::MemoryRegion mr = pd->register_memory(buffer.data(), buffer.size(), nic::ACCESS_ALL);
  std::unique_ptr<nic::QueuePair> qp;
  explicit Side(uint32_t rq_wqes = 4) {
    nic::QpAttributes attributes;
    attributes.rq_wqes = rq_wqes;
    qp = pd->create_qp(attributes);
  }
  void destroy() {
    qp.reset();
    pd->deregister_memory(mr);
    pd.reset();
    softnic.reset();
  }
};

void connect(Side& a, Side& b) {
  a.qp->connect(b.qp->endpoint());
  b.qp->connect(a.qp->endpoint());
}

gda::WriteRequest write_to(const Side& from, const Side& to, uint64_t remote_address) {
  return {reinterpret_cast<uintptr_t>(from.buffer.data()), from.mr.lkey, 64, remote_address, to.mr.rkey};
}

// Posts one signalled WRITE (WITH IMM when `immediate`) and returns the syndrome it completed with
// (0 = success).
uint8_t post_and_wait(const nic::QpHandle& qp, const gda::WriteRequest& request, bool immediate) {
  uint64_t end = 0;
  const gda::Status posted =
      immediate ? gda::put_with_immediate<Policy>(qp, request, m::be32::from_host(7), gda::Completion::signaled, &end)
                : gda::put<Policy>(qp, request, gda::Completion::signaled, &end);
  EXPECT_EQ(posted, gda::Status::ok);
  const gda::Status done = gda::wait_completion<Policy, kExclusive>(qp, end);
  if (done == gda::Status::ok) return 0;
  EXPECT_EQ(done, gda::Status::cq_error);
  return static_cast<uint8_t>(nic::send_queue_error_syndrome(qp.state->error));
}

class DestroyedResponder : public ::testing::TestWithParam<bool> {};

TEST_P(DestroyedResponder, ItsQpDestroyedAWriteFailsAndLandsNothing) {
  const bool immediate = GetParam();
  Side requester, responder;
  connect(requester, responder);
  // The responder's buffer stays alive (a user's memory); only its QP goes.
  std::vector<uint8_t>& target = responder.buffer;
  const uint64_t address = reinterpret_cast<uintptr_t>(target.data());
  const auto request = write_to(requester, responder, address);
  responder.qp.reset();
  EXPECT_EQ(post_and_wait(requester.qp->handle(), request, immediate),
            m::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
  for (uint8_t b : target) ASSERT_EQ(b, kCanary) << "the write landed on a destroyed responder";
}

TEST_P(DestroyedResponder, ItsWholeNicDestroyedAWriteFailsWithoutTouchingItsTables) {
  const bool immediate = GetParam();
  Side requester;
  auto responder = std::make_unique<Side>();
  connect(requester, *responder);
  std::vector<uint8_t> target(4096, kCanary);
  const auto request = write_to(requester, *responder, reinterpret_cast<uintptr_t>(target.data()));
  responder->destroy();
  responder.reset();
  EXPECT_EQ(post_and_wait(requester.qp->handle(), request, immediate),
            m::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
}

INSTANTIATE_TEST_SUITE_P(Softnic, DestroyedResponder, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "WriteWithImmediate" : "Write"; });

TEST(UnconnectedResponder, AResponderStillInResetDoesNotAnswer) {
  Side requester, responder;
  requester.qp->connect(responder.qp->endpoint());  // the responder never connects: RESET
  const uint64_t address = reinterpret_cast<uintptr_t>(responder.buffer.data());
  EXPECT_EQ(post_and_wait(requester.qp->handle(), write_to(requester, responder, address), false),
            m::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
  for (uint8_t b : responder.buffer) ASSERT_EQ(b, kCanary);
}

// The responder's region deregistered: the next WRITE with its key, which succeeded a moment
// before, fails and lands nothing.
TEST(DeregisteredRegion, AWriteAfterDeregisterMemoryFailsAndLandsNothing) {
  Side requester, responder;
  connect(requester, responder);
  const uint64_t address = reinterpret_cast<uintptr_t>(responder.buffer.data());
  std::memset(requester.buffer.data(), 0x11, 64);
  ASSERT_EQ(post_and_wait(requester.qp->handle(), write_to(requester, responder, address), false), 0);
  ASSERT_EQ(responder.buffer[0], 0x11);
  responder.pd->deregister_memory(responder.mr);
  std::memset(requester.buffer.data(), 0x22, 64);
  EXPECT_EQ(post_and_wait(requester.qp->handle(), write_to(requester, responder, address), false),
            m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(responder.buffer[i], 0x11) << "byte " << i;
}

// The peer's engine keeps serving after a disconnect paused it: a second pair on the requester's
// NIC still works.
TEST(DestroyedResponder, TheRequestersEngineRunsOnAfterTheDisconnect) {
  Side requester, responder;
  connect(requester, responder);
  nic::QpAttributes attributes;
  auto second = requester.pd->create_qp(attributes);
  auto second_peer = requester.pd->create_qp(attributes);
  second->connect(second_peer->endpoint());
  second_peer->connect(second->endpoint());
  responder.qp.reset();
  EXPECT_TRUE(requester.softnic->running());
  std::vector<uint8_t> source(64, 0x11);
  auto source_mr = requester.pd->register_memory(source.data(), source.size(), nic::ACCESS_ALL);
  const uint64_t address = reinterpret_cast<uintptr_t>(requester.buffer.data());
  gda::WriteRequest r{reinterpret_cast<uintptr_t>(source.data()), source_mr.lkey, 64, address,
                      requester.mr.rkey};
  EXPECT_EQ(post_and_wait(second->handle(), r, false), 0);
  EXPECT_EQ(0, std::memcmp(requester.buffer.data(), source.data(), 64));
}

}  // namespace
