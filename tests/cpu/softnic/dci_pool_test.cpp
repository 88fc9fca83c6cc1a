// The DCI pool and its mapping policy (gda/dci_pool.h), compiled for the host as the CPU tier's
// stand-in for the device code; host threads playing warps submit DC writes through a pool with
// destination switching; and the timing profile's DC connect rule (engine/dc_timing.h), counted
// at the DCT (DctContext::connects), never timed.
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
#include "dissect/softnic/softnic.h"

namespace gda = dissect::gda;
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

}  // namespace
