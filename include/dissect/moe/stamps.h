// In-kernel timestamps of one phase on one rank (globaltimer on the device, CLOCK_MONOTONIC on
// the host): when its first warp started, when its last post returned and its last warp ended,
// and how long the warps spent inside the transport's post calls (reserve, build, publish, ring).
// The issue share of a phase is (last_post_end - begin) / (end - begin): how far into the phase
// the rank finished issuing, the measure the paper puts at 25 us of 0.49 ms for a DeepEP dispatch
// (issue_share below). issue_ns / warps is the mean warp's time inside the post calls, beside it.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/moe/layout.h"

namespace dissect::moe {

struct PhaseStamps {
  uint64_t not_begin_ns;  // ~(earliest start): fetch_max of the complement is an atomic minimum
  uint64_t end_ns;        // latest end
  uint64_t issue_ns;      // summed over warps
  uint64_t posts;         // WQEs posted (messages and signals)
  uint64_t warps;
  uint64_t last_post_end_ns;  // latest return of any warp's last post (0: no post)
};

enum Phase : uint32_t { dispatch_phase = 0, combine_phase = 1, phases = 2 };
static_assert(sizeof(PhaseStamps) * phases <= STAMP_BYTES, "layout.h reserves STAMP_BYTES");

DISSECT_HD inline uint64_t stamp_begin(const PhaseStamps& p) { return ~p.not_begin_ns; }

// One warp's share, added once by its leader when it ends.
struct WarpClock {
  uint64_t begin = 0, issue = 0, posts = 0;
  uint64_t last_post_end = 0;  // when the warp's latest post returned
};

DISSECT_HD inline void publish_clock(PhaseStamps* p, const WarpClock& c) {
  if (p == nullptr) return;
  fetch_max<Scope::gpu>(&p->not_begin_ns, ~c.begin);
  fetch_max<Scope::gpu>(&p->end_ns, now_ns());
  fetch_add<Scope::gpu>(&p->issue_ns, c.issue);
  fetch_add<Scope::gpu>(&p->posts, c.posts);
  fetch_add<Scope::gpu>(&p->warps, uint64_t{1});
  if (c.posts != 0) fetch_max<Scope::gpu>(&p->last_post_end_ns, c.last_post_end);
}

// (last post end - begin) / (end - begin) of one rank's phase; 0 when it posted nothing or its
// span is empty.
DISSECT_HD inline double issue_share(const PhaseStamps& p) {
  const uint64_t begin = stamp_begin(p);
  if (p.posts == 0 || p.end_ns <= begin || p.last_post_end_ns < begin) return 0;
  return double(p.last_post_end_ns - begin) / double(p.end_ns - begin);
}

}  // namespace dissect::moe
