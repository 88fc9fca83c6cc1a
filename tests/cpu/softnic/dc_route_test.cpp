// A DCI's copy held by its engine warp across visits and its cached destination (QpCopy::dc_route,
// src/softnic/engine/dc_batch.h, execute.h DcRoute): a synthetic NIC pair in host memory driven
// through serve_qp with HostLanes and one Window kept across visits, as an engine warp keeps it
// (no engine restart between visits, so nothing empties the copy but what the engine itself does).
//   - a DCT destroyed in place after a DCI's WQE to it resolved it: the next WQE to it (the DC lone
//     window, or a DC batch) is a REMOTE_INVAL_REQ_ERR, not a write through the cached DCT;
//   - an AV whose dc_key is not the DCT's, or a DCT whose key changed in place: REMOTE_ACCESS_ERR;
//   - seeded rounds of 1..5 WQEs a doorbell switching between three DCTs on two PDs: every WQE
//     executes once and in order (CQE wqe_counters, payloads, the DCTs' counts), and the copy is
//     held across the visits (the same slot, its consumer the QpContext's).
// Under `fast` (the lone window and the unpaced batch) and under an enabled profile of zero
// latencies (the paced DC lone window, its inline bytes read again from the ring, and the paced DC
// batch).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/wqe.h"
#include "engine/serve.h"

namespace m = dissect::mlx5;
namespace sn = dissect::softnic;

namespace {

struct alignas(64) Block {
  uint8_t bytes[64];
};

constexpr uint32_t kTag = 0x3c;
constexpr uint32_t key_of(uint32_t index) { return index << 8 | kTag; }
constexpr uint32_t kRingWqebbs = 64;
constexpr uint32_t kCqes = 256;
constexpr uint32_t kDcts = 3;
constexpr uint64_t kDcKey[kDcts] = {0x1111, 0x2222, 0x3333};
constexpr uint32_t kDctPd[kDcts] = {7, 7, 8};
constexpr uint32_t kDctMr[kDcts] = {1, 1, 2};  // target MR index by DCT (MR 1 in PD 7, MR 2 in PD 8)
constexpr size_t kDestBytes = 64 * 1024;

struct Rig {
  std::vector<Block> ring = std::vector<Block>(kRingWqebbs);
  std::vector<m::mlx5_cqe64> cqes = std::vector<m::mlx5_cqe64>(kCqes);
  std::vector<uint8_t> dest = std::vector<uint8_t>(2 * kDestBytes, 0);
  uint64_t doorbell = 0;
  sn::MrEntry local_mrs[4]{};
  sn::MrEntry target_mrs[4]{};
  sn::DctContext dcts[kDcts]{};
  sn::NicTables local{};
  sn::NicTables target{};
  sn::NicTables* fabric[4]{};
  sn::QpContext qps[1]{};
  uint64_t producer = 0;
  uint64_t polled = 0;
  std::unique_ptr<sn::Window> window = std::make_unique<sn::Window>();

  explicit Rig(bool paced) {
    target.nic_id = 1;
    target.mrs = target_mrs;
    target.mr_capacity = 4;
    target.dcts = dcts;
    target.dct_capacity = kDcts;
    target.dct_count = kDcts;
    for (uint32_t i = 1; i <= 2; ++i) {
      target_mrs[i] = sn::MrEntry{reinterpret_cast<uintptr_t>(dest.data()) + (i - 1) * kDestBytes, kDestBytes,
                                  key_of(i), 2 /*REMOTE_WRITE*/, i == 1 ? 7u : 8u, 1};
    }
    for (uint32_t d = 0; d < kDcts; ++d) dcts[d] = sn::DctContext{sn::DCTN_BASE + d, 1, kDctPd[d], 0, kDcKey[d], 0, 0};
    local.nic_id = 0;
    local.mrs = local_mrs;
    local.mr_capacity = 4;
    local.qps = qps;
    local.qp_count = 1;
    local.fabric = fabric;
    local.fabric_lids = 4;
    fabric[sn::lid_of_nic(1)] = &target;
    if (paced) {
      local.profile.enabled = 1;  // every latency 0: the paced DC batch, no wait to speak of
      std::strcpy(local.profile.name, "zero");
    }
    sn::QpContext& q = qps[0];
    q.qpn = sn::QPN_BASE;
    q.state = sn::QP_STATE_RTS;
    q.pd = 1;
    q.transport = sn::QP_TRANSPORT_DCI;
    q.sq = m::send_ring{ring[0].bytes, kRingWqebbs};
    q.doorbell = &doorbell;
    q.send_cq = sn::CqContext{cqes.data(), kCqes, 1, 0, 0, 0, nullptr};
    std::memset(cqes.data(), 0, cqes.size() * sizeof(m::mlx5_cqe64));
    for (auto& c : cqes) c.op_own = 0xf1;  // invalid opcode, owner bit of the first pass's opposite
    window->profile = local.profile;
    window->pipe = &local.pipe_busy_until;
    window->nic = &local;
  }
  sn::QpContext& qp() { return qps[0]; }

  // A signalled DC WRITE of `value` (8 B inline) into target MR `kDctMr[dct]` at `offset`, through
  // DCT `dct` with AV key `key`.
  void post(uint32_t dct, uint64_t offset, uint64_t value, bool full, uint64_t key) {
    const uint32_t av_ds = full ? m::DC_AV_DS : m::DC_AV_COMPACT_DS;
    const uint32_t ds = m::dc_write_inline_ds(av_ds, 8);
    const uint32_t wqebbs = m::wqebbs_for_ds(ds);
    uint8_t wqe[128] = {};
    m::set_ctrl_seg(reinterpret_cast<m::mlx5_wqe_ctrl_seg*>(wqe), static_cast<uint16_t>(producer),
                    m::MLX5_OPCODE_RDMA_WRITE, 0, qp().qpn, m::MLX5_WQE_CTRL_CQ_UPDATE, static_cast<uint8_t>(ds), 0,
                    m::be32{0});
    if (full) {
      m::mlx5_wqe_av route{};
      route.rlid = m::be16::from_host(sn::lid_of_nic(1));
      m::set_dc_av_seg(reinterpret_cast<m::mlx5_wqe_av*>(wqe + 16), route, sn::DCTN_BASE + dct, key);
    } else {
      m::mlx5_wqe_av_compact route{};
      route.rlid = m::be16::from_host(sn::lid_of_nic(1));
      m::set_dc_av_compact_seg(reinterpret_cast<m::mlx5_wqe_av_compact*>(wqe + 16), route, sn::DCTN_BASE + dct, key);
    }
    const uint32_t raddr_at = 16 * (1 + av_ds);
    m::set_raddr_seg(reinterpret_cast<m::mlx5_wqe_raddr_seg*>(wqe + raddr_at), target_mrs[kDctMr[dct]].address + offset,
                     key_of(kDctMr[dct]));
    const m::be32 count = m::be32::from_host(8u | m::MLX5_INLINE_SEG);
    std::memcpy(wqe + raddr_at + 16, &count, 4);
    std::memcpy(wqe + raddr_at + 20, &value, 8);
    for (uint32_t b = 0; b < wqebbs; ++b) std::memcpy(ring[(producer + b) % kRingWqebbs].bytes, wqe + 64 * b, 64);
    producer += wqebbs;
  }
  void ring_doorbell() { __atomic_store_n(&doorbell, m::doorbell_value(producer, qp().qpn), __ATOMIC_RELEASE); }
  uint32_t visit() {
    return sn::serve_qp(sn::HostLanes{}, *window, qp(), local, &window->cache[0], 64).executed;
  }
  // The next CQE: its opcode, syndrome (0 for a success) and wqe_counter.
  struct Seen {
    uint8_t opcode, syndrome;
    uint16_t wqe_counter;
  };
  Seen next_cqe() {
    const m::mlx5_cqe64& c = cqes[polled % kCqes];
    const auto& e = reinterpret_cast<const m::mlx5_err_cqe&>(c);
    Seen s{static_cast<uint8_t>(c.op_own >> 4), 0, c.wqe_counter.value()};
    if (s.opcode == m::MLX5_CQE_REQ_ERR) s.syndrome = e.syndrome;
    ++polled;
    return s;
  }
  uint64_t word_at(uint32_t dct, uint64_t offset) {
    uint64_t v;
    std::memcpy(&v, reinterpret_cast<const uint8_t*>(target_mrs[kDctMr[dct]].address) + offset, 8);
    return v;
  }
};

struct Case {
  bool paced;
  bool full;
  uint32_t per_doorbell;  // 1: the DC lone window under fast; more: a DC batch
};

class DcRoute : public ::testing::TestWithParam<Case> {};

// A WQE that resolved DCT 0 leaves the route on it; destroying DCT 0 in place (valid = 0, the
// slot kept, no engine restart) makes the next doorbell's first WQE to it a REMOTE_INVAL_REQ_ERR
// and the rest flush. A cached resolution that skipped `valid` writes through the dead DCT.
TEST_P(DcRoute, ADctDestroyedAfterItWasResolvedIsARemoteInvalidRequest) {
  const Case c = GetParam();
  Rig r(c.paced);
  for (uint32_t k = 0; k < c.per_doorbell; ++k) r.post(0, 8 * k, 0x100 + k, c.full, kDcKey[0]);
  r.ring_doorbell();
  EXPECT_EQ(r.visit(), c.per_doorbell);
  for (uint32_t k = 0; k < c.per_doorbell; ++k) EXPECT_EQ(r.next_cqe().syndrome, 0);
  ASSERT_EQ(r.window->cache[0].qp, &r.qp()) << "the DCI's copy is held across visits";
  ASSERT_EQ(r.window->cache[0].dc_route.dct, &r.dcts[0]) << "the route names the DCT just written";
  __atomic_store_n(&r.dcts[0].valid, 0u, __ATOMIC_RELEASE);  // destroyed: SoftNic::destroy_dct's first step
  for (uint32_t k = 0; k < c.per_doorbell; ++k) r.post(0, 512 + 8 * k, 0x200 + k, c.full, kDcKey[0]);
  r.ring_doorbell();
  while (r.visit() != 0) {
  }
  const Rig::Seen failed = r.next_cqe();
  EXPECT_EQ(failed.opcode, m::MLX5_CQE_REQ_ERR);
  EXPECT_EQ(failed.syndrome, m::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
  for (uint32_t k = 1; k < c.per_doorbell; ++k) EXPECT_EQ(r.next_cqe().syndrome, m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
  for (uint32_t k = 0; k < c.per_doorbell; ++k) EXPECT_EQ(r.word_at(0, 512 + 8 * k), 0u) << k;
  EXPECT_EQ(r.dcts[0].rx_packets, c.per_doorbell);
  EXPECT_EQ(r.qp().state, sn::QP_STATE_ERROR);
}

// After DCT 0 was resolved: an AV naming it with another key, and (a second DCI visit) the DCT's
// own key changed in place, are each a REMOTE_ACCESS_ERR; nothing lands.
TEST_P(DcRoute, AKeyThatIsNotTheDctsIsARemoteAccessErrorThroughTheRoute) {
  const Case c = GetParam();
  for (const bool key_changed_in_place : {false, true}) {
    SCOPED_TRACE(key_changed_in_place ? "the DCT's key changed" : "the AV's key wrong");
    Rig r(c.paced);
    r.post(0, 0, 0x51, c.full, kDcKey[0]);
    r.ring_doorbell();
    EXPECT_EQ(r.visit(), 1u);
    EXPECT_EQ(r.next_cqe().syndrome, 0);
    ASSERT_EQ(r.window->cache[0].dc_route.dct, &r.dcts[0]);
    if (key_changed_in_place) r.dcts[0].dc_key = 0x9999;
    const uint64_t key = key_changed_in_place ? kDcKey[0] : kDcKey[0] ^ 0x40;
    for (uint32_t k = 0; k < c.per_doorbell; ++k) r.post(0, 64 + 8 * k, 0x300 + k, c.full, key);
    r.ring_doorbell();
    while (r.visit() != 0) {
    }
    EXPECT_EQ(r.next_cqe().syndrome, m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
    for (uint32_t k = 1; k < c.per_doorbell; ++k) EXPECT_EQ(r.next_cqe().syndrome, m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
    for (uint32_t k = 0; k < c.per_doorbell; ++k) EXPECT_EQ(r.word_at(0, 64 + 8 * k), 0u);
    EXPECT_EQ(r.dcts[0].rx_packets, 1u);
  }
}

// Seeded rounds: 1..per_doorbell WQEs a doorbell (one or two doorbells a visit), each to a random
// one of three DCTs on two PDs (switching on most WQEs, sometimes repeating), AV form per case.
// Every WQE executes exactly once, in order, its value in its own slot; the copy stays held.
TEST_P(DcRoute, AHeldCopyExecutesEveryWqeOnceInOrderWhileSwitching) {
  const Case c = GetParam();
  Rig r(c.paced);
  std::mt19937 random(1234 + c.per_doorbell + (c.full ? 7 : 0) + (c.paced ? 13 : 0));
  std::vector<uint16_t> expected_counters;
  uint64_t sequence = 0;
  uint64_t per_dct[kDcts] = {};
  std::vector<std::pair<uint32_t, uint64_t>> slots;  // (dct, sequence) of each WQE
  for (uint32_t round = 0; round < 120; ++round) {
    const uint32_t doorbells = 1 + random() % 2;
    for (uint32_t d = 0; d < doorbells; ++d) {
      const uint32_t n = 1 + random() % c.per_doorbell;
      if (r.producer + 2 * n > r.qp().sq_consumer + kRingWqebbs) break;  // nothing overruns the ring
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t dct = random() % kDcts;
        expected_counters.push_back(static_cast<uint16_t>(r.producer));
        // Each WQE writes its own slot: (sequence % 4096) * 8 in its DCT's MR.
        r.post(dct, (sequence % 4096) * 8, 0xabc00000 + sequence, c.full, kDcKey[dct]);
        slots.emplace_back(dct, sequence);
        ++per_dct[dct];
        ++sequence;
      }
      r.ring_doorbell();
    }
    while (r.visit() != 0) {
    }
    ASSERT_EQ(r.window->cache[0].qp, &r.qp()) << "round " << round << ": the copy was dropped";
    EXPECT_EQ(r.window->cache[0].view.sq_consumer, r.qp().sq_consumer);
    EXPECT_EQ(r.qp().sq_consumer, r.producer);
    while (r.polled < expected_counters.size()) {
      const uint64_t i = r.polled;
      const Rig::Seen s = r.next_cqe();
      ASSERT_EQ(s.opcode, m::MLX5_CQE_REQ) << "WQE " << i;
      ASSERT_EQ(s.wqe_counter, expected_counters[i]) << "WQE " << i << ": out of order";
    }
    // No CQE beyond the WQEs posted.
    EXPECT_EQ(r.qp().send_cq.produced, r.polled);
  }
  EXPECT_EQ(r.qp().counters.wqes_executed, sequence);
  EXPECT_EQ(r.qp().counters.cqes_written, sequence);
  for (uint32_t d = 0; d < kDcts; ++d) EXPECT_EQ(r.dcts[d].rx_packets, per_dct[d]) << "DCT " << d;
  for (const auto& [dct, seq] : slots) {
    if (seq + 4096 < sequence) continue;  // overwritten by a later lap of the slots
    EXPECT_EQ(r.word_at(dct, (seq % 4096) * 8), 0xabc00000 + seq) << "WQE " << seq;
  }
  if (c.paced) {
    uint64_t connects = 0;
    for (const auto& d : r.dcts) connects += d.connects;
    EXPECT_GT(connects, 0u);
  } else {
    for (const auto& d : r.dcts) EXPECT_EQ(d.connects, 0u) << "fast counts no connect";
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, DcRoute,
                         ::testing::Values(Case{false, false, 1}, Case{false, true, 1}, Case{false, false, 5},
                                           Case{false, true, 5}, Case{true, false, 1}, Case{true, true, 1},
                                           Case{true, true, 5}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(i.param.paced ? "paced" : "fast") + (i.param.full ? "_full" : "_compact") +
                                  "_" + std::to_string(i.param.per_doorbell);
                         });

}  // namespace
