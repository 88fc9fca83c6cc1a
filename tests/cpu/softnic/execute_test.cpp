// The execute path (src/softnic/engine/execute.h) on one synthetic QP pair, no engine thread: the regressions
// of issue 13's NIC-model items, each from the reproducer.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/execute.h"
#include "support/nic_model_rig.h"
#include "support/nic_model_wqes.h"

namespace m = dissect::mlx5;
namespace sn = dissect::softnic;
using dissect::testing::NicModelRig;
namespace t = dissect::testing;

namespace {

constexpr uint32_t kQpn = sn::QPN_BASE;

std::vector<uint8_t> snapshot(const NicModelRig& rig) {
  return std::vector<uint8_t>(rig.base, rig.base + rig.arena_bytes);
}

// Offsets of the arena that differ from `before`, outside the send CQ (where CQEs are expected).
std::vector<uint64_t> changed_outside_send_cq(const NicModelRig& rig, const std::vector<uint8_t>& before) {
  std::vector<uint64_t> changed;
  for (uint64_t i = 0; i < rig.arena_bytes; ++i) {
    const bool in_cq = i >= rig.send_cq.offset && i < rig.send_cq.offset + rig.send_cq.bytes;
    if (!in_cq && rig.base[i] != before[i]) changed.push_back(i);
  }
  return changed;
}

// Runs the engine over everything announced; returns the WQEs it executed.
uint32_t service(NicModelRig& rig) { return sn::service_qp(rig.requester(), rig.nic, 1000); }

TEST(ExecuteFetchAdd, AMisalignedLocalResultAddressIsALocalProtectionErrorAndTouchesNothing) {
  NicModelRig rig;
  t::put_fetch_add(rig.ring(), 0, kQpn, rig.region_address(0, 0x40), t::KEY_REGION0_ALL, 1,
                   rig.region_address(0, 0x04), t::KEY_REGION0_ALL);
  rig.ring_doorbell(1);
  const std::vector<uint8_t> rung = snapshot(rig);
  EXPECT_EQ(service(rig), 1u);
  EXPECT_EQ(rig.send_cqe_opcode(0), m::MLX5_CQE_REQ_ERR);
  EXPECT_EQ(rig.send_cqe_syndrome(0), m::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
  EXPECT_EQ(rig.requester().state, sn::QP_STATE_ERROR);
  EXPECT_EQ(changed_outside_send_cq(rig, rung), std::vector<uint64_t>{})
      << "the remote target or the result slot was written";
}

TEST(ExecuteFetchAdd, AnAlignedResultAddressStillWorks) {
  NicModelRig rig;
  uint64_t target = 41;
  std::memcpy(rig.at(rig.region[0], 0x40), &target, 8);
  t::put_fetch_add(rig.ring(), 0, kQpn, rig.region_address(0, 0x40), t::KEY_REGION0_ALL, 1,
                   rig.region_address(0, 0x08), t::KEY_REGION0_ALL);
  rig.ring_doorbell(1);
  EXPECT_EQ(service(rig), 1u);
  EXPECT_EQ(rig.send_cqe_opcode(0), m::MLX5_CQE_REQ);
  uint64_t old = 0, now = 0;
  std::memcpy(&old, rig.at(rig.region[0], 0x08), 8);
  std::memcpy(&now, rig.at(rig.region[0], 0x40), 8);
  EXPECT_EQ(old, 41u);
  EXPECT_EQ(now, 42u);
}

// The reproducer: 256 B from region+0 to region+64 of one ACCESS_ALL region.
TEST(ExecuteWrite, OverlappingSourceAndDestinationMoveAsMemmove) {
  for (const auto& [from, to] : {std::pair<uint64_t, uint64_t>{0, 64}, {64, 0}, {3, 8}, {8, 3},
                                 {0, 1}, {1, 0}, {16, 16}}) {
    NicModelRig rig;
    std::vector<uint8_t> expected(rig.at(rig.region[0]), rig.at(rig.region[0]) + rig.kRegionBytes);
    std::memmove(expected.data() + to, expected.data() + from, 256);
    t::put_write(rig.ring(), 0, kQpn, rig.region_address(0, from), t::KEY_REGION0_ALL, 256,
                 rig.region_address(0, to), t::KEY_REGION0_ALL);
    rig.ring_doorbell(1);
    EXPECT_EQ(service(rig), 1u);
    EXPECT_EQ(rig.send_cqe_opcode(0), m::MLX5_CQE_REQ) << from << " -> " << to;
    EXPECT_EQ(std::vector<uint8_t>(rig.at(rig.region[0]), rig.at(rig.region[0]) + rig.kRegionBytes),
              expected)
        << from << " -> " << to;
  }
}

// The device's copy loop, run on the host: the same bytes as memmove for every alignment, length
// and overlap in both directions.
TEST(MoveBytesWordwise, EqualsMemmoveForEveryOverlap) {
  constexpr int kSpan = 96;
  alignas(8) uint8_t reference[kSpan + 64];
  alignas(8) uint8_t moved[kSpan + 64];
  for (int source = 0; source < 24; ++source) {
    for (int destination = 0; destination < 24; ++destination) {
      for (int length : {0, 1, 7, 8, 9, 15, 16, 17, 31, 40, 64}) {
        for (int i = 0; i < kSpan + 64; ++i) reference[i] = moved[i] = static_cast<uint8_t>(i * 7 + 1);
        std::memmove(reference + destination, reference + source, length);
        sn::move_bytes_wordwise(moved + destination, moved + source, length);
        ASSERT_EQ(0, std::memcmp(reference, moved, sizeof moved))
            << source << " -> " << destination << ", " << length << " B";
      }
    }
  }
}

// The reproducer: NOP with ds = 63 (16 WQEBBs) announced by a doorbell of +1.
TEST(ExecuteWqe, AWqeLongerThanTheDoorbellAnnouncedIsAnErrorAndLaterWqesFlush) {
  NicModelRig rig;
  t::put_nop(rig.ring(), 0, kQpn, 63);
  rig.ring_doorbell(1);
  EXPECT_EQ(service(rig), 1u);
  EXPECT_EQ(rig.requester().sq_consumer, 1u) << "the WQE consumed WQEBBs no doorbell announced";
  ASSERT_EQ(rig.requester().send_cq.produced, 1u);
  EXPECT_EQ(rig.send_cqe_opcode(0), m::MLX5_CQE_REQ_ERR);
  EXPECT_EQ(rig.send_cqe_syndrome(0), m::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
  EXPECT_EQ(rig.send_cqe(0).wqe_counter.value(), 0u);

  // The next valid WQE, at WQEBB 1, completes with a flush: it is not skipped.
  t::put_nop(rig.ring(), 1, kQpn, 1);
  rig.ring_doorbell(2);
  EXPECT_EQ(service(rig), 1u);
  ASSERT_EQ(rig.requester().send_cq.produced, 2u);
  EXPECT_EQ(rig.send_cqe_syndrome(1), m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
  EXPECT_EQ(rig.send_cqe(1).wqe_counter.value(), 1u);
  EXPECT_EQ(rig.requester().sq_consumer, 2u);
}

TEST(ExecuteWqe, AWqeEndingExactlyAtTheDoorbellExecutes) {
  NicModelRig rig;
  t::put_nop(rig.ring(), 0, kQpn, 63);
  rig.ring_doorbell(16);
  EXPECT_EQ(service(rig), 1u);
  EXPECT_EQ(rig.requester().sq_consumer, 16u);
  EXPECT_EQ(rig.send_cqe_opcode(0), m::MLX5_CQE_REQ);
}

TEST(ExecuteWqe, OnAQpInErrorAStaleWqeIsFlushedNotAnOperationError) {
  NicModelRig rig;
  rig.requester().state = sn::QP_STATE_ERROR;
  t::put_ctrl(rig.ring(), 0, {1000, m::MLX5_OPCODE_RDMA_WRITE, kQpn, 3, true, 0});  // stale index
  t::put_ctrl(rig.ring(), 1, {1, m::MLX5_OPCODE_NOP, 0x777, 1, true, 0});          // foreign QPN
  t::put_ctrl(rig.ring(), 2, {2, m::MLX5_OPCODE_NOP, kQpn, 0, true, 0});           // ds 0
  rig.ring_doorbell(3);
  EXPECT_EQ(service(rig), 3u);
  ASSERT_EQ(rig.requester().send_cq.produced, 3u);
  for (uint64_t n = 0; n < 3; ++n) {
    EXPECT_EQ(rig.send_cqe_opcode(n), m::MLX5_CQE_REQ_ERR) << n;
    EXPECT_EQ(rig.send_cqe_syndrome(n), m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR) << n;
    EXPECT_EQ(rig.send_cqe(n).wqe_counter.value(), n) << "each unusable WQE occupies one WQEBB";
  }
}

// The execute half of item 3: a responder that would not answer fails the WQE before any key is
// looked up or any byte moves, WRITE and FETCH_ADD alike.
TEST(ExecuteWqe, AResponderThatDoesNotAnswerIsATransportRetryError) {
  const char* const kCases[] = {"reset", "error", "disconnected", "index past the NIC's QPs"};
  for (int c = 0; c < 4; ++c) {
    for (bool atomic : {false, true}) {
      NicModelRig rig;
      if (c == 0) rig.responder().state = sn::QP_STATE_RESET;
      if (c == 1) rig.responder().state = sn::QP_STATE_ERROR;
      if (c == 2) rig.requester().remote_nic = nullptr;
      if (c == 3) rig.requester().remote_qp_index = 2;
      if (atomic) {
        t::put_fetch_add(rig.ring(), 0, kQpn, rig.region_address(0, 0x40), t::KEY_REGION0_ALL, 1,
                         rig.region_address(0, 0x08), t::KEY_REGION0_ALL);
      } else {
        t::put_write(rig.ring(), 0, kQpn, rig.region_address(1), t::KEY_REGION1_ALL, 128,
                     rig.region_address(0), t::KEY_REGION0_ALL);
      }
      rig.ring_doorbell(1);
      const std::vector<uint8_t> rung = snapshot(rig);
      EXPECT_EQ(service(rig), 1u);
      EXPECT_EQ(rig.send_cqe_syndrome(0), m::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR)
          << kCases[c] << (atomic ? ", fetch-add" : ", write");
      EXPECT_EQ(changed_outside_send_cq(rig, rung), std::vector<uint64_t>{}) << kCases[c];
    }
  }
}

}  // namespace
