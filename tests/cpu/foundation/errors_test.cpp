// Bad WQEs: each yields the PRM's error CQE, the QP enters the error state, later WQEs flush, and
// no byte outside what a valid WQE names is ever written.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "dissect/gda/gda.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
namespace m = dissect::mlx5;
using dissect::testing::fill_pattern;
using dissect::testing::Loopback;
using Policy = gda::ordering::system_release_store;
constexpr auto kExclusive = gda::Sharing::exclusive;

namespace {

constexpr uint8_t kCanary = 0xc3;

struct ErrorCase {
  const char* name;
  uint8_t syndrome;
  // Builds the bad WQE at `index` (one WQEBB) for the loopback `lb`.
  void (*build)(Loopback& lb, const dissect::nic::QpHandle& qp, uint64_t index);
};

gda::WriteRequest good_write(Loopback& lb) {
  return {lb.source_address(), lb.source_mr.lkey, 256, lb.destination_address(), lb.destination_mr.rkey};
}

const ErrorCase kCases[] = {
    {"bad lkey", m::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       auto r = good_write(lb);
       r.lkey ^= 0x5500;
       gda::write_rdma_write_wqe(qp, i, r, gda::Completion::signaled);
     }},
    {"local address out of bounds", m::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       auto r = good_write(lb);
       r.local_address = lb.source_address(lb.source.size() - 100);
       gda::write_rdma_write_wqe(qp, i, r, gda::Completion::signaled);
     }},
    {"bad rkey", m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       auto r = good_write(lb);
       r.rkey += 1;
       gda::write_rdma_write_wqe(qp, i, r, gda::Completion::signaled);
     }},
    {"remote address out of bounds", m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       auto r = good_write(lb);
       r.remote_address = lb.destination_address(lb.destination.size() - 255);
       gda::write_rdma_write_wqe(qp, i, r, gda::Completion::signaled);
     }},
    {"remote address below the region", m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       auto r = good_write(lb);
       r.remote_address = lb.destination_address() - 1;
       gda::write_rdma_write_wqe(qp, i, r, gda::Completion::signaled);
     }},
    {"no remote-write permission", m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       auto read_only = lb.pd->register_memory(lb.destination.data(), lb.destination.size(),
                                               dissect::nic::ACCESS_LOCAL_WRITE |
                                                   dissect::nic::ACCESS_REMOTE_READ);
       auto r = good_write(lb);
       r.rkey = read_only.rkey;
       gda::write_rdma_write_wqe(qp, i, r, gda::Completion::signaled);
     }},
    {"bad opcode", m::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       gda::write_rdma_write_wqe(qp, i, good_write(lb), gda::Completion::signaled);
       gda::write_ctrl(qp, i, 0x1e, m::RC_WRITE_DS, gda::Completion::signaled, m::be32{0});
     }},
    {"ds of zero", m::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       gda::write_rdma_write_wqe(qp, i, good_write(lb), gda::Completion::signaled);
       gda::write_ctrl(qp, i, m::MLX5_OPCODE_RDMA_WRITE, 0, gda::Completion::signaled, m::be32{0});
     }},
    {"ds too short for a write", m::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       gda::write_rdma_write_wqe(qp, i, good_write(lb), gda::Completion::signaled);
       gda::write_ctrl(qp, i, m::MLX5_OPCODE_RDMA_WRITE, 2, gda::Completion::signaled, m::be32{0});
     }},
    {"inline length beyond ds", m::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       const uint8_t payload[12] = {1, 2, 3};
       gda::InlineWriteRequest r{payload, 12, lb.destination_address(), lb.destination_mr.rkey};
       gda::write_rdma_write_inline_wqe(qp, i, r, gda::Completion::signaled);
       const auto header = m::be32::from_host(40 | m::MLX5_INLINE_SEG);
       std::memcpy(qp.sq.segment(i, 2), &header, 4);
     }},
    {"stale WQE index", m::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       gda::write_rdma_write_wqe(qp, i, good_write(lb), gda::Completion::signaled);
       m::mlx5_wqe_ctrl_seg stale;
       m::set_ctrl_seg(&stale, static_cast<uint16_t>(i + 1000), m::MLX5_OPCODE_RDMA_WRITE, 0, qp.qpn,
                       m::MLX5_WQE_CTRL_CQ_UPDATE, 3, 0, m::be32{0});
       std::memcpy(qp.sq.wqebb(i), &stale, sizeof stale);
     }},
    {"misaligned atomic", m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
     [](Loopback& lb, const auto& qp, uint64_t i) {
       gda::FetchAddRequest r{lb.destination_address(4), lb.destination_mr.rkey, 1, lb.source_address(),
                              lb.source_mr.lkey};
       gda::write_fetch_add_wqe(qp, i, r, gda::Completion::signaled);
     }},
};

class ErrorCqe : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorCqe, YieldsTheSyndromeAndFlushesLaterWqes) {
  const ErrorCase& c = GetParam();
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  fill_pattern(lb.source.data(), lb.source.size(), 3);
  std::memset(lb.destination.data(), kCanary, lb.destination.size());

  // One good write first: it must land, and nothing after it may.
  uint64_t end = 0;
  gda::WriteRequest first{lb.source_address(), lb.source_mr.lkey, 16, lb.destination_address(1024),
                          lb.destination_mr.rkey};
  ASSERT_EQ(gda::put<Policy>(qp, first, gda::Completion::signaled, &end), gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::ok);

  uint64_t base = 0;
  ASSERT_EQ((gda::reserve<Policy, kExclusive>(qp, 1, &base)), gda::Status::ok);
  c.build(lb, qp, base);
  ASSERT_EQ((gda::publish_and_ring<Policy, kExclusive>(qp, base, 1)), gda::Status::ok);
  // Two valid WQEs behind it: both must flush.
  for (int k = 0; k < 2; ++k) {
    gda::WriteRequest later{lb.source_address(), lb.source_mr.lkey, 16, lb.destination_address(2048),
                            lb.destination_mr.rkey};
    ASSERT_EQ(gda::put<Policy>(qp, later, gda::Completion::signaled, &end), gda::Status::ok);
  }
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error) << c.name;

  const uint32_t error = qp.state->error;
  EXPECT_EQ(dissect::nic::send_queue_error_syndrome(error), c.syndrome)
      << c.name << ": got " << m::syndrome_name(error & 0xff);
  EXPECT_EQ(qp.state->error_wqe, base);
  // Every CQE after the first error is a flush error for the later WQEs.
  const auto& cq = qp.send_cq;
  for (uint64_t n = 2; n < 4; ++n) {
    const auto* e = reinterpret_cast<const m::mlx5_err_cqe*>(&cq.cqes[n & (cq.cqe_count - 1)]);
    // The wait returns at the first error CQE; the engine may still be writing the flushes.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!m::cqe_is_sw_owned(__atomic_load_n(&e->op_own, __ATOMIC_ACQUIRE), n, cq.cqe_count) &&
           std::chrono::steady_clock::now() < deadline) {
    }
    EXPECT_TRUE(m::cqe_is_sw_owned(e->op_own, n, cq.cqe_count)) << c.name << " CQE " << n;
    EXPECT_EQ(m::cqe_opcode(e->op_own), m::MLX5_CQE_REQ_ERR) << c.name;
    EXPECT_EQ(e->syndrome, m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR) << c.name;
  }
  for (size_t i = 0; i < lb.destination.size(); ++i) {
    if (i >= 1024 && i < 1040) continue;
    ASSERT_EQ(lb.destination[i], kCanary) << c.name << ": byte " << i << " was written";
  }
  EXPECT_EQ(0, std::memcmp(lb.destination.data() + 1024, lb.source.data(), 16));
}

INSTANTIATE_TEST_SUITE_P(Softnic, ErrorCqe, ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(ErrorCqe, WriteWithImmediateWithoutAReceiveWqeIsAnRnrError) {
  dissect::nic::QpAttributes attributes;
  attributes.rq_wqes = 4;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  std::memset(lb.destination.data(), kCanary, lb.destination.size());
  uint64_t end = 0;
  gda::WriteRequest r{lb.source_address(), lb.source_mr.lkey, 32, lb.destination_address(),
                      lb.destination_mr.rkey};
  ASSERT_EQ(gda::put_with_immediate<Policy>(qp, r, m::be32::from_host(1), gda::Completion::signaled, &end),
            gda::Status::ok);
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error);
  EXPECT_EQ(dissect::nic::send_queue_error_syndrome(qp.state->error), m::MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
  for (uint8_t b : lb.destination) ASSERT_EQ(b, kCanary);
}

TEST(ErrorCqe, KeysOfAnotherProtectionDomainAreRejected) {
  Loopback lb({}, 4096);
  auto other_pd = lb.softnic->create_pd();
  std::vector<uint8_t> foreign(4096);
  auto foreign_mr = other_pd->register_memory(foreign.data(), foreign.size(), dissect::nic::ACCESS_ALL);
  const auto qp = lb.qp();
  uint64_t end = 0;
  gda::WriteRequest r{reinterpret_cast<uintptr_t>(foreign.data()), foreign_mr.lkey, 32,
                      lb.destination_address(), lb.destination_mr.rkey};
  ASSERT_EQ(gda::put<Policy>(qp, r, gda::Completion::signaled, &end), gda::Status::ok);
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error);
  EXPECT_EQ(dissect::nic::send_queue_error_syndrome(qp.state->error), m::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
}

TEST(ErrorCqe, UnsignaledFailuresStillReportAnError) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  uint64_t end = 0;
  gda::WriteRequest r{lb.source_address(), lb.source_mr.lkey, 32, lb.destination_address(),
                      lb.destination_mr.rkey + 1};
  ASSERT_EQ(gda::put<Policy>(qp, r, gda::Completion::unsignaled, &end), gda::Status::ok);
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error);
  EXPECT_EQ(dissect::nic::send_queue_error_syndrome(qp.state->error), m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
}

}  // namespace
