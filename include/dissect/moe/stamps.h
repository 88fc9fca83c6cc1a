// In-kernel timestamps of one phase on one rank (globaltimer on the device, CLOCK_MONOTONIC on
// the host): when its first warp started and its last one ended, and how long the warps spent
// inside the transport's post calls (reserve, build, publish, ring: the issue time). The issue
// share of a phase is (issue_ns / warps) / (end - begin): the mean warp's time issuing over the
// phase's span, the measure the paper puts at 25 us of 0.49 ms for a DeepEP dispatch.
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
};

enum Phase : uint32_t { dispatch_phase = 0, combine_phase = 1, phases = 2 };
static_assert(sizeof(PhaseStamps) * phases <= STAMP_BYTES, "layout.h reserves STAMP_BYTES");

DISSECT_HD inline uint64_t stamp_begin(const PhaseStamps& p) { return ~p.not_begin_ns; }

// One warp's share, added once by its leader when it ends.
struct WarpClock {
  uint64_t begin = 0, issue = 0, posts = 0;
};

DISSECT_HD inline void publish_clock(PhaseStamps* p, const WarpClock& c) {
  if (p == nullptr) return;
  fetch_max<Scope::gpu>(&p->not_begin_ns, ~c.begin);
  fetch_max<Scope::gpu>(&p->end_ns, now_ns());
  fetch_add<Scope::gpu>(&p->issue_ns, c.issue);
  fetch_add<Scope::gpu>(&p->posts, c.posts);
  fetch_add<Scope::gpu>(&p->warps, uint64_t{1});
}

}  // namespace dissect::moe
