// Paced express windows in flight: fetched, checked and retired by the engine, their payloads and
// CQEs waiting for the dates the timing profile gave them (pace_payloads), up to HELD_WINDOWS
// windows an engine thread, released in the order they were held.
//
// Why: a NIC's pipeline does not stop while a message's latency runs. A paced window that waits
// its dates in place (finish_window's wait_until) holds its engine thread for doorbell_to_data +
// data_to_cqe (3.3 us under cx7-ib) besides its own work, so a QP moves at most one window per
// doorbell-to-CQE. Held, the thread serves the QP's next window, or another QP, meanwhile: under
// cx7-ib the proxy's worker QPs (gpu-proxy-rate, B = 16) rose 14-20 % (docs/softnic-engine.md,
// "Held windows").
//
// Order. The lanes release held windows oldest first, payloads before CQEs, so that one QP's
// payloads land in WQE order and its CQEs appear in slot order, as one WQE at a time has them
// (execute.h). Before any window that does not hold (a staged window, a DC batch, a flush, the lone
// window) they settle what they hold, waiting for the dates: that window's payloads and CQEs then
// come after. The held lone WQE (in_flight.h) and held windows are never held at once:
// serve_window settles the lone WQE before a window, and takes the lone window only with no
// window held.
//
// The host engine holds windows, its ring on the engine thread's stack; a Window without a ring
// (w.held null: a test driving serve_qp), any window when w.holds is 0, and the GPU engine's
// windows (lanes.h, HOLDS_WINDOWS: measured, holding gained its paced kernel nothing) wait in
// place. The code is written for lanes (Lanes::each, leader) as every window is, so that it runs
// on a warp unchanged should the GPU's paced windows come to hold.
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "window.h"

namespace dissect::softnic {

// Windows an engine thread holds at once: four carry one QP at ~39 M msg/s under cx7-ib's 3.3 us
// (4 x 32 WQEs per 3.3 us), above what one host engine thread executes (13-25 M msg/s).
inline constexpr uint32_t HELD_WINDOWS = 4;
// The inline bytes an express WQE carries (one WQEBB after ctrl, raddr and the byte count).
inline constexpr uint32_t HELD_INLINE_WORDS = (mlx5::MLX5_SEND_WQE_BB - (2 * mlx5::MLX5_SEND_WQE_DS + 4)) / 4;

// One WQE of a held window, written by its lane at the hold.
struct HeldWqe {
  uint8_t* destination;       // length 0: nothing moves (a NOP, a failed WQE)
  mlx5::mlx5_cqe64* entry;    // the CQE, its body written; null: none from this WQE
  union {
    const uint8_t* source;    // a pointer payload
    uint32_t bytes[HELD_INLINE_WORDS];  // an inline one (source_is_inline)
  };
  uint32_t cqe_tail;          // the last word publish_cqe stores
  uint16_t length;            // < WARP_COPY_BYTES: an express WQE's
  uint8_t source_is_inline;
};

enum HeldStage : uint32_t { HELD_PAYLOADS, HELD_CQES };

struct HeldWindow {
  uint64_t data_ns;  // when the payloads move
  uint64_t cqe_ns;   // when the CQEs are released (>= data_ns)
  uint64_t doorbell_rung_ns, doorbell_seen_ns;  // the CQEs' dates (stamp_cqe)
  uint32_t count;    // records: the window's executed WQEs
  uint32_t stage;    // HeldStage
  uint32_t system;   // the CQEs' observers are beyond the engine's GPU (publish_cqe's scope)
};

// A warp's ring: windows [head, tail) are held, the oldest at head % HELD_WINDOWS.
struct HeldWindows {
  HeldWqe wqe[HELD_WINDOWS][WINDOW_LANES];
  HeldWindow window[HELD_WINDOWS];
  uint32_t head;
  uint32_t tail;
};

// Whether the windows of `lanes` may be held: a paced window of a Window with a ring, on Lanes that
// hold windows (lanes.h, HOLDS_WINDOWS: the host engine's). The GPU kernels instantiate none of the
// ring's code (`if constexpr`, not a constant false the optimizer folds: with the dead calls in
// its IR, the fast kernel's inlining changed and its code grew by 2 %, ptxas sm_90).
template <typename Lanes>
DISSECT_HD inline bool holds_windows(const Lanes& lanes, const Window& w) {
  return paced(lanes, w) && w.held != nullptr;
}

// Lane k's WQE into its record: the payload's bytes from the WQEBB words it was read into (from
// word FIRST on, at constant indices: no local array), or its source.
template <uint32_t FIRST, uint32_t N>
DISSECT_HD inline void hold_wqe(HeldWqe& r, const WritePlan& plan, const uint32_t (&word)[N],
                                mlx5::mlx5_cqe64* entry, uint32_t cqe_tail) {
  static_assert(N - FIRST == HELD_INLINE_WORDS, "an express WQEBB's inline words");
  r.destination = plan.destination;
  r.length = static_cast<uint16_t>(plan.length);
  r.entry = entry;
  r.cqe_tail = cqe_tail;
  r.source_is_inline = plan.source == nullptr ? 1 : 0;
  if (plan.source != nullptr) {
    r.source = plan.source;
    return;
  }
  DISSECT_UNROLL
  for (uint32_t k = 0; k < HELD_INLINE_WORDS; ++k) {
    if (4 * k < plan.length) r.bytes[k] = word[FIRST + k];
  }
}

// A record's payload, its date come: the express window's copies (store_inline, copy_pointer).
DISSECT_HD inline void store_held_wqe(const HeldWqe& r) {
  if (r.length == 0) return;
  if (r.source_is_inline == 0) {
    copy_pointer(WritePlan{r.destination, r.source, r.length, nullptr, 0});
    return;
  }
  store_payload_words(r.destination, r.length, r.bytes);
}

// What the head of the ring needs now, decided by lane 0 alone (its clock; the lanes read theirs
// apart): HELD_NOTHING, or the step to take, its date come (spun to when within IN_FLIGHT_SPIN_NS
// or when `must`).
enum HeldStep : uint32_t { HELD_NOTHING, HELD_MOVE_PAYLOADS, HELD_RELEASE_CQES };
DISSECT_HD inline uint32_t next_held_step(const HeldWindows& ring, uint32_t keep) {
  if (ring.head == ring.tail) return HELD_NOTHING;
  const HeldWindow& h = ring.window[ring.head % HELD_WINDOWS];
  const bool must = ring.tail - ring.head > keep;
  const uint64_t date = h.stage == HELD_PAYLOADS ? h.data_ns : h.cqe_ns;
  if (!must && date > now_ns() + IN_FLIGHT_SPIN_NS) return HELD_NOTHING;
  wait_until(date);
  return h.stage == HELD_PAYLOADS ? HELD_MOVE_PAYLOADS : HELD_RELEASE_CQES;
}

// release_held_windows on a Window with a ring.
template <typename Lanes>
DISSECT_HD inline void release_held_windows_of(const Lanes& lanes, Window& w, uint32_t keep) {
  HeldWindows& ring = *w.held;
  for (;;) {
    const uint32_t step = lanes.alone([&] { return next_held_step(ring, keep); });
    if (step == HELD_NOTHING) return;
    const uint32_t at = ring.head % HELD_WINDOWS;
    HeldWindow& h = ring.window[at];
    const uint32_t count = h.count;
    if (step == HELD_MOVE_PAYLOADS) {
      lanes.each(count, [&](uint32_t k) { store_held_wqe(ring.wqe[at][k]); });
      lanes.leader([&] { h.stage = HELD_CQES; });
      continue;
    }
    // Every lane's payloads were stored before the barrier that ended their step: each lane's
    // release below covers them (publish_cqe: cumulativity), as in the express window.
    const bool system = h.system != 0;
    lanes.each(count, [&](uint32_t k) {
      const HeldWqe& r = ring.wqe[at][k];
      if (r.entry == nullptr) return;
      stamp_cqe(r.entry, now_ns(), h.doorbell_rung_ns, h.doorbell_seen_ns);
      if (system) {
        publish_cqe<Scope::system>(r.entry, r.cqe_tail);
      } else {
        publish_cqe<Scope::gpu>(r.entry, r.cqe_tail);
      }
    });
    lanes.leader([&] { ++ring.head; });
  }
}

// Releases held windows oldest first until at most `keep` are left, waiting for their dates, and
// beyond that those whose next step is due. Every lane of the warp calls it.
template <typename Lanes>
DISSECT_HD inline void release_held_windows(const Lanes& lanes, Window& w, uint32_t keep) {
  if constexpr (Lanes::HOLDS_WINDOWS) {
    if (holds_windows(lanes, w)) release_held_windows_of(lanes, w, keep);
  }
}

// Every held window released, waiting for its dates: before a window that does not hold, and when
// the engine stops.
template <typename Lanes>
DISSECT_HD inline void settle_held_windows(const Lanes& lanes, Window& w) {
  release_held_windows(lanes, w, 0);
}

// The engine loop's step each pass, and each window's before its head: what is due.
template <typename Lanes>
DISSECT_HD inline void release_due_held_windows(const Lanes& lanes, Window& w) {
  release_held_windows(lanes, w, HELD_WINDOWS);
}

// Whether no window of `lanes` is held (always, in the fast kernel).
template <typename Lanes>
DISSECT_HD inline bool holds_no_window(const Lanes& lanes, const Window& w) {
  if constexpr (Lanes::HOLDS_WINDOWS) {
    return !holds_windows(lanes, w) || w.held->head == w.held->tail;
  } else {
    return true;
  }
}

// Whether the ring is full: serve_window then fetches nothing more until its oldest window leaves
// (a NIC's limit on operations in flight), so that the send queue's WQEs form a larger window then.
// Releasing the oldest early instead (waiting for its dates) made a ring of the one- or two-WQE
// windows of a trickle of doorbells a wait per few WQEs: gpu-proxy-rate at B = 1 under cx7-ib
// read 6.3 and 5.8 M msg/s against 8.0 and 6.8 waiting in place (H100, stop 39 call 4).
template <typename Lanes>
DISSECT_HD inline bool held_windows_full(const Lanes& lanes, const Window& w) {
  if constexpr (Lanes::HOLDS_WINDOWS) {
    return holds_windows(lanes, w) && w.holds != 0 && w.held->tail - w.held->head >= HELD_WINDOWS;
  } else {
    return false;
  }
}

// The ring's next free window, the oldest released first when all are held (a caller that does not
// go through serve_window, which fetches nothing while the ring is full). Every lane calls it; the
// index is the same in every lane.
template <typename Lanes>
DISSECT_HD inline uint32_t next_held_window(const Lanes& lanes, Window& w) {
  release_held_windows(lanes, w, HELD_WINDOWS - 1);
  return w.held->tail % HELD_WINDOWS;
}

// The window's header, by the leader once every lane wrote its record: the window is then held.
DISSECT_HD inline void close_held_window(Window& w, uint32_t at, const QpContext& v, uint64_t data_ns,
                                         uint32_t count, bool system) {
  HeldWindow& h = w.held->window[at];
  h.data_ns = data_ns;
  h.cqe_ns = cqe_release_ns(w.profile, data_ns);
  h.doorbell_rung_ns = v.doorbell_rung_ns;
  h.doorbell_seen_ns = v.doorbell_seen_ns;
  h.count = count;
  h.stage = HELD_PAYLOADS;
  h.system = system ? 1 : 0;
  ++w.held->tail;
}

}  // namespace dissect::softnic
