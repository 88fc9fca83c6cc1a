// DC WRITEs under a timing profile, a batch at a time (docs/dc.md, "Execution"). Before, every DC
// WQE ran alone (serve_alone -> execute_dc_write) and waited its whole modelled latency in the
// engine warp, one WQE after the other, behind a chain of some twenty dependent memory round trips
// of its own (refresh, stage, ctrl, fabric, DCT, keys, connect, pipe): on the H200 a DCI moved one
// write per ~13 us (Figure 10b: 4.9 Mmsg/s from 64 DCIs on 64 warps) and a burst held its warp
// long enough to starve the engine watchdog's heartbeat.
//
// A batch is what RC's window is for a connected QP (window.h finish_window): up to 32 announced
// DC WRITEs (inline, or one data segment; each naming its own DCT), lane k checking WQE k against
// the DCT its address vector names (check_dc_write: the same checks and syndromes as the WQE run
// alone), one pacing for the batch (the pipe claimed for its messages and bytes, the DC connects
// the connect rule gives its WQEs added to the doorbell's latency), one wait for the payloads, one
// for the CQEs. So a burst pays one modelled latency per batch, not per WQE, and the warp is held
// for a batch's modelled latency exactly as an RC window holds it: RC's window, too, waits in its
// warp (pace_payloads' wait_until, then data_to_cqe_ns); nothing in the engine releases a CQE at a
// later time without waiting for it.
//
// The connect rule (dc_timing.h) per WQE, as one at a time: WQE k connects when its DCT is not the
// one WQE k - 1 named (WQE 0: the DCI's dc_connected); the DCI stays connected to the batch's last
// DCT when more is announced after it, else disconnects. The connection-state model (its send side
// once per batch for the DCI, a reconnect miss at each change of destination; its receive side per
// WQE at the DCT's NIC), the DCT's connect and rx counters: per WQE, as before.
//
// `fast` never comes here (serve_window takes a DCI's WQEs through serve_alone, no clock read).
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "connection_state.h"
#include "dc_timing.h"
#include "execute.h"
#include "lanes.h"
#include "lone.h"
#include "pipe.h"
#include "window.h"

namespace dissect::softnic {

// Phase 1 for the staged WQEBB at `offset`: the size of the DC WRITE starting there if it can
// join a batch (announced and staged in full; inline or one data segment), else 0: a WQE that
// cannot (a NOP, a gather, another opcode, a bad ds or ctrl) runs alone when it is first, through
// execute_and_retire, which gives it its outcome.
DISSECT_HD inline uint8_t dc_batch_wqe_size(const QpContext& v, const mlx5::send_ring& staged,
                                            uint32_t offset, uint32_t available) {
  using namespace mlx5;
  const uint64_t start = v.sq_consumer + offset;
  const mlx5_wqe_ctrl_seg ctrl = *reinterpret_cast<const mlx5_wqe_ctrl_seg*>(staged.wqebb(start));
  const uint32_t ds = ctrl_ds(ctrl);
  if (ctrl_wqe_index(ctrl) != static_cast<uint16_t>(start) || ctrl_qpn(ctrl) != v.qpn || ds == 0) return 0;
  const uint32_t wqebbs = wqebbs_for_ds(ds);
  if (offset + wqebbs > available || offset + wqebbs > WINDOW_LANES) return 0;
  if (ctrl_opcode(ctrl) != MLX5_OPCODE_RDMA_WRITE || ds < 1 + DC_AV_COMPACT_DS + 2) return 0;
  const uint32_t payload_at = 1 + read_dc_address(staged, start).av_ds + 1;
  if (ds < payload_at + 1) return 0;
  const auto* data = reinterpret_cast<const mlx5_wqe_data_seg*>(staged.segment(start, payload_at));
  const bool is_inline = (data->byte_count.value() & MLX5_INLINE_SEG) != 0;
  return (is_inline || ds == payload_at + 1) ? static_cast<uint8_t>(wqebbs) : 0;
}

// The DCI's connection tag of the DC WQE at `start` of the stage, from its AV alone (the LID is
// the target NIC's id + 1: lid_of_nic), so a lane reads its predecessor's without its lookups.
DISSECT_HD inline uint32_t staged_dc_tag(const mlx5::send_ring& staged, uint64_t start) {
  const DcAddress a = read_dc_address(staged, start);
  return dc_connection_tag(static_cast<uint32_t>(a.rlid) - 1u, a.dctn);
}

// What lane k keeps of WQE k between the phases (in its registers on the GPU: Lanes::SLOTS).
struct DcLane {
  NicTables* nic;        // the DCT's NIC, as this engine reaches it (checks passed)
  DctContext* dct;
  bool through_route;    // resolved through the DCI's route (QpCopy::dc_route): no fabric lookup
  uint32_t tag;          // dc_connection_tag of its DCT
  uint32_t received;     // its target pipe's claim ends this long after the doorbell was seen (ns)
  bool connect;          // the connect rule: this WQE connects first
  bool send_miss;        // the connection-state model: the DCI's context missed (or re-installed)
};

// A batch's inline payload from the stage (its offset in the WQE follows the AV), or a pointer
// payload from its registered source.
DISSECT_HD inline void perform_dc_payload(const mlx5::send_ring& staged, uint64_t start, const WritePlan& plan) {
  if (plan.source == nullptr) {
    mlx5::copy_from_wqe(staged, start, plan.payload_at * mlx5::MLX5_SEND_WQE_DS + 4, plan.destination,
                        static_cast<uint32_t>(plan.length));
  } else if (overlaps(plan)) {
    copy_bytes(plan.destination, plan.source, plan.length);
  } else {
    copy_unaliased(plan.destination, plan.source, plan.length);
  }
}

// The checks of the staged DC WRITE at `start` (dc_batch_wqe_size took it: a WRITE, inline or one
// data segment), against the DCT its AV names: through the DCI's route when the AV names the route's
// DCT, the route's DCT fields and the key entries read at once, one round trip after the stage
// (check_dc_write walks the fabric entry, the DCT count, `valid` and key, the NIC's header and the
// rkey's entry one after the other). Fills `plan` and the lane's target.
DISSECT_HD inline uint8_t check_staged_dc(const QpCopy& c, const mlx5::send_ring& staged, const NicTables& local,
                                          uint64_t start, WritePlan* plan, DcLane& l) {
  using namespace mlx5;
  const QpContext& v = c.view;
  const mlx5_wqe_ctrl_seg ctrl = *reinterpret_cast<const mlx5_wqe_ctrl_seg*>(staged.wqebb(start));
  const uint32_t ds = ctrl_ds(ctrl);
  const DcAddress address = read_dc_address(staged, start);
  const uint32_t payload_at = 2 + address.av_ds;
  const auto* raddr = reinterpret_cast<const mlx5_wqe_raddr_seg*>(staged.segment(start, 1 + address.av_ds));
  const auto* data = reinterpret_cast<const mlx5_wqe_data_seg*>(staged.segment(start, payload_at));
  const uint32_t rkey = raddr->rkey.value();
  const uint32_t count = data->byte_count.value();
  const uint32_t lkey = data->lkey.value();
  const bool is_inline = (count & MLX5_INLINE_SEG) != 0;
  const bool via = route_matches(c.dc_route, address);
  // In flight at once: the route's DCT, the rkey's entry in its NIC's table, the lkey's.
  const DctFields fields = load_dct_fields(via ? c.dc_route.dct : nullptr);
  const MrEntry routed_rkey = via ? load_mr(c.dc_route.mrs, rkey) : MrEntry{};
  const MrEntry lkey_entry = is_inline ? MrEntry{} : load_mr(c.local_mrs, lkey);
  const DcResolution r = resolve_dc(local, c.dc_route, fields, address);
  const MrEntry rkey_entry = via ? routed_rkey : (r.key_matches ? load_mr(mr_table(*r.nic), rkey) : MrEntry{});
  l.nic = r.nic;
  l.dct = r.dct;
  l.through_route = r.through_route;
  return check_dc_one_segment(v, ds, payload_at, raddr->raddr.value(), rkey, count, data->addr.value(), lkey,
                              lkey_entry, rkey_entry, r, plan);
}

// Lane k's share of the batch's pacing: its connect, its send-side lookup, its receive side.
DISSECT_HD inline void pace_dc_lane(NicTables& local, const QpContext& v, const mlx5::send_ring& staged,
                                    const WindowWqe* wqes, uint32_t k, DcLane& l) {
  const TimingProfile& p = local.profile;
  const uint64_t start = v.sq_consumer + wqes[k].offset;
  const uint32_t previous = k == 0 ? v.dc_connected : staged_dc_tag(staged, v.sq_consumer + wqes[k - 1].offset);
  l.tag = staged_dc_tag(staged, start);
  l.connect = l.tag != previous;
  // Counted at the DCT, which DCIs of several engine warps or threads may connect to at once.
  if (l.connect) add_relaxed<Scope::system>(&l.dct->connects, 1u);  // the DCT may be another GPU's
  l.send_miss = false;
  l.received = 0;
  if (!connection_model(p)) return;
  const uint32_t to = l.tag & 0x7fffffffu;  // dc_connection_state's destination word
  const uint32_t before = k == 0 ? v.dc_destination
                                 : previous & 0x7fffffffu;
  if (p.send_context_miss_ns != 0 && local.qp_cache != nullptr) {
    const bool installed = k != 0 || install_context<TABLE_SCOPE>(local.qp_cache, p.qp_cache_entries, v.qpn);
    l.send_miss = !installed || before != to;  // a new destination re-installs the DCI's context
    count_lookup<TABLE_SCOPE>(local, false, l.send_miss);
  }
  if (l.nic != &local) {
    const uint64_t received = receive_processing(*l.nic, *l.nic, RemoteWindow{},
                                                 dc_responder_key(local.nic_id, v.qpn, l.dct->dctn), 1);
    const uint64_t after = received > v.doorbell_rung_ns ? received - v.doorbell_rung_ns : 0;
    l.received = after < 0xffffffffu ? static_cast<uint32_t>(after) : 0xffffffffu;
  }
}

// The batch's pacing (leader): its pipe claim, then the time its payloads may move (ns): the
// doorbell's latency with the batch's connects, the pipe's slot, the targets' pipes, the latest.
// Updates the DCI's connect-rule and destination words in the QpContext and the warp's copy.
DISSECT_HD inline uint64_t pace_dc_batch(NicTables& local, QpContext& qp, QpContext& v, uint32_t moved,
                                         uint64_t bytes, bool pointers, uint32_t connects, uint32_t misses,
                                         uint32_t received, uint32_t last_tag, uint64_t end) {
  const TimingProfile& p = local.profile;
  uint64_t ready = dc_data_ready_ns(p, v.doorbell_rung_ns, pointers, connects);
  const uint64_t from_targets = v.doorbell_rung_ns + received;
  if (from_targets > ready) ready = from_targets;
  double units = pipe_ns(p, moved, static_cast<double>(bytes)) * PIPE_UNITS_PER_NS;
  units += static_cast<double>(misses) * p.send_context_miss_ns * PIPE_UNITS_PER_NS;
  if (units > 0) {
    const uint64_t slot = claim_pipe<TABLE_SCOPE>(&local.pipe_busy_until, static_cast<uint64_t>(units));
    if (slot > ready) ready = slot;
  }
  // Idle after the batch's last WQE: disconnected (the connect rule).
  v.dc_connected = qp.dc_connected = end < v.sq_target ? last_tag : 0;
  if (connection_model(p)) v.dc_destination = qp.dc_destination = last_tag & 0x7fffffffu;
  return ready;
}

// One DC batch of `qp` (open, in RTS, a DCI, a timing profile; open_window made w.copy its fresh
// copy). `Completion`: the scope of the CQEs' and payloads' observers (EngineFlags).
template <Scope Completion, typename Lanes>
DISSECT_HD DISSECT_COLD Served serve_dc_batch(const Lanes& lanes, Window& w, QpContext& qp,
                                              const NicTables& local) {
  QpContext& v = w.copy->view;
  const mlx5::send_ring staged = w.staged();
  const uint32_t probe = w.available < WINDOW_LANES ? w.available : WINDOW_LANES;
  lanes.each(probe, [&](uint32_t i) { stage_wqebb(v, staged, v.sq_consumer + i); });
  lanes.each(probe, [&](uint32_t i) { w.wqebbs_at[i] = dc_batch_wqe_size(v, staged, i, w.available); });
  lanes.leader([&] { w.count = chain_window(w, 0, 0); });
  if (w.count == 0) {  // its outcome, one at a time: execute_and_retire moves the QpContext on
    lanes.leader([&] { w.copy->qp = nullptr; });
    return serve_alone(lanes, qp, local);
  }

  DcLane lane[Lanes::SLOTS];
  lanes.each(w.count, [&](uint32_t k) {
    WindowWqe& x = w.wqe[k];
    const uint64_t start = v.sq_consumer + x.offset;
    const mlx5::mlx5_wqe_ctrl_seg ctrl = *reinterpret_cast<const mlx5::mlx5_wqe_ctrl_seg*>(staged.wqebb(start));
    x.opcode = mlx5::ctrl_opcode(ctrl);
    x.signaled = mlx5::ctrl_signaled(ctrl);
    x.syndrome = check_staged_dc(*w.copy, staged, local, start, &x.plan, lane[lanes.slot(k)]);
  });
  // A warp's lanes copy at once: the batch ends before a WQE overwriting an earlier one's bytes.
  const uint32_t count = Lanes::IN_TURN ? w.count : disjoint_prefix(lanes, w, w.count);
  const uint32_t failures = lanes.ballot(count, [&](uint32_t k) { return w.wqe[k].syndrome != 0; });
  const uint32_t moved = failures ? lowest_set_bit(failures) : count;
  const uint32_t executed = failures ? moved + 1 : count;

  uint64_t data_ready = 0;  // leader only
  NicTables& nic = const_cast<NicTables&>(local);  // written only through atomics (pipe, counters)
  const bool profiled = paced(lanes, w);  // `fast`: no clock, no connect rule, nothing waited
  if (moved != 0 && profiled) {
    lanes.each(moved, [&](uint32_t k) { pace_dc_lane(nic, v, staged, w.wqe, k, lane[lanes.slot(k)]); });
    const uint32_t connects = popcount(lanes.ballot(moved, [&](uint32_t k) { return lane[lanes.slot(k)].connect; }));
    const uint32_t misses = popcount(lanes.ballot(moved, [&](uint32_t k) { return lane[lanes.slot(k)].send_miss; }));
    const bool pointers = lanes.ballot(moved, [&](uint32_t k) { return w.wqe[k].plan.source != nullptr; }) != 0;
    const uint64_t bytes = lanes.sum(moved, [&](uint32_t k) { return w.wqe[k].plan.length; });
    uint32_t received = 0;
    for (uint32_t k = 0; k < moved; ++k) {
      const uint32_t r = lanes.pick(k, [&](uint32_t j) { return lane[lanes.slot(j)].received; });
      if (r > received) received = r;
    }
    const uint32_t last_tag = lanes.pick(moved - 1, [&](uint32_t j) { return lane[lanes.slot(j)].tag; });
    const WindowWqe& last = w.wqe[moved - 1];
    const uint64_t end = v.sq_consumer + last.offset + last.wqebbs;
    lanes.leader([&] {
      data_ready = pace_dc_batch(nic, qp, v, moved, bytes, pointers, connects, misses, received, last_tag, end);
      wait_until(data_ready);
    });
  }
  if (moved != 0) {
    lanes.each(moved, [&](uint32_t k) { perform_dc_payload(staged, v.sq_consumer + w.wqe[k].offset, w.wqe[k].plan); });
    lanes.sync();
    if (profiled) lanes.leader([&] { wait_until(cqe_release_ns(w.profile, data_ready)); });  // the CQEs after the acks
    // The DCI's route: the last moved WQE's DCT, when it did not go through the route already.
    const uint32_t routed = lanes.ballot(moved, [&](uint32_t k) { return lane[lanes.slot(k)].through_route; });
    const uint32_t j = moved - 1;
    if (((routed >> j) & 1) == 0) {
      const auto half = [&](uint32_t k, bool dct, bool high) {
        const uintptr_t p = dct ? reinterpret_cast<uintptr_t>(lane[lanes.slot(k)].dct)
                                : reinterpret_cast<uintptr_t>(lane[lanes.slot(k)].nic);
        return static_cast<uint32_t>(high ? uint64_t{p} >> 32 : p);
      };
      const uint64_t nic_at = uint64_t{lanes.pick(j, [&](uint32_t k) { return half(k, false, true); })} << 32 |
                              lanes.pick(j, [&](uint32_t k) { return half(k, false, false); });
      const uint64_t dct_at = uint64_t{lanes.pick(j, [&](uint32_t k) { return half(k, true, true); })} << 32 |
                              lanes.pick(j, [&](uint32_t k) { return half(k, true, false); });
      lanes.leader([&] {
        DcResolution r{reinterpret_cast<NicTables*>(static_cast<uintptr_t>(nic_at)),
                       reinterpret_cast<DctContext*>(static_cast<uintptr_t>(dct_at)), 0, true, false};
        note_dc_route(w.copy->dc_route, r, read_dc_address(staged, v.sq_consumer + w.wqe[j].offset));
      });
    }
  }

  const uint32_t cqe_mask =
      lanes.ballot(executed, [&](uint32_t k) { return w.wqe[k].signaled != 0 || w.wqe[k].syndrome != 0; });
  const uint64_t stamp = cqe_mask != 0 ? now_ns() : 0;
  const uint64_t first_cqe = reserve_window_cqes(lanes, v.send_cq, popcount(cqe_mask));
  lanes.each(executed, [&](uint32_t k) {
    if ((cqe_mask >> k) & 1) {
      complete_window_wqe<Completion>(v, w.wqe[k], first_cqe + popcount(cqe_mask & ((1u << k) - 1)), stamp);
    }
    if (k < moved) {  // atomic: DCIs of other warps or threads write through one DCT
      add_relaxed<TABLE_SCOPE>(&lane[lanes.slot(k)].dct->rx_bytes, w.wqe[k].plan.length);
      add_relaxed<TABLE_SCOPE>(&lane[lanes.slot(k)].dct->rx_packets, uint64_t{1});
    }
  });
  WindowTally tally{};
  tally.executed = executed;
  tally.cqes = popcount(cqe_mask);
  tally.writes = 0;  // the DCTs' rx counters, above: no connected responder
  tally.bytes = lanes.sum(moved, [&](uint32_t k) { return w.wqe[k].plan.length; });
  tally.failed = failures != 0;
  const WindowWqe& last = w.wqe[executed - 1];
  lanes.leader([&] {
    tally.announced = w.available;
    retire_window(qp, v, nullptr, tally, last.offset + last.wqebbs);
  });
  return Served{executed, failures ? w.wqe[moved].syndrome : uint8_t{0}};
}

// --- The DC lone window (`fast`): one DC WRITE announced, executed by one lane from its registers ---
//
// What lone.h is for an RC QP, for a DCI: exactly the WQEBBs of one DC WRITE announced (one for a
// compact AV with up to 12 B inline or a data segment, two for a full AV or a longer inline), lane 0
// reads them, the DCI's route's DCT fields (dct_fields) and the guessed key entries (QpCopy's
// last keys) with loads in flight at once, checks the WQE against the DCT its AV names (the route
// when it names the route's DCT, else the fabric), writes the CQE body, stores the payload,
// publishes the CQE and retires: one dependent round trip after the doorbell's, as RC's lone
// window. Under a timing profile it is paced as one DC WRITE executed alone is (pace_dc_write:
// the ring date, the connect rule, the pipes) and held for those dates, its DCI's context lookup
// made after its CQE (dc_charge_send_lookup at the release), as RC's lone WQE is held (lone.h,
// in_flight.h): DC - RC under a profile compares the two lone windows like for like. Any other WQE (a gather, a NOP, a bad ctrl, an overlapping copy, a
// payload the warp copies) returns NOT_LONE without a side effect: the DC batch or serve_alone
// takes it.

// An inline payload from the registers it was read into: word FIRST on of the WQE's two WQEBBs.
template <uint32_t FIRST>
DISSECT_HD inline void store_dc_inline(uint8_t* out, uint64_t length, const uint32_t (&word)[32]) {
#if defined(__CUDA_ARCH__)
  constexpr uint32_t WORDS = 32 - FIRST;
  if (((reinterpret_cast<uintptr_t>(out) | length) & 3) == 0) {
    DISSECT_UNROLL
    for (uint32_t k = 0; k < WORDS; ++k) {
      if (4 * k < length) reinterpret_cast<uint32_t*>(out)[k] = word[FIRST + k];
    }
    return;
  }
  DISSECT_UNROLL
  for (uint32_t k = 0; k < 4 * WORDS; ++k) {
    if (k < length) out[k] = static_cast<uint8_t>(word[FIRST + k / 4] >> (8 * (k % 4)));
  }
#else
  std::memcpy(out, reinterpret_cast<const uint8_t*>(word) + 4 * FIRST, length);
#endif
}

// Executes the DC WRITE at the consumer of `copy` (a DCI, open, in RTS) in the calling lane when
// it is the whole announcement; returns its syndrome, or NOT_LONE without a side effect. `Paced`:
// w.profile is enabled; a WRITE that passed its checks is then held (in_flight.h) for the dates
// pace_dc_write gives its payload and, data_to_cqe later, its CQE (a failed one waits for nothing,
// as in a DC batch).
template <Scope Completion, bool Paced>
DISSECT_HD inline uint32_t dc_lone_wqe(Window& w, QpCopy& copy, QpContext& qp, const NicTables& local) {
  using namespace mlx5;
  QpContext& v = copy.view;
  DcRoute& route = copy.dc_route;
  const uint64_t start = v.sq_consumer;
  DISSECT_PHASE_START;
  uint32_t word[32];
#if defined(__CUDA_ARCH__)
  {
    const uint8_t* first = v.sq.wqebb(start);
    DISSECT_UNROLL
    for (int k = 0; k < 4; ++k) load_16<true>(first + 16 * k, &word[4 * k]);
    if (w.available == 2) {
      const uint8_t* second = v.sq.wqebb(start + 1);
      DISSECT_UNROLL
      for (int k = 0; k < 4; ++k) load_16<true>(second + 16 * k, &word[16 + 4 * k]);
    } else {
      DISSECT_UNROLL
      for (int k = 16; k < 32; ++k) word[k] = 0;
    }
  }
#else
  std::memcpy(word, v.sq.wqebb(start), MLX5_SEND_WQE_BB);
  if (w.available == 2) {
    std::memcpy(word + 16, v.sq.wqebb(start + 1), MLX5_SEND_WQE_BB);
  } else {
    std::memset(word + 16, 0, MLX5_SEND_WQE_BB);
  }
#endif
  // Beside the WQEBBs: the route's DCT and the entries of the keys the DCI's last WQE named.
  const DctFields fields = load_dct_fields(route.nic != nullptr ? route.dct : nullptr);
  const MrEntry guessed_rkey =
      route.nic != nullptr && copy.last_rkey != 0 ? load_mr<true>(route.mrs, copy.last_rkey) : MrEntry{};
  const MrEntry guessed_lkey = copy.last_lkey != 0 ? load_mr<true>(copy.local_mrs, copy.last_lkey) : MrEntry{};

  const mlx5_wqe_ctrl_seg ctrl = segment_of<mlx5_wqe_ctrl_seg>(word, 0);
  const uint32_t ds = ctrl_ds(ctrl);
  const uint8_t opcode = ctrl_opcode(ctrl);
  if (ctrl_wqe_index(ctrl) != static_cast<uint16_t>(start) || ctrl_qpn(ctrl) != v.qpn || ds == 0 ||
      wqebbs_for_ds(ds) != w.available || opcode != MLX5_OPCODE_RDMA_WRITE || ds < 1 + DC_AV_COMPACT_DS + 2) {
    return NOT_LONE;
  }
  const uint32_t wqebbs = wqebbs_for_ds(ds);
  const mlx5_wqe_av_compact av = segment_of<mlx5_wqe_av_compact>(word, 1);
  const uint32_t dqp_dct = av.dqp_dct.value();
  const DcAddress address{dqp_dct & 0xffffff, av.dc_key.value(), av.rlid.value(),
                          (dqp_dct & MLX5_EXTENDED_UD_AV) ? DC_AV_DS : DC_AV_COMPACT_DS};
  const bool full = address.av_ds == DC_AV_DS;
  const uint32_t payload_at = 2 + address.av_ds;
  if (ds < payload_at + 1) return NOT_LONE;
  const mlx5_wqe_raddr_seg raddr = full ? segment_of<mlx5_wqe_raddr_seg>(word, 4) : segment_of<mlx5_wqe_raddr_seg>(word, 2);
  const mlx5_wqe_data_seg data = full ? segment_of<mlx5_wqe_data_seg>(word, 5) : segment_of<mlx5_wqe_data_seg>(word, 3);
  const uint32_t count = data.byte_count.value();
  const bool is_inline = (count & MLX5_INLINE_SEG) != 0;
  if (!is_inline && (ds != payload_at + 1 || count >= WARP_COPY_BYTES)) return NOT_LONE;
  const uint32_t rkey = raddr.rkey.value();
  const uint32_t lkey = is_inline ? 0 : data.lkey.value();

  const DcResolution r = resolve_dc(local, route, fields, address);
  MrEntry rkey_entry{};
  if (r.key_matches) {
    if (r.through_route && rkey == copy.last_rkey) {
      rkey_entry = guessed_rkey;
    } else {
      rkey_entry = load_mr(r.through_route ? route.mrs : mr_table(*r.nic), rkey);
    }
  }
  MrEntry lkey_entry{};
  if (!is_inline) lkey_entry = lkey == copy.last_lkey ? guessed_lkey : load_mr(copy.local_mrs, lkey);
  WritePlan plan;
  const uint8_t syndrome = check_dc_one_segment(v, ds, payload_at, raddr.raddr.value(), rkey, count,
                                                data.addr.value(), lkey, lkey_entry, rkey_entry, r, &plan);
  if (syndrome == 0 && overlaps(plan)) return NOT_LONE;  // copy_bytes, one at a time
  DISSECT_PHASE(12);

  const bool signaled = ctrl_signaled(ctrl);
  const bool wants_cqe = signaled || syndrome != 0;
  const WqeOutcome outcome{syndrome, opcode, signaled, wqebbs, plan.length};
  const bool held = Paced && syndrome == 0;  // a failed WRITE waits for nothing, as in a DC batch
  mlx5_cqe64* entry = nullptr;
  uint32_t tail = 0;
  if (held) {
    // Held (in_flight.h), as RC's lone WQE.
    InFlight& f = begin_hold(w);
    f.plan = plan;
    // The inline bytes from the WQEBBs' registers, at the hold's start: read again from the ring
    // after the pacing's atomics, they were one more L2 round trip on the latency path (the ring
    // load behind the pipe claims), and kept live across the pacing the registers made the engine
    // loop spill (ptxas, sm_90). RC's lone WQE takes its own the same way (hold_lone_wqe).
    if (plan.source == nullptr) {
      if (full) {
        hold_inline_words<21>(f, word, plan.length);  // byte 5 * 16 + 4
      } else {
        hold_inline_words<13>(f, word, plan.length);  // byte 3 * 16 + 4
      }
    }
    hold_cqe(f, v, wants_cqe, outcome, Completion == Scope::system);
    // The copy's view paces (its ring date, its connection), and the QpContext keeps what the
    // connect rule changed, as a DC batch's pacing leaves it (the destination: at the release).
    // The target from the AV (passed its checks: the DCT's number is the AV's), as a batch's tags.
    const DcPaceTarget target{r.nic, r.dct, address.dctn,
                              dc_connection_tag(static_cast<uint32_t>(address.rlid) - 1u, address.dctn)};
    f.data_ns = pace_dc_write(w.profile, w.rates, const_cast<NicTables&>(local), v, start, wqebbs, target,
                              plan.source != nullptr, plan.length, false);
    qp.dc_connected = v.dc_connected;
    f.cqe_ns = cqe_release_ns(w.profile, f.data_ns);
    f.lookup = connection_model(w.profile) ? IN_FLIGHT_DC_LOOKUP : IN_FLIGHT_NO_LOOKUP;
    f.local = const_cast<NicTables*>(&local);
    f.copy_destination = &v.dc_destination;
    f.qp_destination = &qp.dc_destination;
    f.target = r.nic;
    f.dctn = address.dctn;
    f.stage = IN_FLIGHT_PAYLOAD;
    // In place (release_now) before the retirement and the DCT's counters: relaxed adds, which the
    // CQE's release would otherwise wait for.
    if (release_now(w)) release_in_place<Completion>(w);
  } else if (wants_cqe) {
    const uint64_t index = reserve_cqes(v.send_cq, 1);
    mlx5_cqe64 cqe;
    const uint8_t cqe_opcode = requester_cqe(v, start, outcome, &cqe, now_ns(), CQE_PATH_LONE);
    entry = cqe_entry(v.send_cq, index);
    tail = write_cqe_body(entry, v.send_cq, index, cqe, cqe_opcode);
  }
  DISSECT_PHASE(13);
  if (!Paced && plan.length != 0) {  // passed its checks (a failure's plan is empty; held: released later)
    if (plan.source != nullptr) {
      copy_pointer(plan);
    } else if (full) {
      store_dc_inline<21>(plan.destination, plan.length, word);  // byte 5 * 16 + 4
    } else {
      store_dc_inline<13>(plan.destination, plan.length, word);  // byte 3 * 16 + 4
    }
  }
  if (entry != nullptr) publish_cqe<Completion>(entry, tail);
  WindowTally tally{};
  tally.executed = 1;
  tally.cqes = wants_cqe ? 1 : 0;
  tally.writes = 0;  // the DCT's rx counters, below: no connected responder
  tally.bytes = plan.length;
  tally.failed = syndrome != 0;
  retire_window(qp, v, nullptr, tally, wqebbs);
  if (syndrome == 0) {
    // Atomic: DCIs of other warps or threads write through one DCT.
    add_relaxed<TABLE_SCOPE>(&r.dct->rx_bytes, plan.length);
    add_relaxed<TABLE_SCOPE>(&r.dct->rx_packets, uint64_t{1});
    note_dc_route(route, r, address);
    copy.last_rkey = rkey;
    if (lkey != 0) copy.last_lkey = lkey;
  }
  DISSECT_PHASE(14);
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
  atomicAdd(&engine_phase_cycles[15], 1ull);
#endif
  return syndrome;
}

// A DCI's lone window (serve_window: open, in RTS, at most two WQEBBs announced): lane 0 executes
// one announced DC WRITE (dc_lone_wqe), paced under a timing profile; Served{0, 0} when it is no
// lone DC WRITE (nothing happened). Inlined into the engine loop as RC's lone window is (lone.h,
// serve_lone): out of line, behind serve_dci, its call and return and the copy's fields read
// through a pointer cost DC put+completion ~0.9 us under cx7-ib (H100, 2026-12-06).
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_dc_lone(const Lanes& lanes, Window& w, QpCopy& copy, QpContext& qp,
                                       const NicTables& local) {
  const uint32_t result = lanes.alone([&] {
    return paced(lanes, w) ? dc_lone_wqe<Completion, true>(w, copy, qp, local)
                           : dc_lone_wqe<Completion, false>(w, copy, qp, local);
  });
  if (result == NOT_LONE) return Served{0, 0};
  Served s{1, static_cast<uint8_t>(result)};
  s.lone = 1;
  return s;
}

// A DCI's window that is no lone DC WRITE: a DC batch. Out of line: the engine loop's registers
// stay RC's.
template <Scope Completion, typename Lanes>
DISSECT_HD DISSECT_COLD Served serve_dc_batch_out_of_line(const Lanes& lanes, Window& w, QpContext& qp,
                                                          const NicTables& local) {
  return serve_dc_batch<Completion>(lanes, w, qp, local);
}

}  // namespace dissect::softnic
