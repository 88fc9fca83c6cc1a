// The collapsed send CQ (nic::QpAttributes::send_cq_collapsed, the PRM's CQ context cc = 1): every
// CQE lands in entry 0 with its own wqe_counter and the owner bit of its own index, the other
// entries are never written, and a CQ that is not collapsed is unchanged (CQE n in entry n % depth).
// First write_cqe on a bare CqContext, then the host softnic engine behind mini-gda's puts, polled
// as NVSHMEM's ibgda_poll_cq polls: entry 0's wqe_counter only.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "dissect/gda/gda.h"
#include "dissect/mlx5/cqe.h"
#include "engine/execute.h"
#include "dissect/softnic/softnic.h"

namespace gda = dissect::gda;
namespace mlx5 = dissect::mlx5;
namespace nic = dissect::nic;
namespace softnic = dissect::softnic;

namespace {

constexpr uint32_t kDepth = 8;

struct Ring {
  std::vector<mlx5::mlx5_cqe64> cqes = std::vector<mlx5::mlx5_cqe64>(kDepth);
  softnic::CqContext cq{};
  explicit Ring(bool collapsed) {
    for (auto& e : cqes) e.op_own = mlx5::MLX5_CQE_INITIAL_OP_OWN;
    cq = softnic::CqContext{cqes.data(), kDepth, 0x42, 0, collapsed ? 1u : 0u, 0};
  }
};

// CQE n of a QP whose WQEs take 2 WQEBBs: wqe_counter 2n; CQE 13 is an error (syndrome 0x13).
uint8_t write_cqe_number(softnic::CqContext& cq, uint32_t n) {
  mlx5::mlx5_cqe64 cqe{};
  cqe.wqe_counter = mlx5::be16::from_host(static_cast<uint16_t>(2 * n));
  cqe.byte_cnt = mlx5::be32::from_host(8);
  uint8_t opcode = mlx5::MLX5_CQE_REQ;
  if (n == 13) {
    reinterpret_cast<mlx5::mlx5_err_cqe*>(&cqe)->syndrome = mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
    opcode = mlx5::MLX5_CQE_REQ_ERR;
  }
  softnic::write_cqe(cq, cqe, opcode);
  return opcode;
}

TEST(CollapsedCq, ConsecutiveCqesLandInEntryZeroWithTheirWqeCounter) {
  Ring r(true);
  for (uint32_t n = 0; n < 3 * kDepth; ++n) {  // three laps of the owner bit's period
    const uint8_t opcode = write_cqe_number(r.cq, n);
    const mlx5::mlx5_cqe64& e = r.cqes[0];
    ASSERT_EQ(e.wqe_counter.value(), 2 * n) << "CQE " << n;
    EXPECT_EQ(mlx5::cqe_opcode(e.op_own), opcode) << "CQE " << n;
    // The owner bit is CQE n's, as in a ring of kDepth: the producer counter keeps counting.
    EXPECT_EQ(mlx5::cqe_owner(e.op_own), mlx5::cqe_owner_for(n, kDepth)) << "CQE " << n;
    if (n == 13) {
      EXPECT_EQ(reinterpret_cast<const mlx5::mlx5_err_cqe&>(e).syndrome,
                mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
    }
    for (uint32_t i = 1; i < kDepth; ++i) {
      ASSERT_EQ(r.cqes[i].op_own, mlx5::MLX5_CQE_INITIAL_OP_OWN) << "entry " << i << " after CQE " << n;
      ASSERT_EQ(r.cqes[i].wqe_counter.value(), 0) << "entry " << i << " after CQE " << n;
    }
  }
  EXPECT_EQ(r.cq.produced, 3 * kDepth);
  EXPECT_EQ(softnic::cqe_slot(r.cq, 12345), 0u);
}

TEST(CollapsedCq, ANormalCqStillWritesCqeNIntoEntryNModDepth) {
  Ring r(false);
  for (uint32_t n = 0; n < 2 * kDepth + 3; ++n) {
    const uint8_t opcode = write_cqe_number(r.cq, n);
    const mlx5::mlx5_cqe64& e = r.cqes[n % kDepth];
    ASSERT_EQ(e.wqe_counter.value(), 2 * n) << "CQE " << n;
    EXPECT_EQ(mlx5::cqe_opcode(e.op_own), opcode) << "CQE " << n;
    EXPECT_TRUE(mlx5::cqe_is_sw_owned(e.op_own, n, kDepth)) << "CQE " << n;
    if (n == 0) {
      EXPECT_EQ(r.cqes[1].op_own, mlx5::MLX5_CQE_INITIAL_OP_OWN);
    }
  }
  EXPECT_EQ(softnic::cqe_slot(r.cq, 11), 11u % kDepth);
}

// The host softnic: a requester whose send CQ is collapsed, a deep ring (64 WQEBBs, so 10 laps),
// mini-gda's puts, every one signalled, in bursts of 16 doorbells; each burst is awaited the way
// NVSHMEM waits (entry 0's wqe_counter reaches the burst's last WQE) and retired by hand, since
// mini-gda's own poll walks a ring.
TEST(CollapsedCq, HostEngineCompletesABurstIntoEntryZero) {
  constexpr uint32_t kWqebbs = 64, kBurst = 16, kBursts = 40, kSlot = 64;
  constexpr uint32_t n = kBurst * kBursts;
  softnic::SoftNic nic_model;
  auto pd = nic_model.create_pd();
  std::vector<uint8_t> src(size_t{n} * kSlot), dst(src.size(), 0);
  const nic::MemoryRegion src_mr = pd->register_memory(src.data(), src.size(), nic::ACCESS_ALL);
  const nic::MemoryRegion dst_mr = pd->register_memory(dst.data(), dst.size(), nic::ACCESS_ALL);
  nic::QpAttributes a;
  a.sq_wqebbs = kWqebbs;
  a.send_cq_collapsed = true;
  auto requester = pd->create_qp(a);
  auto responder = pd->create_qp(nic::QpAttributes{});
  requester->connect(responder->endpoint());
  responder->connect(requester->endpoint());
  const nic::QpHandle qp = requester->handle();
  ASSERT_EQ(qp.send_cq.collapsed, 1u);
  ASSERT_EQ(qp.send_cq.cqe_count, kWqebbs);
  EXPECT_EQ(responder->handle().send_cq.collapsed, 0u);
  EXPECT_EQ(nic_model.qp_context(qp.qpn).send_cq.collapsed, 1u);

  using Policy = gda::ordering::system_fence;
  // The word the engine publishes last (wqe_counter | signature | op_own), acquired as pollers do.
  const uint32_t* tail_word = reinterpret_cast<const uint32_t*>(qp.send_cq.cqes) + 15;
  for (uint32_t burst = 0; burst < kBursts; ++burst) {
    uint64_t end = 0;
    for (uint32_t k = 0; k < kBurst; ++k) {
      const uint32_t i = burst * kBurst + k;
      uint8_t* s = src.data() + size_t{i} * kSlot;
      for (uint32_t b = 0; b < kSlot; ++b) s[b] = static_cast<uint8_t>(i * 7 + b) | 1;
      const gda::WriteRequest r{reinterpret_cast<uintptr_t>(s), src_mr.lkey, kSlot,
                                reinterpret_cast<uintptr_t>(dst.data() + size_t{i} * kSlot),
                                dst_mr.rkey};
      ASSERT_EQ(gda::put<Policy>(qp, r, gda::Completion::signaled, &end), gda::Status::ok) << i;
    }
    // One WQEBB per WQE: the burst's last WQE is end - 1, and its CQE is the (end)-th.
    const uint16_t last = static_cast<uint16_t>(end - 1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {
      const uint32_t tail = __atomic_load_n(tail_word, __ATOMIC_ACQUIRE);
      if (mlx5::be16::from_raw(static_cast<uint16_t>(tail & 0xffff)).value() == last) break;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < deadline);
    const mlx5::mlx5_cqe64 e = qp.send_cq.cqes[0];
    ASSERT_EQ(e.wqe_counter.value(), last) << "burst " << burst << ": entry 0 never reached it";
    EXPECT_EQ(mlx5::cqe_opcode(e.op_own), mlx5::MLX5_CQE_REQ) << "burst " << burst;
    EXPECT_EQ(mlx5::cqe_owner(e.op_own), mlx5::cqe_owner_for(end - 1, kWqebbs)) << "burst " << burst;
    qp.state->cons_idx = end;  // retired, as NVSHMEM's poll advances its cons_idx
  }
  for (uint32_t i = 1; i < kWqebbs; ++i) {
    ASSERT_EQ(qp.send_cq.cqes[i].op_own, mlx5::MLX5_CQE_INITIAL_OP_OWN) << "entry " << i;
  }
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < kSlot; ++b) {
      ASSERT_EQ(dst[size_t{i} * kSlot + b], static_cast<uint8_t>(i * 7 + b) | 1) << i << " " << b;
    }
  }
  const auto c = nic_model.counters(qp.qpn);
  EXPECT_EQ(c.cqes_written, n);
  EXPECT_EQ(c.error_cqes, 0u);
  requester.reset();
  responder.reset();
  pd->deregister_memory(src_mr);
  pd->deregister_memory(dst_mr);
}

}  // namespace
