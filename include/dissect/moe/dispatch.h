// DeepEP's low-latency dispatch on this project's transports, one body for the GPU (a warp) and
// the host (a thread standing in for one; moe/lanes.h). One call of dispatch() is one warp's
// share of one rank's dispatch; warps 0..W-1 of a rank together do all of it:
//
//   send     warp w takes tokens w, w + W, ...: packs the token once into send_x (FP8 + scales),
//            then for each top-k expert e that is not masked takes a slot from next_slot[e] (an
//            atomic) and writes the message to rank(e)'s recv_x[local(e)][this rank][slot] on the
//            QP for local(e); then counts it in finished[e]
//   count    warp w takes experts w, w + W, ...: waits until finished[e] holds every token this
//            rank routed to e, then adds n + 1 to rank(e)'s recv_count[local(e)][this rank] on
//            the same QP, after the data (DeepEP's count encoding: 0 means "not yet")
//   receive  warp w takes (local expert, source) pairs w, w + W, ...: waits (bounded, naming rank,
//            expert and source) for the count, reserves n rows of the expert's packed output with
//            an atomic, and copies each message's FP8 bytes, scales and source index there
//
// Every warp of every rank must be running at once: counts wait for other warps' sends and
// receives for other ranks' counts (the GPU launch sizes the grid to be co-resident).
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/gda/status.h"
#include "dissect/moe/handle.h"
#include "dissect/moe/lanes.h"
#include "dissect/moe/message.h"
#include "dissect/moe/stamps.h"
#include "dissect/moe/wait.h"

namespace dissect::moe {

// Runs post() in the leader and times it into the warp's clock (its duration, and when it
// returned: the phase's last post end); every lane gets its status.
template <typename Lanes, typename Post>
DISSECT_HD inline gda::Status timed_post(const Lanes& lanes, WarpClock& clock, Post&& post) {
  gda::Status s = gda::Status::ok;
  if (lanes.leader()) {
    const uint64_t t0 = now_ns();
    s = post();
    clock.last_post_end = now_ns();
    clock.issue += clock.last_post_end - t0;
    ++clock.posts;
  }
  return lanes.broadcast(s);
}

template <typename Transport, typename Lanes>
DISSECT_HD inline gda::Status dispatch_send_token(const Lanes& lanes, const MoeRankHandle& h,
                                                  uint32_t token, WarpClock& clock) {
  const MoeShape& s = h.shape;
  const uint32_t message_bytes = dispatch_message_bytes(s);
  uint8_t* message = region<uint8_t>(h, h.layout.send_x) + uint64_t{token} * message_bytes;
  pack_dispatch_message(lanes, s, region<uint16_t>(h, h.layout.x) + uint64_t{token} * s.hidden,
                        token, message);
  lanes.sync();  // every lane's message stores before the leader's WQE (gda/warp.h)
  const int32_t* topk = region<int32_t>(h, h.layout.topk_idx) + uint64_t{token} * s.top_k;
  uint32_t* next_slot = region<uint32_t>(h, h.layout.next_slot);
  uint32_t* finished = region<uint32_t>(h, h.layout.finished);
  for (uint32_t k = 0; k < s.top_k; ++k) {
    const int32_t expert = topk[k];
    if (expert < 0) continue;
    const uint32_t e = static_cast<uint32_t>(expert), d = expert_rank(s, e);
    const uint32_t local = expert_local_index(s, e);
    const gda::Status status = timed_post(lanes, clock, [&] {
      const uint32_t slot = fetch_add<Scope::gpu>(&next_slot[e], 1u);
      const gda::Status posted = Transport::send(
          h, d, local, h.layout.send_x + uint64_t{token} * message_bytes,
          recv_x_offset(s, h.layout, local, h.rank, slot), message_bytes, slot);
      // A release: the counting warp that sees this increment (acquire) reserves the count's WQE
      // after this message's, so the count follows the data on the QP.
      fence_release<Scope::gpu>();
      fetch_add<Scope::gpu>(&finished[e], 1u);
      return posted;
    });
    if (status != gda::Status::ok) return status;
  }
  return gda::Status::ok;
}

template <typename Transport, typename Lanes>
DISSECT_HD inline gda::Status dispatch_send_count(const Lanes& lanes, const MoeRankHandle& h,
                                                  uint32_t expert, WarpClock& clock) {
  const MoeShape& s = h.shape;
  const int32_t* topk = region<int32_t>(h, h.layout.topk_idx);
  uint32_t mine = 0;
  for (uint32_t i = lanes.first(); i < s.tokens * s.top_k; i += lanes.step) {
    mine += topk[i] == static_cast<int32_t>(expert) ? 1u : 0u;
  }
  const uint32_t routed = lane_sum(lanes, mine);
  const uint32_t d = expert_rank(s, expert), local = expert_local_index(s, expert);
  uint32_t* finished = region<uint32_t>(h, h.layout.finished) + expert;
  gda::Status status = gda::Status::ok;
  if (lanes.leader()) {
    uint64_t seen = 0;
    BoundedWait wait(h.timeout_ns);
    while ((seen = load_acquire<Scope::gpu>(finished)) != routed) {
      if (wait.expired()) {
        report_moe_timeout({"sends (local) before the count", h.rank, expert, h.rank},
                           wait.waited_ns(), seen);
        status = gda::Status::timeout;
        break;
      }
    }
  }
  status = lanes.broadcast(status);
  if (status != gda::Status::ok) return status;
  return timed_post(lanes, clock, [&] {
    return Transport::signal(h, d, local, recv_count_offset(s, h.layout, local, h.rank), routed + 1);
  });
}

// DeepEP's packed_recv_layout_range entry: count in the high half, first row in the low half.
DISSECT_HD inline uint64_t pack_range(uint32_t count, uint32_t begin) {
  return (uint64_t{count} << 32) | begin;
}

template <typename Lanes>
DISSECT_HD inline gda::Status dispatch_receive(const Lanes& lanes, const MoeRankHandle& h,
                                               uint32_t local, uint32_t source) {
  const MoeShape& s = h.shape;
  const ArenaLayout& a = h.layout;
  uint64_t* count_word = region<uint64_t>(h, recv_count_offset(s, a, local, source));
  uint64_t seen = 0;
  gda::Status status = gda::Status::ok;
  uint32_t begin = 0, count = 0;
  if (lanes.leader()) {
    const WaitTarget target{"dispatch count", h.rank, h.rank * local_experts(s) + local, source};
    status = wait_word(count_word, [](uint64_t v) { return v != 0; }, target, h.timeout_ns, &seen);
    count = static_cast<uint32_t>(seen - 1);  // n + 1 -> n
    if (status == gda::Status::ok && count > s.max_tokens) status = gda::Status::invalid_request;
    if (status == gda::Status::ok) {
      begin = fetch_add<Scope::gpu>(region<uint32_t>(h, a.packed_count) + local, count);
      region<uint64_t>(h, a.packed_layout_range)[uint64_t{local} * s.ranks + source] =
          pack_range(count, begin);
      *count_word = 0;  // this warp alone reads the word; the next dispatch adds to zero again
    }
  }
  status = lanes.broadcast(status);
  if (status != gda::Status::ok) return status;
  count = lanes.broadcast(count);
  begin = lanes.broadcast(begin);
  lanes.sync();  // the leader's acquire of the count before every lane's reads of the messages
  const uint64_t scale_bytes = uint64_t{scales_per_token(s)} * 4;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t* message = region<uint8_t>(h, recv_x_offset(s, a, local, source, i));
    const uint64_t row = uint64_t{local} * expert_capacity(s) + begin + i;
    copy_words(lanes, region<uint8_t>(h, a.packed_x) + row * s.hidden, message_fp8(message),
               s.hidden);
    copy_words(lanes, region<uint8_t>(h, a.packed_scales) + row * scale_bytes,
               message_scales(message, s), static_cast<uint32_t>(scale_bytes));
    if (lanes.leader()) {
      int32_t source_token;  // the header is 4-aligned only when the message size is not 16k
      memcpy(&source_token, message, sizeof source_token);
      region<int32_t>(h, a.packed_src_info)[row] = source_token;
    }
  }
  return gda::Status::ok;
}

// Zeroes the rank's per-call counters (next_slot, finished, packed_count). It must have finished
// (a kernel before the dispatch kernel, or a host step) before any warp of the rank's dispatch
// starts; DeepEP clears the same counters in its previous kernel.
template <typename Lanes>
DISSECT_HD inline void reset_dispatch(const Lanes& lanes, const MoeRankHandle& h) {
  const MoeShape& s = h.shape;
  for (uint32_t e = lanes.first(); e < s.experts; e += lanes.step) {
    region<uint32_t>(h, h.layout.next_slot)[e] = 0;
    region<uint32_t>(h, h.layout.finished)[e] = 0;
  }
  for (uint32_t l = lanes.first(); l < local_experts(s); l += lanes.step) {
    region<uint32_t>(h, h.layout.packed_count)[l] = 0;
  }
}

// One warp's share of one rank's dispatch (warp `warp` of `warps`); stamps may be null.
template <typename Transport, typename Lanes>
DISSECT_HD inline gda::Status dispatch(const Lanes& lanes, const MoeRankHandle& h, uint32_t warp,
                                       uint32_t warps, PhaseStamps* stamps) {
  const MoeShape& s = h.shape;
  WarpClock clock;
  clock.begin = now_ns();
  gda::Status status = gda::Status::ok;
  for (uint32_t t = warp; t < s.tokens && status == gda::Status::ok; t += warps) {
    status = dispatch_send_token<Transport>(lanes, h, t, clock);
  }
  for (uint32_t e = warp; e < s.experts && status == gda::Status::ok; e += warps) {
    status = dispatch_send_count<Transport>(lanes, h, e, clock);
  }
  const uint32_t pairs = local_experts(s) * s.ranks;
  for (uint32_t p = warp; p < pairs && status == gda::Status::ok; p += warps) {
    status = dispatch_receive(lanes, h, p / s.ranks, p % s.ranks);
  }
  if (lanes.leader()) publish_clock(stamps, clock);
  return status;
}

}  // namespace dissect::moe
