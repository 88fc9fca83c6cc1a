#include "dissect/moe/group.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "dissect/common/error.h"

namespace dissect::moe {
namespace {

template <class T>
std::string text(T value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Raw bytes of every rank's `count` values of T, rank r's at r x count.
template <class T>
std::vector<std::vector<T>> allgather_vector(bootstrap::Bootstrap& group, const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::vector<uint8_t> bytes = group.allgather(mine.data(), mine.size() * sizeof(T));
  std::vector<std::vector<T>> out(static_cast<size_t>(group.world_size()), std::vector<T>(mine.size()));
  for (size_t r = 0; r < out.size(); ++r) {
    if (!mine.empty()) std::memcpy(out[r].data(), bytes.data() + r * mine.size() * sizeof(T), mine.size() * sizeof(T));
  }
  return out;
}

}  // namespace

std::string world_error(const MoeShape& s, int world_size) {
  if (world_size < 1 || static_cast<uint32_t>(world_size) != s.ranks) {
    return "moe: the launch has " + std::to_string(world_size) + " processes but the shape has " +
           std::to_string(s.ranks) + " ranks (--ranks): one rank per process needs them equal";
  }
  if (s.experts % s.ranks != 0) {
    return "moe: " + std::to_string(s.experts) + " experts (--experts) do not spread evenly over a world of " +
           std::to_string(world_size) + " processes, one rank each";
  }
  return shape_error(s);
}

void check_fingerprints(const std::vector<LaunchFingerprint>& all, int me) {
  const LaunchFingerprint& m = all.at(static_cast<size_t>(me));
  for (size_t r = 0; r < all.size(); ++r) {
    const LaunchFingerprint& p = all[r];
    const std::string who = "moe rank " + std::to_string(me) + ": rank " + std::to_string(r);
    if (p.magic != LAUNCH_FINGERPRINT_MAGIC || p.version != LAUNCH_FINGERPRINT_VERSION) {
      throw Error(who + " sent a launch record of magic " + hex(p.magic) + " version " +
                  std::to_string(p.version) + ", expected " + hex(LAUNCH_FINGERPRINT_MAGIC) +
                  " version " + std::to_string(LAUNCH_FINGERPRINT_VERSION) + " (another build?)");
    }
    const auto differ = [&](const char* field, auto mine, auto theirs) {
      if (mine == theirs) return;
      throw Error(who + " was started with " + field + " " + text(theirs) + ", this rank with " +
                  text(mine) + ": every process of a launch needs the same arguments");
    };
    differ("--hidden", m.hidden, p.hidden);
    differ("--top-k", m.top_k, p.top_k);
    differ("--experts", m.experts, p.experts);
    differ("--ranks", m.ranks, p.ranks);
    differ("--tokens", m.tokens, p.tokens);
    differ("--transport (0 mini-gda, 1 mini-proxy)", m.transport, p.transport);
    differ("--provider (0 softnic, 1 mlx5)", m.provider, p.provider);
    differ("--doorbell-batch", m.doorbell_batch, p.doorbell_batch);
    differ("--warps-per-rank", m.warps_per_rank, p.warps_per_rank);
    differ("--seed", m.seed, p.seed);
    differ("--masked-fraction", m.masked_fraction, p.masked_fraction);
    differ("--runs", m.runs, p.runs);
    differ("samples per run (--warmup + --iterations)", m.samples_per_run, p.samples_per_run);
  }
}

CheckSummary summarize_checks(const CheckReport& dispatch, const CheckReport& combine) {
  CheckSummary s;
  s.dispatch_checked = dispatch.checked;
  s.dispatch_mismatches = dispatch.mismatches;
  s.combine_checked = combine.checked;
  s.combine_mismatches = combine.mismatches;
  const std::string first = !dispatch.first.empty() ? "dispatch: " + dispatch.first[0]
                            : !combine.first.empty() ? "combine: " + combine.first[0]
                                                     : std::string();
  std::strncpy(s.first, first.c_str(), sizeof s.first - 1);
  return s;
}

bool passed(const CheckSummary& s) {
  return s.dispatch_checked > 0 && s.combine_checked > 0 && s.dispatch_mismatches == 0 &&
         s.combine_mismatches == 0;
}

std::vector<std::vector<RankRecord>> gather_records(bootstrap::Bootstrap& group,
                                                    const std::vector<RankRecord>& mine) {
  return allgather_vector(group, mine);
}

std::vector<CheckSummary> gather_checks(bootstrap::Bootstrap& group, const CheckSummary& mine) {
  std::vector<CheckSummary> out;
  for (auto& one : allgather_vector(group, std::vector<CheckSummary>{mine})) {
    out.push_back(one.at(0));
    out.back().first[sizeof out.back().first - 1] = '\0';  // a peer's text, terminated here
  }
  return out;
}

MergedSample merge_sample(const std::vector<std::vector<RankRecord>>& records, size_t index) {
  MergedSample m;
  for (const auto& rank : records) {
    const RankRecord& r = rank.at(index);
    m.dispatch_us = std::max(m.dispatch_us, r.dispatch_us);
    m.combine_us = std::max(m.combine_us, r.combine_us);
    m.dispatch.push_back(r.dispatch);
    m.combine.push_back(r.combine);
  }
  return m;
}

IssueSummary summarize_issue(const std::vector<PhaseStamps>& ranks) {
  IssueSummary s;
  if (ranks.empty()) return s;
  for (const PhaseStamps& p : ranks) {
    s.share += issue_share(p);
    const uint64_t begin = stamp_begin(p);
    if (p.posts != 0 && p.last_post_end_ns >= begin) s.end_us += double(p.last_post_end_ns - begin) / 1e3;
    s.post_us += p.warps ? double(p.issue_ns) / double(p.warps) / 1e3 : 0;
  }
  const double n = double(ranks.size());
  s.share /= n;
  s.end_us /= n;
  s.post_us /= n;
  return s;
}

}  // namespace dissect::moe
