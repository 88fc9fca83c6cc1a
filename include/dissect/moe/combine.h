// DeepEP's low-latency combine, the reverse of moe/dispatch.h, and the stand-in expert between
// them. One call of combine() is one warp's share of one rank's combine:
//
//   send     warp w takes (local expert, destination rank) pairs w, w + W, ...: for each row the
//            dispatch packed from that rank (layout_range), writes the expert's BF16 output to the
//            destination's combine_recv_x[global expert][source token] on the QP for the local
//            expert, then adds 1 to the destination's combine_recv_flag[global expert] after it
//   receive  warp w takes this rank's tokens w, w + W, ...: waits (bounded, naming rank, expert and
//            source) until the flag of each of the token's experts reaches `epoch`, then writes the
//            weighted sum of the top-k outputs, masked entries skipped, to combined_x
//
// The flags count combines (1, 2, ...) and are never reset: the caller passes the epoch, the
// number of this combine since the arena was zeroed.
#pragma once

#include <cstdint>

#include "dissect/moe/dispatch.h"

namespace dissect::moe {

// Runs the stand-in expert (moe/message.h) on every row the dispatch packed; warp w of W takes
// rows w, w + W, ... of each local expert. Not part of the communication: run between phases.
template <typename Lanes>
DISSECT_HD inline void run_experts(const Lanes& lanes, const MoeRankHandle& h, uint32_t warp,
                                   uint32_t warps) {
  const MoeShape& s = h.shape;
  const ArenaLayout& a = h.layout;
  for (uint32_t local = 0; local < local_experts(s); ++local) {
    // An atomic load: the count was added to by the dispatch's receivers (other warps or threads)
    // after a plain reset by this rank's reset_dispatch; a plain load let GCC -O2 forward the
    // reset's zero to it in the CPU tier's rig.
    const uint32_t rows = load_acquire<Scope::gpu>(region<uint32_t>(h, a.packed_count) + local);
    for (uint32_t r = warp; r < rows; r += warps) {
      const uint64_t row = uint64_t{local} * expert_capacity(s) + r;
      run_expert(lanes, s, h.rank * local_experts(s) + local,
                 region<uint8_t>(h, a.packed_x) + row * s.hidden,
                 region<float>(h, a.packed_scales) + row * scales_per_token(s),
                 region<uint16_t>(h, a.expert_out) + row * s.hidden);
    }
  }
}

template <typename Transport, typename Lanes>
DISSECT_HD inline gda::Status combine_send(const Lanes& lanes, const MoeRankHandle& h,
                                           uint32_t local, uint32_t destination, WarpClock& clock) {
  const MoeShape& s = h.shape;
  const ArenaLayout& a = h.layout;
  const uint64_t range = region<uint64_t>(h, a.packed_layout_range)[uint64_t{local} * s.ranks + destination];
  const uint32_t count = static_cast<uint32_t>(range >> 32), begin = static_cast<uint32_t>(range);
  const uint32_t expert = h.rank * local_experts(s) + local;
  const uint32_t bytes = combine_message_bytes(s);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t row = uint64_t{local} * expert_capacity(s) + begin + i;
    const auto token = static_cast<uint32_t>(region<int32_t>(h, a.packed_src_info)[row]);
    const gda::Status status = timed_post(lanes, clock, [&] {
      return Transport::send(h, destination, local, a.expert_out + row * bytes,
                             combine_recv_offset(s, a, expert, token), bytes, i);
    });
    if (status != gda::Status::ok) return status;
  }
  return timed_post(lanes, clock, [&] {
    return Transport::signal(h, destination, local, combine_flag_offset(a, expert), 1);
  });
}

template <typename Lanes>
DISSECT_HD inline gda::Status combine_receive(const Lanes& lanes, const MoeRankHandle& h,
                                              uint32_t token, uint64_t epoch) {
  const MoeShape& s = h.shape;
  const ArenaLayout& a = h.layout;
  const int32_t* topk = region<int32_t>(h, a.topk_idx) + uint64_t{token} * s.top_k;
  gda::Status status = gda::Status::ok;
  if (lanes.leader()) {
    for (uint32_t k = 0; k < s.top_k && status == gda::Status::ok; ++k) {
      if (topk[k] < 0) continue;
      const auto e = static_cast<uint32_t>(topk[k]);
      uint64_t seen = 0;
      const WaitTarget target{"combine flag", h.rank, e, expert_rank(s, e)};
      status = wait_word(region<uint64_t>(h, combine_flag_offset(a, e)),
                         [epoch](uint64_t v) { return v >= epoch; }, target, h.timeout_ns, &seen);
    }
  }
  status = lanes.broadcast(status);
  if (status != gda::Status::ok) return status;
  lanes.sync();  // the leader's acquire loads before every lane's reads of the outputs
  combine_token(
      lanes, s, region<float>(h, a.topk_weights) + uint64_t{token} * s.top_k,
      [&](uint32_t k) -> const uint16_t* {
        if (topk[k] < 0) return nullptr;
        return reinterpret_cast<const uint16_t*>(
            h.arena + combine_recv_offset(s, a, static_cast<uint32_t>(topk[k]), token));
      },
      region<uint16_t>(h, a.combined_x) + uint64_t{token} * s.hidden);
  return gda::Status::ok;
}

// One warp's share of one rank's combine (warp `warp` of `warps`); stamps may be null.
template <typename Transport, typename Lanes>
DISSECT_HD inline gda::Status combine(const Lanes& lanes, const MoeRankHandle& h, uint32_t warp,
                                      uint32_t warps, uint64_t epoch, PhaseStamps* stamps) {
  const MoeShape& s = h.shape;
  WarpClock clock;
  clock.begin = now_ns();
  gda::Status status = gda::Status::ok;
  const uint32_t pairs = local_experts(s) * s.ranks;
  for (uint32_t p = warp; p < pairs && status == gda::Status::ok; p += warps) {
    status = combine_send<Transport>(lanes, h, p / s.ranks, p % s.ranks, clock);
  }
  for (uint32_t t = warp; t < s.tokens && status == gda::Status::ok; t += warps) {
    status = combine_receive(lanes, h, t, epoch);
  }
  if (lanes.leader()) publish_clock(stamps, clock);
  return status;
}

}  // namespace dissect::moe
