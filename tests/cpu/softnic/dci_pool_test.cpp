// The DCI pool and its mapping policy (gda/dci_pool.h), compiled for the host as the CPU tier's
// stand-in for the device code; host threads playing warps submit DC writes through a pool with
// destination switching; the timing profile's DC connect rule (engine/dc_timing.h), counted at
// the DCT (DctContext::connects); and the DC batch (engine/dc_batch.h): the model's arithmetic,
// and what the CQEs' own timestamps say about when the engine released them (never a speed).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/common/error.h"
#include "dissect/gda/dci_pool.h"
#include "dissect/gda/gda.h"
#include "dissect/nic/nic.h"
#include "dissect/common/clock.h"
#include "dissect/softnic/softnic.h"
#include "engine/dc_timing.h"

namespace gda = dissect::gda;
namespace m = dissect::mlx5;
namespace nic = dissect::nic;
namespace sn = dissect::softnic;
using Policy = gda::ordering::system_release_store;
using gda::DciPolicy;
using gda::SubmitterPlace;

namespace {

TEST(DciPolicy, PerWarpMapsTheGlobalWarpIndex) {
  for (uint32_t w = 0; w < 40; ++w) {
    EXPECT_EQ(gda::dci_index(DciPolicy::per_warp, SubmitterPlace{w, 7, 3}, 4), w % 4) << "warp " << w;
  }
}

TEST(DciPolicy, PerCtaIgnoresWarpAndSm) {
  for (uint32_t c = 0; c < 20; ++c) {
    for (uint32_t w : {0u, 5u, 31u}) {
      EXPECT_EQ(gda::dci_index(DciPolicy::per_cta, SubmitterPlace{w + 8 * c, c, c * 3 + 1}, 3), c % 3);
    }
  }
}

TEST(DciPolicy, PerSmMapsTheSmNumber) {
  for (uint32_t s = 0; s < 132; ++s) {
    EXPECT_EQ(gda::dci_index(DciPolicy::per_sm, SubmitterPlace{s * 2, s * 5, s}, 16), s % 16) << "SM " << s;
  }
}

TEST(DciPolicy, OneDciServesEveryone) {
  for (DciPolicy p : {DciPolicy::per_warp, DciPolicy::per_cta, DciPolicy::per_sm}) {
    EXPECT_EQ(gda::dci_index(p, SubmitterPlace{91, 17, 63}, 1), 0u) << gda::to_string(p);
  }
}

TEST(DciPool, PicksTheHandleOfItsIndex) {
  nic::QpHandle handles[5] = {};
  for (uint32_t i = 0; i < 5; ++i) handles[i].qpn = 0x100 + i;
  const gda::DciPool pool = gda::dci_pool(handles, 5, DciPolicy::per_cta);
  for (uint32_t c = 0; c < 12; ++c) {
    EXPECT_EQ(gda::pool_dci(pool, SubmitterPlace{0, c, 0}).qpn, 0x100 + c % 5);
  }
}

TEST(DciPool, RefusesAnEmptyOversizedOrNullPoolByName) {
  nic::QpHandle one{};
  EXPECT_THROW(gda::dci_pool(&one, 0, DciPolicy::per_warp), dissect::InvalidArgument);
  EXPECT_THROW(gda::dci_pool(&one, gda::MAX_POOL_DCIS + 1, DciPolicy::per_warp), dissect::InvalidArgument);
  EXPECT_THROW(gda::dci_pool(nullptr, 1, DciPolicy::per_warp), dissect::InvalidArgument);
  try {
    gda::dci_pool(&one, 0, DciPolicy::per_sm);
    FAIL() << "an empty pool was accepted";
  } catch (const dissect::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("0 DCIs"), std::string::npos) << e.what();
  }
}

TEST(DciPolicy, NamesRoundTripAndAnUnknownOneIsRefused) {
  for (DciPolicy p : {DciPolicy::per_warp, DciPolicy::per_cta, DciPolicy::per_sm}) {
    EXPECT_EQ(gda::dci_policy_from_string(gda::to_string(p)), p);
  }
  EXPECT_THROW(gda::dci_policy_from_string("per-thread"), dissect::InvalidArgument);
}

// A target NIC with two DCTs (two PDs) and an initiator NIC with `dcis` DCIs.
struct PoolRig {
  PoolRig(uint32_t dcis, const sn::TimingProfile& profile) {
    sn::SoftNicOptions o;
    o.profile = profile;
    initiator = std::make_unique<sn::SoftNic>(o);
    target = std::make_unique<sn::SoftNic>(o);
    initiator_pd = initiator->create_pd();
    for (int d = 0; d < 2; ++d) {
      target_pd[d] = target->create_pd();
      nic::DctAttributes attributes;
      attributes.dc_key = 0x7000 + d;
      dct[d] = target_pd[d]->create_dct(attributes);
      buffer[d].assign(4096, 0);
      mr[d] = target_pd[d]->register_memory(buffer[d].data(), buffer[d].size(), nic::ACCESS_ALL);
      const nic::DctEndpoint e = dct[d]->endpoint();
      destination[d] = gda::dc_destination(e.dctn, e.dc_key, e.lid);
    }
    for (uint32_t i = 0; i < dcis; ++i) {
      dci.push_back(initiator_pd->create_dci({}));
      handles.push_back(dci.back()->handle());
    }
  }
  uint64_t word(int d, uint32_t index) const {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(buffer[d].data()) + index, __ATOMIC_ACQUIRE);
  }
  uint64_t address(int d, uint32_t index) const {
    return reinterpret_cast<uintptr_t>(buffer[d].data()) + 8 * index;
  }
  uint32_t connects(int d) const { return target->dct_context(dct[d]->endpoint().dctn).connects; }

  std::unique_ptr<sn::SoftNic> initiator, target;
  std::unique_ptr<nic::ProtectionDomain> initiator_pd, target_pd[2];
  std::unique_ptr<nic::DcTarget> dct[2];
  std::vector<uint8_t> buffer[2];
  nic::MemoryRegion mr[2];
  gda::DcDestination destination[2];
  std::vector<std::unique_ptr<nic::QueuePair>> dci;
  std::vector<nic::QpHandle> handles;
};

// 8 host threads as 8 warps of one CTA on a pool of 3 DCIs (per warp: warps 0, 3, 6 share DCI 0):
// each alternates its WQEs between the two DCTs, so every DCI switches destination on every WQE
// and carries the WQEs of up to three submitters (Sharing::shared). Every word lands where its
// thread sent it, on the DCT it named, and the DCIs took the WQEs the policy gave them.
TEST(DciPoolOnTheSoftnic, WarpsShareDcisAndSwitchDestinations) {
  constexpr uint32_t kWarps = 8, kDcis = 3, kPuts = 64;
  PoolRig rig(kDcis, sn::timing_profile("fast"));
  const gda::DciPool pool = gda::dci_pool(rig.handles.data(), kDcis, DciPolicy::per_warp);
  std::vector<std::thread> warps;
  std::vector<int> failures(kWarps, 0);
  for (uint32_t w = 0; w < kWarps; ++w) {
    warps.emplace_back([&, w] {
      const nic::QpHandle& dci = gda::pool_dci(pool, SubmitterPlace{w, 0, 0});
      uint64_t end = 0;
      for (uint32_t i = 0; i < kPuts; ++i) {
        const int d = static_cast<int>(i % 2);
        const uint32_t slot = w * kPuts + i;
        const gda::AvForm form = i % 3 == 0 ? gda::AvForm::full : gda::AvForm::compact;
        if (gda::put_value_dc<Policy, gda::Sharing::shared>(
                dci, rig.destination[d], form, uint64_t{0xd0000000} + slot, 8, rig.address(d, slot),
                rig.mr[d].rkey, gda::Completion::signaled, &end) != gda::Status::ok) {
          ++failures[w];
          return;
        }
      }
      if (gda::wait_completion<Policy, gda::Sharing::shared>(dci, end) != gda::Status::ok) ++failures[w];
    });
  }
  for (auto& t : warps) t.join();
  for (uint32_t w = 0; w < kWarps; ++w) EXPECT_EQ(failures[w], 0) << "warp " << w;
  for (uint32_t w = 0; w < kWarps; ++w) {
    for (uint32_t i = 0; i < kPuts; ++i) {
      const int d = static_cast<int>(i % 2);
      const uint32_t slot = w * kPuts + i;
      ASSERT_EQ(rig.word(d, slot), uint64_t{0xd0000000} + slot) << "warp " << w << " put " << i;
      ASSERT_EQ(rig.word(1 - d, slot), 0u) << "warp " << w << " put " << i << " also reached the other DCT";
    }
  }
  for (uint32_t k = 0; k < kDcis; ++k) {
    const uint32_t warps_on_it = (kWarps - k + kDcis - 1) / kDcis;  // warps k, k + 3, ...
    EXPECT_EQ(rig.initiator->counters(rig.handles[k].qpn).wqes_executed, uint64_t{warps_on_it} * kPuts)
        << "DCI " << k;
  }
  EXPECT_EQ(rig.connects(0) + rig.connects(1), 0u) << "fast counts no DC connect";
}

// A profile that only adds the DC connect (1 ns) and nothing else: the rule, counted.
sn::TimingProfile connect_only() {
  sn::TimingProfile p = sn::timing_profile("fast");
  p.enabled = 1;
  p.dc_connect_ns = 1;
  return p;
}

// One put at a time finds the DCI idle each time: one connect each.
TEST(DcConnect, EveryPutOfAnIdleDciConnects) {
  PoolRig rig(1, connect_only());
  for (uint32_t i = 0; i < 3; ++i) {
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value_dc<Policy>(rig.handles[0], rig.destination[0], gda::AvForm::compact, i + 1, 8,
                                        rig.address(0, i), rig.mr[0].rkey, gda::Completion::signaled, &end),
              gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(rig.handles[0], end)), gda::Status::ok);
    EXPECT_EQ(rig.connects(0), i + 1) << "put " << i;
  }
  EXPECT_EQ(rig.connects(1), 0u);
}

// One doorbell announcing WQEs to DCT 0, 0, 1, 1, 0: the DCI stays connected through each burst
// and connects at each change (three connects: 0, 1, 0), and is idle after the last.
TEST(DcConnect, ABurstConnectsOnceAndEverySwitchConnects) {
  PoolRig rig(1, connect_only());
  const int to[5] = {0, 0, 1, 1, 0};
  uint64_t end = 0;
  ASSERT_EQ((gda::post_batch<Policy>(
                rig.handles[0], 5, gda::dc_value_wqebbs(gda::AvForm::full, 8), gda::Completion::signaled, &end,
                [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, gda::Completion c) {
                  return gda::write_dc_write_value_wqe(qp, index, rig.destination[to[i]], gda::AvForm::full,
                                                       uint64_t{100} + i, 8, rig.address(to[i], i),
                                                       rig.mr[to[i]].rkey, c);
                })),
            gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(rig.handles[0], end)), gda::Status::ok);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(rig.word(to[i], i), uint64_t{100} + i) << "WQE " << i;
  EXPECT_EQ(rig.connects(0), 2u);
  EXPECT_EQ(rig.connects(1), 1u);
}

TEST(DcConnect, Cx7IbCarriesTheFittedConnectAndFastNone) {
  EXPECT_EQ(sn::timing_profile("cx7-ib").dc_connect_ns, 450u);
  EXPECT_EQ(sn::timing_profile("fast").dc_connect_ns, 0u);
  const std::string path = ::testing::TempDir() + "dci_pool_test_profile.txt";
  std::ofstream(path) << "name = dc\ndc_connect_ns = 123\n";
  EXPECT_EQ(sn::timing_profile(path).dc_connect_ns, 123u);
  std::ofstream(path) << "dc_connect_ns = soon\n";
  EXPECT_THROW(sn::timing_profile(path), dissect::InvalidArgument);
  std::remove(path.c_str());
}

// The model's arithmetic (dc_timing.h, the sums the engines wait for): under cx7-ib one idle DC
// put's doorbell-to-CQE is RC's plus dc_connect_ns, inline and pointer alike; RC's is the window's
// (pace_payloads: doorbell_to_data_ns, + payload_read_ns for a pointer, then data_to_cqe_ns).
TEST(DcTiming, AnIdleDcPutIsRcPlusOneConnectUnderCx7Ib) {
  const sn::TimingProfile p = sn::timing_profile("cx7-ib");
  for (const bool pointer : {false, true}) {
    const uint64_t rc = sn::modelled_doorbell_to_cqe_ns(p, pointer, 0);
    const uint64_t dc = sn::modelled_doorbell_to_cqe_ns(p, pointer, 1);
    EXPECT_EQ(rc, uint64_t{p.doorbell_to_data_ns} + (pointer ? p.payload_read_ns : 0) + p.data_to_cqe_ns);
    EXPECT_EQ(dc - rc, uint64_t{p.dc_connect_ns}) << (pointer ? "pointer" : "inline");
  }
  EXPECT_EQ(sn::modelled_doorbell_to_cqe_ns(p, false, 0), 3300u);  // 2,725 + 575: Table 3's 3.30 us
  EXPECT_EQ(sn::modelled_doorbell_to_cqe_ns(p, false, 1), 3750u);
  // Released with the payload's date: cx7-ib's CQE hop (770 ns) exceeds data_to_cqe_ns (575).
  EXPECT_EQ(sn::modelled_cqe_release_ns(p, false, 0), 2725u);
  EXPECT_EQ(sn::modelled_cqe_release_ns(p, false, 1), 3175u);
  // Connects of one batch follow one another (a DCI holds one DCT at a time).
  EXPECT_EQ(sn::dc_data_ready_ns(p, 1000, false, 3), 1000u + p.doorbell_to_data_ns + 3 * p.dc_connect_ns);
}

// One DC put under cx7-ib on the host engine: its CQE is stamped no earlier than the model allows
// from before the doorbell (doorbell seen + the modelled release of its CQE, with its one connect).
TEST(DcBatch, AnIdlePutsCqeIsNeverEarlierThanTheModel) {
  PoolRig rig(1, sn::timing_profile("cx7-ib"));
  const sn::TimingProfile p = sn::timing_profile("cx7-ib");
  for (uint32_t i = 0; i < 3; ++i) {
    const uint64_t before = dissect::now_ns();
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value_dc<Policy>(rig.handles[0], rig.destination[0], gda::AvForm::compact, i + 7, 8,
                                        rig.address(0, i), rig.mr[0].rkey, gda::Completion::signaled, &end),
              gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(rig.handles[0], end)), gda::Status::ok);
    const auto& cq = rig.handles[0].send_cq;
    const uint64_t stamp = cq.cqes[i & (cq.cqe_count - 1)].timestamp.value();
    EXPECT_GE(stamp, before + sn::modelled_cqe_release_ns(p, false, 1)) << "put " << i;
    EXPECT_EQ(rig.word(0, i), uint64_t{i} + 7);
    EXPECT_EQ(rig.connects(0), i + 1) << "every put of an idle DCI connects";
  }
}

// Waits (bounded) until CQE `n` of `qp`'s send CQ is software-owned; false on timeout.
bool wait_raw_cqe(const nic::QpHandle& qp, uint64_t n) {
  const auto& cq = qp.send_cq;
  const auto* e = &cq.cqes[n & (cq.cqe_count - 1)];
  const uint64_t deadline = dissect::now_ns() + 10'000'000'000ull;
  while (!m::cqe_is_sw_owned(__atomic_load_n(&e->op_own, __ATOMIC_ACQUIRE), n, cq.cqe_count)) {
    if (dissect::now_ns() > deadline) return false;
  }
  return true;
}

// A profile whose only latency is a long data_to_cqe_ns: the CQEs' stamps show how many modelled
// latencies a burst paid.
sn::TimingProfile slow_acknowledgement() {
  sn::TimingProfile p = sn::timing_profile("fast");
  p.enabled = 1;
  p.data_to_cqe_ns = 50'000'000;  // 50 ms
  // A pipe, as every real profile has: a claim ends no earlier than the clock, so a WQE paced on
  // its own is released data_to_cqe_ns after it was executed, not after its doorbell.
  p.message_rate_mps = 260;
  return p;
}

// Eight signalled DC writes announced by one doorbell, to two DCTs in turn, run as one batch: one
// wait for the payloads, one data_to_cqe_ns for all eight CQEs, each stamped in the same release.
// One WQE at a time (before the DC batch) each claimed the pipe from the clock and stamped them
// data_to_cqe_ns apart, 350 ms in all.
TEST(DcBatch, ADoorbellsWritesShareOneModelledLatency) {
  constexpr uint32_t kWrites = 8;
  PoolRig rig(1, slow_acknowledgement());
  const nic::QpHandle& dci = rig.handles[0];
  uint64_t end = 0;
  ASSERT_EQ((gda::post_batch<Policy>(
                dci, kWrites, gda::dc_value_wqebbs(gda::AvForm::compact, 8), gda::Completion::signaled, &end,
                [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, gda::Completion) {
                  return gda::write_dc_write_value_wqe(qp, index, rig.destination[i % 2], gda::AvForm::compact,
                                                       uint64_t{0x500} + i, 8, rig.address(i % 2, i),
                                                       rig.mr[i % 2].rkey, gda::Completion::signaled);
                })),
            gda::Status::ok);
  uint64_t stamps[kWrites];
  for (uint32_t i = 0; i < kWrites; ++i) {
    ASSERT_TRUE(wait_raw_cqe(dci, i)) << "no CQE " << i;
    const auto& e = dci.send_cq.cqes[i & (dci.send_cq.cqe_count - 1)];
    ASSERT_EQ(m::cqe_opcode(e.op_own), m::MLX5_CQE_REQ) << "CQE " << i;
    stamps[i] = e.timestamp.value();
  }
  for (uint32_t i = 0; i < kWrites; ++i) EXPECT_EQ(rig.word(i % 2, i), uint64_t{0x500} + i) << "write " << i;
  EXPECT_LT(stamps[kWrites - 1] - stamps[0], uint64_t{slow_acknowledgement().data_to_cqe_ns})
      << "the burst's CQEs were released one modelled latency apart, not together";
  EXPECT_EQ(rig.connects(0), kWrites / 2) << "every switch of DCT connects";
  EXPECT_EQ(rig.connects(1), kWrites / 2);
}

// Under a profile the batch keeps the DC syndromes and the order: the WQE before a wrong dc_key
// lands, the bad one completes in error, the one after it moves nothing and is flushed.
TEST(DcBatch, AWrongKeyInABatchFailsThereAndFlushesTheRest) {
  PoolRig rig(1, connect_only());
  const nic::QpHandle& dci = rig.handles[0];
  const nic::DctEndpoint e = rig.dct[0]->endpoint();
  const gda::DcDestination wrong = gda::dc_destination(e.dctn, e.dc_key ^ 1, e.lid);
  uint64_t end = 0;
  ASSERT_EQ((gda::post_batch<Policy>(
                dci, 3, gda::dc_value_wqebbs(gda::AvForm::full, 8), gda::Completion::signaled, &end,
                [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, gda::Completion c) {
                  return gda::write_dc_write_value_wqe(qp, index, i == 1 ? wrong : rig.destination[0],
                                                       gda::AvForm::full, uint64_t{0x900} + i, 8,
                                                       rig.address(0, i), rig.mr[0].rkey, c);
                })),
            gda::Status::ok);
  ASSERT_TRUE(wait_raw_cqe(dci, 0));
  ASSERT_TRUE(wait_raw_cqe(dci, 1));
  const auto* error = reinterpret_cast<const m::mlx5_err_cqe*>(&dci.send_cq.cqes[0]);
  const auto* flush = reinterpret_cast<const m::mlx5_err_cqe*>(&dci.send_cq.cqes[1]);
  EXPECT_EQ(m::cqe_opcode(error->op_own), m::MLX5_CQE_REQ_ERR);
  EXPECT_EQ(error->syndrome, m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  EXPECT_EQ(error->wqe_counter.value(), gda::dc_value_wqebbs(gda::AvForm::full, 8));  // WQE 1
  EXPECT_EQ(flush->syndrome, m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
  EXPECT_EQ(rig.word(0, 0), 0x900u);
  EXPECT_EQ(rig.word(0, 1), 0u);
  EXPECT_EQ(rig.word(0, 2), 0u) << "a WQE after the failure moved its payload";
}

}  // namespace
