// A real MoE low-latency dispatch and combine of several ranks through the softnic's host engine:
// host threads stand in for the warps of every rank and run the bodies the GPU kernels run
// (moe/dispatch.h, moe/combine.h) on mini-gda QPs, RC-connected rank to rank. Every received
// token and every combined output is checked against the host reference, byte for byte.
#include <gtest/gtest.h>

#include "host_moe_rig.h"

namespace moe = dissect::moe;
using dissect::testing::HostMoeRig;
using dissect::testing::MoeTransportKind;

namespace {

moe::MoeShape small_shape(uint32_t ranks, uint32_t experts, uint32_t top_k, uint32_t tokens) {
  moe::MoeShape s;
  s.hidden = 256;
  s.ranks = ranks;
  s.experts = experts;
  s.top_k = top_k;
  s.tokens = tokens;
  s.max_tokens = tokens;
  return s;
}

void expect_valid(HostMoeRig& rig, const moe::MoeShape& s, uint64_t* checked_tokens = nullptr) {
  for (uint32_t r = 0; r < s.ranks; ++r) {
    moe::CheckReport d, c;
    moe::check_dispatch(s, rig.inputs(), r, rig.dispatch_view(r), d);
    moe::check_combine(s, rig.inputs(), r, rig.combined(r), c);
    EXPECT_EQ(d.mismatches, 0u) << "rank " << r << ": " << (d.first.empty() ? "" : d.first[0]);
    EXPECT_EQ(c.mismatches, 0u) << "rank " << r << ": " << (c.first.empty() ? "" : c.first[0]);
    EXPECT_EQ(c.checked, s.tokens);
    if (checked_tokens) *checked_tokens += d.checked;
  }
}

// Three ranks, two local experts each, top-3 with masked entries: three dispatch+combine rounds
// on one set of QPs (counters reset, flags counted by epoch, rings reused).
TEST(MoeDispatchCombine, ThreeRanksValidateEveryTokenAndOutputOverRounds) {
  const moe::MoeShape s = small_shape(3, 6, 3, 8);
  HostMoeRig rig(s, {11, 0.2});
  uint64_t expected = 0;
  for (uint32_t r = 0; r < s.ranks; ++r) expected += moe::selections(s, rig.inputs()[r]);
  ASSERT_GT(expected, 0u);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    ASSERT_EQ(rig.run_once(2), dissect::gda::Status::ok);
    uint64_t received = 0;
    expect_valid(rig, s, &received);
    EXPECT_EQ(received, expected) << "every unmasked (token, expert) pair arrives once";
  }
}

// DeepEP's doorbell batching: one doorbell per 4 messages of a QP plus one per signal, never one
// per message; the first QP of rank 0 towards itself carries every message for expert 0.
TEST(MoeDispatchCombine, DoorbellsAreBatchedEveryFourMessages) {
  const moe::MoeShape s = small_shape(2, 2, 1, 16);  // one expert per rank, every token to one
  HostMoeRig rig(s, {3, 0.0});
  ASSERT_EQ(rig.run_once(1), dissect::gda::Status::ok);
  expect_valid(rig, s);
  for (uint32_t r = 0; r < 2; ++r) {
    for (uint32_t d = 0; d < 2; ++d) {
      const uint32_t dispatched = static_cast<uint32_t>(moe::routed_tokens(s, rig.inputs()[r], d).size());
      const uint32_t combined = static_cast<uint32_t>(moe::routed_tokens(s, rig.inputs()[d], r).size());
      const auto counters = rig.nic().counters(rig.rank(r).handles[d].qpn);
      EXPECT_EQ(counters.wqes_executed, uint64_t{dispatched} + combined + 2) << r << "->" << d;
      EXPECT_LE(counters.doorbells, uint64_t{dispatched / 4 + combined / 4 + 2}) << r << "->" << d;
    }
  }
}

// A ring that just holds one phase (max_tokens + 1 WQEBBs rounded up): wraps over the rounds.
TEST(MoeDispatchCombine, SmallRingsWrapAcrossRounds) {
  const moe::MoeShape s = small_shape(2, 4, 2, 7);
  HostMoeRig rig(s, {5, 0.1}, moe::required_sq_wqebbs(s));
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    ASSERT_EQ(rig.run_once(3), dissect::gda::Status::ok);
    expect_valid(rig, s);
  }
}

// A single rank (every QP loops back to itself) and a rank with every entry masked.
TEST(MoeDispatchCombine, OneRankAndFullyMaskedRouting) {
  const moe::MoeShape one = small_shape(1, 4, 2, 5);
  HostMoeRig a(one, {8, 0.0});
  ASSERT_EQ(a.run_once(2), dissect::gda::Status::ok);
  expect_valid(a, one);
  const moe::MoeShape masked = small_shape(2, 4, 2, 4);
  HostMoeRig b(masked, {8, 1.0});
  ASSERT_EQ(b.run_once(1), dissect::gda::Status::ok);
  for (uint32_t r = 0; r < 2; ++r) {
    moe::CheckReport c;
    moe::check_combine(masked, b.inputs(), r, b.combined(r), c);
    EXPECT_EQ(c.mismatches, 0u) << "all-masked tokens combine to zero";
    for (uint32_t l = 0; l < 2; ++l) EXPECT_EQ(b.dispatch_view(r).packed_count[l], 0u);
  }
}

// The same rounds through mini-proxy: each rank's CPU workers turn the warps' descriptors (tuned
// handoff, shared rings) into the WQEs; ranks x workers worker threads on the host engine.
TEST(MoeDispatchCombine, MiniProxyThreeRanksValidateEveryTokenAndOutputOverRounds) {
  const moe::MoeShape s = small_shape(3, 6, 3, 8);
  HostMoeRig rig(s, {11, 0.2}, 0, MoeTransportKind::mini_proxy);
  uint64_t expected = 0;
  for (uint32_t r = 0; r < s.ranks; ++r) expected += moe::selections(s, rig.inputs()[r]);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    ASSERT_EQ(rig.run_once(2), dissect::gda::Status::ok);
    uint64_t received = 0;
    expect_valid(rig, s, &received);
    EXPECT_EQ(received, expected);
  }
}

// mini-proxy with one rank and more tokens than a worker chains (batch 4): ring laps and chains.
TEST(MoeDispatchCombine, MiniProxyOneRankManyTokens) {
  const moe::MoeShape s = small_shape(1, 2, 2, 40);
  HostMoeRig rig(s, {2, 0.0}, 0, MoeTransportKind::mini_proxy);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(rig.run_once(3), dissect::gda::Status::ok);
    expect_valid(rig, s);
  }
}

// A rank whose count never comes: the receiving warp gives up after its bound, naming itself, the
// expert and the source rank, and returns timeout instead of hanging.
TEST(MoeDispatchCombine, AMissingCountTimesOutNamingRankExpertAndSource) {
  const moe::MoeShape s = small_shape(2, 2, 1, 2);
  HostMoeRig rig(s, {1, 0.0});
  moe::MoeRankHandle h = rig.handle(1);
  h.timeout_ns = 50'000'000;
  ::testing::internal::CaptureStderr();
  const auto status = moe::dispatch_receive(moe::HostWarp{}, h, 0, 0);  // rank 0 never sent
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, dissect::gda::Status::timeout);
  EXPECT_NE(said.find("rank 1 timed out"), std::string::npos) << said;
  EXPECT_NE(said.find("dispatch count of expert 1 from rank 0"), std::string::npos) << said;
}

}  // namespace

// The masked fraction end to end: the routing masks about that share of the selections, exactly
// the unmasked ones arrive, and each phase posts one message per unmasked selection plus its
// signals (dispatch: one count per expert; combine: one flag per (local expert, source rank)).
TEST(MoeDispatchCombine, MaskedFractionReachesRoutingPostsAndReceivedTokens) {
  const moe::MoeShape s = small_shape(2, 8, 4, 32);
  for (const double fraction : {0.0, 0.5}) {
    SCOPED_TRACE(fraction);
    HostMoeRig rig(s, {21, fraction});
    ASSERT_EQ(rig.run_once(2), dissect::gda::Status::ok);
    uint64_t selected = 0, received = 0, dispatch_posts = 0, combine_posts = 0;
    for (uint32_t r = 0; r < s.ranks; ++r) {
      selected += moe::selections(s, rig.inputs()[r]);
      dispatch_posts += rig.stamps(r, moe::dispatch_phase).posts;
      combine_posts += rig.stamps(r, moe::combine_phase).posts;
    }
    expect_valid(rig, s, &received);
    const uint64_t all = uint64_t{s.ranks} * s.tokens * s.top_k;
    if (fraction == 0.0) EXPECT_EQ(selected, all);
    if (fraction == 0.5) {
      EXPECT_GT(selected, all * 3 / 10) << "about half the selections are kept";
      EXPECT_LT(selected, all * 7 / 10) << "about half the selections are masked";
    }
    EXPECT_EQ(received, selected) << "exactly the unmasked (token, expert) pairs arrive";
    EXPECT_EQ(dispatch_posts, selected + uint64_t{s.ranks} * s.experts);
    EXPECT_EQ(combine_posts, selected + uint64_t{s.ranks} * moe::local_experts(s) * s.ranks);
  }
}

// The stamps of a phase: the last post ends inside the phase's span, after its start, so the
// issue share (last post end - start) / (end - start) lies in (0, 1].
TEST(MoeDispatchCombine, StampsCarryTheLastPostEndInsideThePhase) {
  const moe::MoeShape s = small_shape(2, 4, 2, 8);
  HostMoeRig rig(s, {4, 0.0});
  ASSERT_EQ(rig.run_once(2), dissect::gda::Status::ok);
  for (uint32_t r = 0; r < s.ranks; ++r) {
    for (const moe::Phase phase : {moe::dispatch_phase, moe::combine_phase}) {
      const moe::PhaseStamps p = rig.stamps(r, phase);
      SCOPED_TRACE(std::to_string(r) + " " + std::to_string(phase));
      EXPECT_EQ(p.warps, 2u);
      EXPECT_GT(p.posts, 0u);
      EXPECT_GT(p.last_post_end_ns, moe::stamp_begin(p));
      EXPECT_LE(p.last_post_end_ns, p.end_ns);
      EXPECT_GT(moe::issue_share(p), 0.0);
      EXPECT_LE(moe::issue_share(p), 1.0);
    }
  }
}
