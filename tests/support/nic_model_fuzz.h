// The NIC model's fuzzer, as reusable parts: a seeded generator of WQE cases (valid WQEs, then
// mutated: opcode, ds, index, QPN, keys, addresses, lengths, inline headers, signalling, doorbell
// values and budgets, the responder's state and the connection), and an oracle that predicts what
// softnic/engine/execute.h must do with each, written from the rules in execute.h's header comment and
// not from its code. The oracle runs on a shadow copy of the rig's arena (nic_model_rig.h): after
// each service step the driver compares the shadow with the arena byte for byte, and the oracle's
// QP state with the engine's.
//
// Host and device: everything here is DISSECT_HD and uses no library, so a GPU replay can take the
// cases the host generated (FuzzCase + the ring bytes) and run service_qp in a kernel over the same
// layout; the oracle then checks on the host. Only the driver (tests/cpu/softnic/nic_model_fuzz.cpp)
// is host code.
#pragma once

#include <cstdint>

#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/ring.h"
#include "dissect/mlx5/wqe.h"
#include "dissect/softnic/impl/context.h"
#include "support/nic_model_rig.h"
#include "support/nic_model_wqes.h"

namespace dissect::testing::fuzz {

// splitmix64: one 64-bit state, every seed a distinct stream.
struct Rng {
  uint64_t state;
  DISSECT_HD uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  DISSECT_HD uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
  DISSECT_HD bool one_in(uint32_t n) { return below(n) == 0; }
};

// How the case disturbs the connection before any WQE runs (item 3 of issue 13 and its kin).
enum Disruption : uint32_t {
  DISRUPT_NONE = 0,
  DISRUPT_RESPONDER_RESET,
  DISRUPT_RESPONDER_ERROR,
  DISRUPT_DISCONNECTED,       // requester's remote_nic = null
  DISRUPT_INDEX_PAST_QPS,     // remote_qp_index beyond the NIC's qp_count
  DISRUPT_REQUESTER_IN_ERROR, // the requester starts in the error state: everything flushes
  DISRUPT_REQUESTER_RESET,    // the requester is in RESET: nothing is consumed
  DISRUPT_COUNT
};

struct Step {
  uint64_t doorbell;  // stored to the doorbell register before the step
  uint32_t budget;    // service_qp's budget
};

inline constexpr uint32_t kMaxWqes = 12;
inline constexpr uint32_t kMaxSteps = kMaxWqes + 2;

// One case: the rig's starting point, the WQEs written (their starts), and the steps to run.
struct FuzzCase {
  uint64_t first_wqebb;
  uint32_t posted_receives;
  uint32_t fill_seed;
  uint32_t disruption;
  uint32_t wqes;
  uint64_t starts[kMaxWqes];
  uint32_t steps;
  Step step[kMaxSteps];
};

struct WqeSpec {
  CtrlFields ctrl;
  uint64_t raddr;
  uint32_t rkey;
  uint32_t segments;  // gather segments (pointer writes), or 1 for the FETCH_ADD result
  uint32_t count[3];
  uint32_t lkey[3];
  uint64_t addr[3];
  bool is_inline;
  uint32_t inline_header;
  uint32_t inline_length;
  uint64_t addend;
  uint8_t kind;  // which template
};

enum Template : uint8_t { T_NOP, T_WRITE, T_WRITE_INLINE, T_WRITE_IMM, T_WRITE_IMM_INLINE, T_FETCH_ADD };

DISSECT_HD inline uint32_t region_key(uint32_t region, bool local_only) {
  return region == 0 ? KEY_REGION0_ALL : (local_only ? KEY_REGION1_LOCAL : KEY_REGION1_ALL);
}

// A key: mostly one of the rig's, sometimes a tag or index off by one, sometimes anything.
DISSECT_HD inline uint32_t mutate_key(Rng& rng, uint32_t key) {
  switch (rng.below(5)) {
    case 0: return rig_key(rng.below(kRigKeyCount));
    case 1: return key ^ 0x100;
    case 2: return key + 1;
    case 3: return static_cast<uint32_t>(rng.next());
    default: return (rng.below(12) << 8) | rng.below(8);
  }
}

// An address near `address`: across a bound, misaligned, into a guard band, or anywhere.
DISSECT_HD inline uint64_t mutate_address(Rng& rng, const NicModelRig& rig, uint64_t address) {
  switch (rng.below(6)) {
    case 0: return address + rng.below(128) - 64;
    case 1: return address | (1 + rng.below(7));
    case 2: return rig.region_address(rng.below(NicModelRig::kRegions)) + NicModelRig::kRegionBytes -
                   rng.below(64);
    case 3: return rig.region_address(rng.below(NicModelRig::kRegions)) - 1 - rng.below(32);
    case 4: return rng.next();
    default: return rig.region_address(rng.below(NicModelRig::kRegions), rng.below(4096));
  }
}

DISSECT_HD inline uint32_t mutate_count(Rng& rng, uint32_t count) {
  switch (rng.below(6)) {
    case 0: return rng.below(NicModelRig::kRegionBytes + 128);
    case 1: return 0;
    case 2: return count | mlx5::MLX5_INLINE_SEG;
    case 3: return 0x7fffffffu;
    case 4: return count + 1 + rng.below(64);
    default: return (1u << 30) | rng.below(1u << 30);
  }
}

// A valid WQE of a random template at `start`, `room` WQEBBs at most.
DISSECT_HD inline WqeSpec make_valid(Rng& rng, const NicModelRig& rig, uint64_t start, uint32_t room,
                                     uint8_t* payload) {
  WqeSpec w{};
  w.kind = static_cast<uint8_t>(rng.below(6));
  w.ctrl = CtrlFields{static_cast<uint16_t>(start), mlx5::MLX5_OPCODE_NOP, softnic::QPN_BASE, 1,
                      !rng.one_in(4), static_cast<uint32_t>(rng.next())};
  const uint32_t remote_region = rng.below(2);
  w.rkey = region_key(remote_region, false);
  switch (w.kind) {
    case T_NOP:
      w.ctrl.ds = static_cast<uint8_t>(1 + rng.below(4));
      break;
    case T_WRITE:
    case T_WRITE_IMM: {
      w.ctrl.opcode = w.kind == T_WRITE ? mlx5::MLX5_OPCODE_RDMA_WRITE : mlx5::MLX5_OPCODE_RDMA_WRITE_IMM;
      w.segments = 1 + rng.below(3);
      uint32_t total = 0;
      for (uint32_t k = 0; k < w.segments; ++k) {
        const uint32_t region = rng.below(2);
        w.count[k] = rng.below(300);
        w.lkey[k] = region_key(region, rng.one_in(2));
        w.addr[k] = rig.region_address(region, rng.below(NicModelRig::kRegionBytes - w.count[k] + 1));
        total += w.count[k];
      }
      w.raddr = rig.region_address(remote_region, rng.below(NicModelRig::kRegionBytes - total + 1));
      w.ctrl.ds = static_cast<uint8_t>(2 + w.segments);
      break;
    }
    case T_WRITE_INLINE:
    case T_WRITE_IMM_INLINE: {
      w.ctrl.opcode = w.kind == T_WRITE_INLINE ? mlx5::MLX5_OPCODE_RDMA_WRITE : mlx5::MLX5_OPCODE_RDMA_WRITE_IMM;
      w.is_inline = true;
      w.inline_length = rng.one_in(16) ? rng.below(mlx5::RC_MAX_INLINE_BY_DS + 1) : rng.below(100);
      while (mlx5::wqebbs_for_ds(mlx5::rc_write_inline_ds(w.inline_length)) > room) w.inline_length /= 2;
      w.inline_header = w.inline_length | mlx5::MLX5_INLINE_SEG;
      for (uint32_t i = 0; i < w.inline_length; ++i) payload[i] = static_cast<uint8_t>(rng.next());
      w.raddr = rig.region_address(remote_region, rng.below(NicModelRig::kRegionBytes - w.inline_length + 1));
      w.ctrl.ds = static_cast<uint8_t>(mlx5::rc_write_inline_ds(w.inline_length));
      break;
    }
    default: {
      w.ctrl.opcode = mlx5::MLX5_OPCODE_ATOMIC_FA;
      w.ctrl.ds = mlx5::RC_FETCH_ADD_DS;
      w.raddr = rig.region_address(remote_region, 8 * rng.below(NicModelRig::kRegionBytes / 8));
      const uint32_t result_region = rng.below(2);
      w.segments = 1;
      w.count[0] = 8;
      w.lkey[0] = region_key(result_region, rng.one_in(2));
      w.addr[0] = rig.region_address(result_region, 8 * rng.below(NicModelRig::kRegionBytes / 8));
      w.addend = rng.next() >> rng.below(64);
      break;
    }
  }
  return w;
}

DISSECT_HD inline void mutate(Rng& rng, const NicModelRig& rig, WqeSpec& w) {
  const uint32_t k = w.segments != 0 ? rng.below(w.segments) : 0;
  switch (rng.below(12)) {
    case 0: {
      const uint8_t opcodes[] = {mlx5::MLX5_OPCODE_NOP, mlx5::MLX5_OPCODE_RDMA_WRITE,
                                 mlx5::MLX5_OPCODE_RDMA_WRITE_IMM, mlx5::MLX5_OPCODE_ATOMIC_FA,
                                 mlx5::MLX5_OPCODE_ATOMIC_CS, mlx5::MLX5_OPCODE_SEND,
                                 mlx5::MLX5_OPCODE_RDMA_READ, static_cast<uint8_t>(rng.next())};
      w.ctrl.opcode = opcodes[rng.below(8)];
      break;
    }
    case 1: w.ctrl.ds = static_cast<uint8_t>(rng.one_in(2) ? rng.below(64) : (w.ctrl.ds + rng.below(3) - 1) & 63); break;
    case 2: w.ctrl.wqe_index = static_cast<uint16_t>(w.ctrl.wqe_index + 1 + rng.below(rng.one_in(2) ? 4 : 0xffff)); break;
    case 3: w.ctrl.qpn = rng.one_in(2) ? w.ctrl.qpn + 1 : rng.below(1u << 24); break;
    case 4: if (w.segments) w.lkey[k] = mutate_key(rng, w.lkey[k]); break;
    case 5: w.rkey = mutate_key(rng, w.rkey); break;
    case 6: if (w.segments) w.addr[k] = mutate_address(rng, rig, w.addr[k]); break;
    case 7:
      // Overlap the destination with a source, or move it.
      if (w.segments && rng.one_in(2)) {
        w.raddr = w.addr[k] + rng.below(64) - 32;
        w.rkey = w.lkey[k] == KEY_REGION1_LOCAL ? KEY_REGION1_ALL : w.lkey[k];
      } else {
        w.raddr = mutate_address(rng, rig, w.raddr);
      }
      break;
    case 8: if (w.segments) w.count[k] = mutate_count(rng, w.count[k]); break;
    case 9:
      if (w.is_inline) {
        w.inline_header = rng.one_in(3) ? w.inline_length
                                        : ((w.inline_length + 1 + rng.below(64)) | mlx5::MLX5_INLINE_SEG);
      }
      break;
    case 10: w.ctrl.signaled = !w.ctrl.signaled; break;
    default:
      if (w.segments) {
        w.lkey[k] = KEY_HUGE_LOCAL;
        w.count[k] = mutate_count(rng, w.count[k]);
      }
      break;
  }
  // The 1 TiB key reaches memory that does not exist: give it only lengths that fail before any
  // byte moves (over 2 GiB in all, or larger than any remote region). The oracle also refuses to
  // run a case that would touch memory outside the arena.
  for (uint32_t s = 0; s < w.segments; ++s) {
    if (w.lkey[s] == KEY_HUGE_LOCAL) w.count[s] |= 1u << 30;
  }
}

DISSECT_HD inline void emit(const mlx5::send_ring& ring, uint64_t start, const WqeSpec& w,
                            const uint8_t* payload) {
  put_ctrl(ring, start, w.ctrl);
  if (w.kind == T_NOP) return;
  put_raddr(ring, start, 1, w.raddr, w.rkey);
  if (w.kind == T_FETCH_ADD) {
    put_atomic(ring, start, 2, w.addend);
    put_data(ring, start, 3, w.count[0], w.lkey[0], w.addr[0]);
  } else if (w.is_inline) {
    put_inline(ring, start, w.inline_header, payload, w.inline_length);
  } else {
    for (uint32_t k = 0; k < w.segments; ++k) put_data(ring, start, 2 + k, w.count[k], w.lkey[k], w.addr[k]);
  }
}

// The rig's starting point for `c` (reset, then the disruption).
DISSECT_HD inline void apply_disruption(NicModelRig& rig, uint32_t disruption) {
  switch (disruption) {
    case DISRUPT_RESPONDER_RESET: rig.responder().state = softnic::QP_STATE_RESET; break;
    case DISRUPT_RESPONDER_ERROR: rig.responder().state = softnic::QP_STATE_ERROR; break;
    case DISRUPT_DISCONNECTED: rig.requester().remote_nic = nullptr; break;
    case DISRUPT_INDEX_PAST_QPS: rig.requester().remote_qp_index = 2 + disruption; break;
    case DISRUPT_REQUESTER_IN_ERROR: rig.requester().state = softnic::QP_STATE_ERROR; break;
    case DISRUPT_REQUESTER_RESET: rig.requester().state = softnic::QP_STATE_RESET; break;
    default: break;
  }
}

// Generates one case: resets `rig`, writes the WQEs into its ring and fills `c`. Returns the number
// of WQEs written. `payload` is scratch of RC_MAX_INLINE_BY_DS bytes.
inline uint32_t generate(Rng& rng, NicModelRig& rig, FuzzCase& c, uint8_t* payload) {
  c = FuzzCase{};
  c.first_wqebb = rng.one_in(4) ? 0xffc0 + rng.below(128) : rng.below(1u << 20);
  c.posted_receives = rng.one_in(8) ? 0 : rng.below(NicModelRig::kRqWqes + 1);
  c.fill_seed = static_cast<uint32_t>(rng.next());
  c.disruption = rng.one_in(4) ? 1 + rng.below(DISRUPT_COUNT - 1) : DISRUPT_NONE;
  rig.reset(c.first_wqebb, c.posted_receives, c.fill_seed);
  apply_disruption(rig, c.disruption);

  const uint32_t wanted = 1 + rng.below(kMaxWqes);
  uint64_t cursor = c.first_wqebb;
  const uint64_t limit = c.first_wqebb + NicModelRig::kRingWqebbs;
  const bool mutate_often = rng.one_in(4);
  for (uint32_t i = 0; i < wanted && cursor < limit; ++i) {
    WqeSpec w = make_valid(rng, rig, cursor, static_cast<uint32_t>(limit - cursor), payload);
    const uint32_t wqebbs = mlx5::wqebbs_for_ds(w.ctrl.ds);
    if (cursor + wqebbs > limit) break;
    const uint32_t mutations = mutate_often ? rng.below(4) : (rng.one_in(6) ? 1 : 0);
    for (uint32_t m = 0; m < mutations; ++m) mutate(rng, rig, w);
    emit(rig.ring(), cursor, w, payload);
    c.starts[c.wqes++] = cursor;
    cursor += wqebbs;  // the intended size: a mutated ds makes the engine read across the next WQE
  }
  const uint64_t end = cursor;
  const uint32_t qpn = softnic::QPN_BASE;
  auto add = [&](uint64_t doorbell, uint32_t budget) {
    if (c.steps < kMaxSteps) c.step[c.steps++] = Step{doorbell, budget};
  };
  if (rng.one_in(4)) {  // a doorbell per WQE, serviced in between with small budgets
    for (uint32_t i = 1; i < c.wqes; ++i) add(mlx5::doorbell_value(c.starts[i], qpn), 1 + rng.below(3));
  }
  switch (rng.below(8)) {
    case 0: add(mlx5::doorbell_value(end - 1, qpn), 1 + rng.below(64)); break;            // short
    case 1: add(mlx5::doorbell_value(end + 1 + rng.below(4), qpn), 1 + rng.below(64)); break;  // ahead
    case 2: add(mlx5::doorbell_value(end, qpn + 1 + rng.below(4)), 1 + rng.below(64)); break;  // foreign
    case 3: add(mlx5::doorbell_value(end - 100 - rng.below(1000), qpn), 64); break;            // behind
    case 4: add(mlx5::doorbell_value(end, qpn), 1 + rng.below(4)); break;                      // small budget
    default: break;
  }
  add(mlx5::doorbell_value(end, qpn), 64);
  add(mlx5::doorbell_value(end, qpn), 64);  // the same value again: ignored, the rest drains
  return c.wqes;
}

// --- the oracle ---

struct OracleQp {
  uint32_t state;
  uint64_t sq_consumer, sq_target, last_doorbell;
  uint64_t doorbells, bad_doorbells, wqes_executed, tx_bytes, tx_packets, cqes_written, error_cqes;
  uint64_t send_produced;
  // responder
  uint32_t responder_state;
  uint64_t rq_consumer, recv_produced, rx_bytes, rx_packets, responder_cqes;
  bool connected;  // remote_nic set and the index inside the NIC's QPs
};

struct WrittenCqe {
  bool send;      // send CQ (else receive CQ)
  uint64_t slot;  // CQE number
  bool error;
};

// Predicts service_qp on the shadow arena. Reads the WQE bytes from the shadow (equal to the
// arena's when a step starts), the MR table from the rig (the engine never writes it).
struct Oracle {
  const NicModelRig* rig;
  uint8_t* shadow;
  OracleQp qp;
  bool unsafe;  // the case would touch memory outside the arena: the driver skips it
  WrittenCqe written[2 * kMaxSteps * 64];
  uint32_t written_count;

  DISSECT_HD uint8_t* shadow_of(uint64_t address, uint64_t length) {
    const uint64_t base = reinterpret_cast<uintptr_t>(rig->base);
    if (address < base || length > rig->arena_bytes || address - base > rig->arena_bytes - length) {
      unsafe = true;
      return nullptr;
    }
    return shadow + (address - base);
  }
  DISSECT_HD mlx5::send_ring ring() const {
    return mlx5::send_ring{shadow + rig->sq.offset, NicModelRig::kRingWqebbs};
  }

  DISSECT_HD bool allowed(uint32_t key, uint32_t pd, uint64_t address, uint64_t length, uint32_t access) const {
    const uint32_t index = key >> 8;
    if (index >= rig->nic.mr_capacity) return false;
    const softnic::MrEntry& e = rig->mrs[index];
    if (e.valid == 0 || e.key != key || e.pd != pd || (e.access & access) != access) return false;
    return address >= e.address && length <= e.length && address - e.address <= e.length - length;
  }
  DISSECT_HD bool responder_answers() const {
    return qp.connected && qp.responder_state == softnic::QP_STATE_RTS;
  }

  DISSECT_HD void start(const NicModelRig& r, uint8_t* shadow_arena) {
    rig = &r;
    shadow = shadow_arena;
    unsafe = false;
    written_count = 0;
    const softnic::QpContext& q = r.qps[NicModelRig::kRequester];
    const softnic::QpContext& p = r.qps[NicModelRig::kResponder];
    qp = OracleQp{};
    qp.state = q.state;
    qp.sq_consumer = q.sq_consumer;
    qp.sq_target = q.sq_target;
    qp.last_doorbell = q.last_doorbell;
    qp.responder_state = p.state;
    qp.connected = q.remote_nic != nullptr && q.remote_qp_index < r.nic.qp_count;
  }

  DISSECT_HD void put_cqe(bool send, uint64_t n, const uint8_t (&bytes)[64], bool error) {
    const uint64_t offset = (send ? rig->send_cq.offset : rig->recv_cq.offset) +
                            (n % NicModelRig::kCqes) * mlx5::MLX5_CQE_SIZE;
    for (int i = 0; i < 64; ++i) shadow[offset + i] = bytes[i];
    if (written_count < sizeof written / sizeof written[0]) written[written_count++] = WrittenCqe{send, n, error};
  }
  DISSECT_HD static void put_be(uint8_t* at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) at[i] = static_cast<uint8_t>(value >> (8 * (bytes - 1 - i)));
  }

  DISSECT_HD void requester_cqe(uint64_t start, uint8_t opcode, uint8_t syndrome, uint64_t bytes) {
    uint8_t cqe[64] = {};
    uint8_t cqe_opcode = mlx5::MLX5_CQE_REQ;
    if (syndrome != 0) {
      cqe[55] = syndrome;
      cqe_opcode = mlx5::MLX5_CQE_REQ_ERR;
      ++qp.error_cqes;
    } else {
      put_be(cqe + 44, static_cast<uint32_t>(bytes), 4);
    }
    put_be(cqe + 56, (uint32_t{opcode} << 24) | softnic::QPN_BASE, 4);
    put_be(cqe + 60, static_cast<uint16_t>(start), 2);
    cqe[63] = mlx5::make_op_own(cqe_opcode, qp.send_produced, NicModelRig::kCqes);
    put_cqe(true, qp.send_produced, cqe, syndrome != 0);
    ++qp.send_produced;
    ++qp.cqes_written;
  }

  DISSECT_HD uint32_t receives_available() const {
    const uint8_t* r = shadow + rig->dbrec.offset;  // rcv_counter, big-endian
    const uint32_t posted = (uint32_t{r[0]} << 24) | (uint32_t{r[1]} << 16) | (uint32_t{r[2]} << 8) | r[3];
    const uint16_t available = static_cast<uint16_t>(posted - static_cast<uint16_t>(qp.rq_consumer));
    return available <= NicModelRig::kRqWqes ? available : 0;
  }

  DISSECT_HD void receive_cqe(uint32_t immediate_raw, uint64_t length) {
    uint8_t cqe[64] = {};
    const uint8_t* imm = reinterpret_cast<const uint8_t*>(&immediate_raw);
    for (int i = 0; i < 4; ++i) cqe[36 + i] = imm[i];  // raw: already big-endian in the WQE
    put_be(cqe + 44, static_cast<uint32_t>(length), 4);
    put_be(cqe + 56, softnic::QPN_BASE + 1, 4);
    put_be(cqe + 60, static_cast<uint16_t>(qp.rq_consumer), 2);
    cqe[63] = mlx5::make_op_own(mlx5::MLX5_CQE_RESP_WR_IMM, qp.recv_produced, NicModelRig::kCqes);
    put_cqe(false, qp.recv_produced, cqe, false);
    ++qp.recv_produced;
    ++qp.rq_consumer;
    ++qp.responder_cqes;
  }

  DISSECT_HD uint8_t write(uint64_t start, uint32_t ds, uint8_t opcode, uint32_t immediate_raw, uint64_t* moved) {
    const mlx5::send_ring r = ring();
    if (ds < 3) return mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    const auto* raddr = reinterpret_cast<const mlx5::mlx5_wqe_raddr_seg*>(r.segment(start, 1));
    const auto* first = reinterpret_cast<const mlx5::mlx5_wqe_data_seg*>(r.segment(start, 2));
    const bool is_inline = (first->byte_count.value() & mlx5::MLX5_INLINE_SEG) != 0;
    uint64_t length = 0;
    if (is_inline) {
      length = first->byte_count.value() & ~mlx5::MLX5_INLINE_SEG;
      if (2 + (4 + length + 15) / 16 > ds) return mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    } else {
      for (uint32_t k = 2; k < ds; ++k) {
        const auto* seg = reinterpret_cast<const mlx5::mlx5_wqe_data_seg*>(r.segment(start, k));
        const uint32_t count = seg->byte_count.value();
        if (count & mlx5::MLX5_INLINE_SEG) return mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
        if (!allowed(seg->lkey.value(), NicModelRig::kPd, seg->addr.value(), count, 0)) {
          return mlx5::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
        }
        length += count;
      }
    }
    if (length > (1ull << 31)) return mlx5::MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    if (!responder_answers()) return mlx5::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
    const uint64_t remote = raddr->raddr.value();
    if (!allowed(raddr->rkey.value(), NicModelRig::kPd, remote, length, nic::ACCESS_REMOTE_WRITE)) {
      return mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
    }
    const bool immediate = opcode == mlx5::MLX5_OPCODE_RDMA_WRITE_IMM;
    if (immediate && receives_available() == 0) return mlx5::MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
    uint8_t* out = shadow_of(remote, length);
    if (out == nullptr) return 0xff;
    if (is_inline) {
      for (uint64_t i = 0; i < length; ++i) out[i] = *r.byte_at(start, 36 + static_cast<uint32_t>(i));
    } else {
      for (uint32_t k = 2; k < ds; ++k) {
        const auto* seg = reinterpret_cast<const mlx5::mlx5_wqe_data_seg*>(r.segment(start, k));
        const uint32_t count = seg->byte_count.value();
        const uint8_t* in = shadow_of(seg->addr.value(), count);
        if (in == nullptr) return 0xff;
        // memmove, by hand: the oracle shares no copy routine with the engine.
        if (out < in) {
          for (uint32_t i = 0; i < count; ++i) out[i] = in[i];
        } else {
          for (uint32_t i = count; i > 0; --i) out[i - 1] = in[i - 1];
        }
        out += count;
      }
    }
    if (immediate) receive_cqe(immediate_raw, length);
    qp.rx_bytes += length;
    ++qp.rx_packets;
    *moved = length;
    return 0;
  }

  DISSECT_HD uint8_t fetch_add(uint64_t start, uint32_t ds, uint64_t* moved) {
    const mlx5::send_ring r = ring();
    if (ds != 4) return mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    const auto* raddr = reinterpret_cast<const mlx5::mlx5_wqe_raddr_seg*>(r.segment(start, 1));
    const auto* atomic = reinterpret_cast<const mlx5::mlx5_wqe_atomic_seg*>(r.segment(start, 2));
    const auto* data = reinterpret_cast<const mlx5::mlx5_wqe_data_seg*>(r.segment(start, 3));
    if (data->byte_count.value() != 8) return mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    const uint64_t result = data->addr.value();
    if ((result % 8) != 0 || !allowed(data->lkey.value(), NicModelRig::kPd, result, 8, nic::ACCESS_LOCAL_WRITE)) {
      return mlx5::MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
    }
    if (!responder_answers()) return mlx5::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
    const uint64_t remote = raddr->raddr.value();
    if ((remote % 8) != 0 || !allowed(raddr->rkey.value(), NicModelRig::kPd, remote, 8, nic::ACCESS_REMOTE_ATOMIC)) {
      return mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
    }
    uint8_t* target = shadow_of(remote, 8);
    uint8_t* out = shadow_of(result, 8);
    if (target == nullptr || out == nullptr) return 0xff;
    uint64_t old = 0;
    for (int i = 0; i < 8; ++i) old |= uint64_t{target[i]} << (8 * i);  // host (little-endian) order
    const uint64_t sum = old + atomic->swap_add.value();
    for (int i = 0; i < 8; ++i) target[i] = static_cast<uint8_t>(sum >> (8 * i));
    for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(old >> (8 * i));
    *moved = 8;
    return 0;
  }

  // One WQE at the consumer: its syndrome, size and bytes, per execute.h's rules in their order.
  DISSECT_HD void execute(uint8_t* syndrome, uint32_t* wqebbs, uint64_t* moved, uint8_t* opcode, bool* signaled) {
    const uint64_t start = qp.sq_consumer;
    const auto* ctrl = reinterpret_cast<const mlx5::mlx5_wqe_ctrl_seg*>(ring().wqebb(start));
    const uint32_t word0 = ctrl->opmod_idx_opcode.value();
    const uint32_t word1 = ctrl->qpn_ds.value();
    *opcode = static_cast<uint8_t>(word0 & 0xff);
    *signaled = (ctrl->fm_ce_se & 0x0c) == 0x08;
    const uint32_t ds = word1 & 0x3f;
    const uint64_t claimed = (ds + 3) / 4;
    const bool usable = ((word0 >> 8) & 0xffff) == (start & 0xffff) && (word1 >> 8) == softnic::QPN_BASE &&
                        ds != 0 && start + claimed <= qp.sq_target;
    *wqebbs = usable ? static_cast<uint32_t>(claimed) : 1;
    *moved = 0;
    if (qp.state == softnic::QP_STATE_ERROR) {
      *syndrome = mlx5::MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
    } else if (!usable) {
      *syndrome = mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    } else if (*opcode == mlx5::MLX5_OPCODE_NOP) {
      *syndrome = 0;
    } else if (*opcode == mlx5::MLX5_OPCODE_RDMA_WRITE || *opcode == mlx5::MLX5_OPCODE_RDMA_WRITE_IMM) {
      *syndrome = write(start, ds, *opcode, ctrl->imm.raw, moved);
    } else if (*opcode == mlx5::MLX5_OPCODE_ATOMIC_FA) {
      *syndrome = fetch_add(start, ds, moved);
    } else {
      *syndrome = mlx5::MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }
  }

  // service_qp's loop: the doorbell (stored by the driver in the shadow too), then up to `budget`
  // WQEs. Returns how many it executed.
  DISSECT_HD uint32_t service(uint32_t budget) {
    if (qp.state == softnic::QP_STATE_RESET) return 0;
    uint64_t doorbell = 0;
    const uint8_t* d = shadow + rig->doorbell.offset;
    for (int i = 0; i < 8; ++i) doorbell |= uint64_t{d[i]} << (8 * i);
    if (doorbell != qp.last_doorbell) {
      qp.last_doorbell = doorbell;
      ++qp.doorbells;
      // The doorbell's bytes: opmod_idx_opcode (BE32) then qpn_ds (BE32).
      const uint32_t index_word = (uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | d[3];
      const uint32_t qpn_word = (uint32_t{d[4]} << 24) | (uint32_t{d[5]} << 16) | (uint32_t{d[6]} << 8) | d[7];
      const uint16_t distance = static_cast<uint16_t>(((index_word >> 8) & 0xffff) - (qp.sq_consumer & 0xffff));
      if ((qpn_word >> 8) != softnic::QPN_BASE || distance > NicModelRig::kRingWqebbs) {
        ++qp.bad_doorbells;
      } else if (qp.sq_consumer + distance > qp.sq_target) {
        qp.sq_target = qp.sq_consumer + distance;
      }
    }
    uint32_t executed = 0;
    while (qp.sq_consumer < qp.sq_target && executed < budget && !unsafe) {
      const uint64_t start = qp.sq_consumer;
      uint8_t syndrome = 0, opcode = 0;
      uint32_t wqebbs = 1;
      uint64_t moved = 0;
      bool signaled = false;
      execute(&syndrome, &wqebbs, &moved, &opcode, &signaled);
      if (unsafe) break;
      qp.sq_consumer += wqebbs;
      ++qp.wqes_executed;
      if (syndrome == 0) {
        qp.tx_bytes += moved;
        ++qp.tx_packets;
        if (signaled) requester_cqe(start, opcode, 0, moved);
      } else {
        qp.state = softnic::QP_STATE_ERROR;
        requester_cqe(start, opcode, syndrome, 0);
      }
      ++executed;
    }
    return executed;
  }
};

}  // namespace dissect::testing::fuzz
