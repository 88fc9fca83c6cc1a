// One rank per process, host side (moe/group.h): the world against the shape, the arguments every
// rank must share, the records and checks rank 0 gathers (over an in-process bootstrap group, a
// thread per PE, as the processes' environment bootstrap does it over TCP), and a rank that never
// arrives failing by name within the bootstrap's bound.
#include <gtest/gtest.h>

#include <thread>

#include "dissect/bootstrap/in_process.h"
#include "dissect/common/error.h"
#include "dissect/moe/group.h"

namespace moe = dissect::moe;
namespace bs = dissect::bootstrap;

namespace {

moe::MoeShape shape(uint32_t ranks, uint32_t experts) {
  moe::MoeShape s;
  s.ranks = ranks;
  s.experts = experts;
  return s;
}

std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

moe::RankRecord record(int rank, size_t sample) {
  moe::RankRecord r;
  r.dispatch_us = 10.0 * rank + double(sample);
  r.combine_us = 100.0 * rank + double(sample);
  r.dispatch.posts = 1000u * rank + sample;
  return r;
}

// Runs body(pe) on a thread per PE of an in-process group of `n`.
void on_group(int n, double timeout_s, const std::function<void(bs::Bootstrap&)>& body) {
  auto pes = bs::InProcessGroup::create(n, timeout_s);
  std::vector<std::thread> threads;
  for (auto& pe : pes) threads.emplace_back([&body, &pe] { body(*pe); });
  for (auto& t : threads) t.join();
}

}  // namespace

TEST(MoeGroup, WorldMustEqualRanksAndSpreadTheExperts) {
  EXPECT_EQ(moe::world_error(shape(8, 256), 8), "");
  const std::string fewer = moe::world_error(shape(8, 256), 4);
  EXPECT_NE(fewer.find("4 processes"), std::string::npos) << fewer;
  EXPECT_NE(fewer.find("8 ranks"), std::string::npos) << fewer;
  const std::string uneven = moe::world_error(shape(3, 256), 3);
  EXPECT_NE(uneven.find("256 experts"), std::string::npos) << uneven;
  EXPECT_NE(uneven.find("world of 3"), std::string::npos) << uneven;
}

TEST(MoeGroup, ARankStartedWithOtherArgumentsIsRefusedByRankAndField) {
  std::vector<moe::LaunchFingerprint> all(3);
  for (auto& f : all) f.tokens = 128, f.masked_fraction = 0.25;
  EXPECT_EQ(thrown([&] { moe::check_fingerprints(all, 0); }), "");
  all[2].tokens = 64;
  const std::string tokens = thrown([&] { moe::check_fingerprints(all, 0); });
  EXPECT_NE(tokens.find("rank 2"), std::string::npos) << tokens;
  EXPECT_NE(tokens.find("--tokens 64"), std::string::npos) << tokens;
  all[2].tokens = 128;
  all[1].masked_fraction = 0.5;
  const std::string masked = thrown([&] { moe::check_fingerprints(all, 0); });
  EXPECT_NE(masked.find("--masked-fraction 0.5"), std::string::npos) << masked;
  all[1] = all[0];
  all[1].version = 99;
  EXPECT_NE(thrown([&] { moe::check_fingerprints(all, 0); }).find("version 99"), std::string::npos);
}

TEST(MoeGroup, EveryRanksRecordsAndChecksArriveInRankOrder) {
  constexpr int ranks = 3;
  constexpr size_t samples = 4;
  std::vector<std::vector<std::vector<moe::RankRecord>>> seen(ranks);
  std::vector<std::vector<moe::CheckSummary>> checks(ranks);
  on_group(ranks, 30, [&](bs::Bootstrap& pe) {
    std::vector<moe::RankRecord> mine;
    for (size_t i = 0; i < samples; ++i) mine.push_back(record(pe.rank(), i));
    seen[pe.rank()] = moe::gather_records(pe, mine);
    moe::CheckReport d, c;
    d.checked = 10;
    c.checked = 5;
    if (pe.rank() == 1) d.fail("token 3 of rank 1 differs");
    checks[pe.rank()] = moe::gather_checks(pe, moe::summarize_checks(d, c));
  });
  for (int me = 0; me < ranks; ++me) {
    ASSERT_EQ(seen[me].size(), size_t{ranks});
    for (int r = 0; r < ranks; ++r) {
      ASSERT_EQ(seen[me][r].size(), samples);
      EXPECT_EQ(seen[me][r][2].dispatch_us, record(r, 2).dispatch_us);
      EXPECT_EQ(seen[me][r][3].dispatch.posts, record(r, 3).dispatch.posts);
    }
    ASSERT_EQ(checks[me].size(), size_t{ranks});
    EXPECT_TRUE(moe::passed(checks[me][0]));
    EXPECT_FALSE(moe::passed(checks[me][1]));
    EXPECT_NE(std::string(checks[me][1].first).find("token 3 of rank 1"), std::string::npos);
  }
  // A sample's latency is its slowest rank's; the stamps are every rank's.
  const moe::MergedSample m = moe::merge_sample(seen[0], 1);
  EXPECT_EQ(m.dispatch_us, record(2, 1).dispatch_us);
  EXPECT_EQ(m.combine_us, record(2, 1).combine_us);
  ASSERT_EQ(m.dispatch.size(), size_t{ranks});
  EXPECT_EQ(m.dispatch[1].posts, record(1, 1).dispatch.posts);
}

TEST(MoeGroup, ARankThatNeverArrivesFailsTheOthersByNameWithinTheBound) {
  std::vector<std::string> errors(3);
  on_group(3, 0.5, [&](bs::Bootstrap& pe) {
    if (pe.rank() == 2) return;  // never sends its records
    errors[pe.rank()] = thrown([&] { moe::gather_records(pe, {record(pe.rank(), 0)}); });
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("rank 2"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("timed out"), std::string::npos) << errors[r];
  }
}

TEST(MoeGroup, IssueShareIsLastPostEndOverThePhase) {
  moe::PhaseStamps a{};
  a.not_begin_ns = ~uint64_t{1000};
  a.end_ns = 2000;
  a.last_post_end_ns = 1250;
  a.posts = 3;
  a.warps = 2;
  a.issue_ns = 400;  // 200 ns per warp inside the post calls
  moe::PhaseStamps b = a;
  b.last_post_end_ns = 1750;
  EXPECT_DOUBLE_EQ(moe::issue_share(a), 0.25);
  const moe::IssueSummary s = moe::summarize_issue({a, b});
  EXPECT_DOUBLE_EQ(s.share, 0.5);
  EXPECT_DOUBLE_EQ(s.end_us, 0.5);
  EXPECT_DOUBLE_EQ(s.post_us, 0.2);
  moe::PhaseStamps silent = a;
  silent.posts = 0;
  EXPECT_EQ(moe::issue_share(silent), 0.0) << "a phase that posted nothing issued nothing";
}
