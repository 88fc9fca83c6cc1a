// The parallel engines' unit of work (src/softnic/engine/window.h, serve.h) against the one
// definition of what a WQE does (src/softnic/engine/execute.h):
//   - differential: the same seeded WQE streams driven through service_qp (one WQE at a time) and
//     through serve_qp with HostLanes (windows of up to 32) end in identical bytes, CQEs (all but
//     the timestamp), indices, QP states and counters;
//   - the host engine with 4 threads and 16 QPs executes every WQE exactly once and in order;
//   - an error in the middle of a window: the WQEs before it moved their bytes, the failure has its
//     CQE, the WQEs after it moved nothing and are flushed on later visits.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/softnic/profile.h"
#include "dissect/gda/gda.h"
#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/wqe.h"
#include "engine/execute.h"
#include "dissect/softnic/softnic.h"
#include "engine/serve.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
namespace mlx5 = dissect::mlx5;
namespace nic = dissect::nic;
namespace softnic = dissect::softnic;
using dissect::Scope;
using dissect::testing::fill_pattern;

namespace {

// --- a synthetic NIC in plain host memory: requester QP 0 -> responder QP 1 ---------------------

struct alignas(64) Block {
  uint8_t bytes[64];
};

constexpr uint32_t kPd = 1;
constexpr uint32_t kSourceMr = 1;     // source buffer, every access
constexpr uint32_t kDestMr = 2;       // destination buffer, every access
constexpr uint32_t kReadOnlyMr = 3;   // the destination again, local write only (no remote access)
constexpr uint32_t kMrCapacity = 8;
constexpr uint32_t kTag = 0x5c;
constexpr uint32_t key_of(uint32_t index) { return index << 8 | kTag; }
constexpr size_t kSourceBytes = 64 * 1024;
constexpr size_t kResultsOffset = kSourceBytes - 4096;  // FETCH_ADD results; never a write source
constexpr size_t kDestBytes = 256 * 1024;

struct Synthetic {
  Synthetic(uint32_t sq_wqebbs, uint32_t cqes, uint32_t rq_wqes)
      : ring(sq_wqebbs),
        responder_ring(1),
        source(kSourceBytes / 64),
        destination(kDestBytes / 64),
        mrs(kMrCapacity),
        qps(2),
        send_cqes(cqes),
        recv_cqes(cqes),
        responder_send_cqes(4),
        rq(rq_wqes) {
    for (auto* cq : {&send_cqes, &recv_cqes, &responder_send_cqes}) {
      for (auto& cqe : *cq) {
        std::memset(&cqe, 0, sizeof cqe);
        cqe.op_own = mlx5::MLX5_CQE_INITIAL_OP_OWN;
      }
    }
    std::memset(ring.data(), 0, ring.size() * sizeof(Block));
    fill_pattern(source_bytes(), kSourceBytes, 7);
    std::memset(destination_bytes(), 0xa5, kDestBytes);
    auto mr = [&](uint32_t index, void* address, size_t length, uint32_t access) {
      mrs[index] = softnic::MrEntry{reinterpret_cast<uintptr_t>(address), length, key_of(index),
                                    access, kPd, 1};
    };
    mr(kSourceMr, source_bytes(), kSourceBytes, nic::ACCESS_ALL);
    mr(kDestMr, destination_bytes(), kDestBytes, nic::ACCESS_ALL);
    mr(kReadOnlyMr, destination_bytes(), kDestBytes, nic::ACCESS_LOCAL_WRITE);

    tables.nic_id = 1;
    tables.mr_capacity = kMrCapacity;
    tables.qp_capacity = 2;
    tables.qp_count = 2;
    tables.mrs = mrs.data();
    tables.qps = qps.data();

    softnic::QpContext& q = qps[0];
    q.qpn = softnic::QPN_BASE;
    q.state = softnic::QP_STATE_RTS;
    q.pd = kPd;
    q.remote_qp_index = 1;
    q.remote_nic = &tables;
    q.sq = mlx5::send_ring{ring[0].bytes, sq_wqebbs};
    q.dbrec = &dbrec[0];
    q.doorbell = &doorbell;
    q.send_cq = softnic::CqContext{send_cqes.data(), cqes, 1, 0};

    softnic::QpContext& r = qps[1];
    r.qpn = softnic::QPN_BASE + 1;
    r.state = softnic::QP_STATE_RTS;
    r.pd = kPd;
    r.remote_qp_index = 0;
    r.remote_nic = &tables;
    r.sq = mlx5::send_ring{responder_ring[0].bytes, 1};
    r.dbrec = &dbrec[1];
    r.doorbell = &responder_doorbell;
    r.send_cq = softnic::CqContext{responder_send_cqes.data(), 4, 2, 0};
    r.rq = rq.empty() ? nullptr : rq.data();
    r.rq_wqe_count = static_cast<uint32_t>(rq.size());
    r.recv_cq = softnic::CqContext{recv_cqes.data(), cqes, 3, 0};
  }
  Synthetic(const Synthetic&) = delete;
  Synthetic& operator=(const Synthetic&) = delete;

  softnic::QpContext& qp() { return qps[0]; }
  softnic::QpContext& responder() { return qps[1]; }
  uint8_t* source_bytes() { return source[0].bytes; }
  uint8_t* destination_bytes() { return destination[0].bytes; }
  uint64_t source_address(size_t offset) { return reinterpret_cast<uintptr_t>(source_bytes()) + offset; }
  uint64_t destination_address(size_t offset) {
    return reinterpret_cast<uintptr_t>(destination_bytes()) + offset;
  }

  void ring_doorbell(uint64_t producer) {
    dissect::store_release<Scope::system>(&dbrec[0].send_counter.raw, mlx5::dbrec_value(producer).raw);
    dissect::store_release<Scope::system>(&doorbell, mlx5::doorbell_value(producer, qp().qpn));
  }
  void post_receives(uint32_t count) {
    for (uint32_t i = 0; i < count; ++i, ++rq_posted) {
      mlx5::set_data_seg(&rq[rq_posted & (rq.size() - 1)], 0, mlx5::MLX5_INVALID_LKEY, 0);
    }
    dissect::store_release<Scope::system>(&dbrec[1].rcv_counter.raw, mlx5::dbrec_value(rq_posted).raw);
  }

  std::vector<Block> ring, responder_ring, source, destination;
  std::vector<softnic::MrEntry> mrs;
  std::vector<softnic::QpContext> qps;
  softnic::NicTables tables{};
  std::vector<mlx5::mlx5_cqe64> send_cqes, recv_cqes, responder_send_cqes;
  std::vector<mlx5::mlx5_wqe_data_seg> rq;
  mlx5::mlx5_qp_dbrec dbrec[2] = {};
  uint64_t doorbell = 0;
  uint64_t responder_doorbell = 0;
  uint64_t producer = 0;  // WQEBBs built
  uint64_t rq_posted = 0;
};

// --- WQE descriptions, built the same way into either setup -------------------------------------

enum class Kind : uint8_t { nop, inline_write, write, gather, write_imm, fetch_add, bad_opcode };
// How the remote (or local) key of a WQE is spoiled, if at all.
enum class Fault : uint8_t { none, bad_rkey, out_of_bounds, read_only, bad_lkey, misaligned };

struct Op {
  Kind kind = Kind::nop;
  Fault fault = Fault::none;
  bool signaled = false;
  uint32_t length = 0;
  uint32_t source_offset = 0;
  uint32_t dest_offset = 0;
  uint32_t immediate = 0;
  uint64_t addend = 0;
  std::vector<uint8_t> payload;  // inline
};

uint32_t op_ds(const Op& op) {
  switch (op.kind) {
    case Kind::nop: return 1;
    case Kind::inline_write: return mlx5::rc_write_inline_ds(op.length);
    case Kind::write:
    case Kind::write_imm:
    case Kind::bad_opcode: return mlx5::RC_WRITE_DS;
    case Kind::gather: return 4;
    case Kind::fetch_add: return mlx5::RC_FETCH_ADD_DS;
  }
  return 1;
}
uint32_t op_wqebbs(const Op& op) { return mlx5::wqebbs_for_ds(op_ds(op)); }

void put_segment(const mlx5::send_ring& ring, uint64_t start, uint32_t k, const void* segment) {
  std::memcpy(ring.segment(start, k), segment, 16);
}

// Builds `op` at s.producer and advances it.
void build(Synthetic& s, const Op& op) {
  const uint64_t start = s.producer;
  const mlx5::send_ring& ring = s.qp().sq;
  const uint32_t ds = op_ds(op);
  uint8_t opcode = mlx5::MLX5_OPCODE_NOP;
  switch (op.kind) {
    case Kind::nop: opcode = mlx5::MLX5_OPCODE_NOP; break;
    case Kind::inline_write:
    case Kind::write:
    case Kind::gather: opcode = mlx5::MLX5_OPCODE_RDMA_WRITE; break;
    case Kind::write_imm: opcode = mlx5::MLX5_OPCODE_RDMA_WRITE_IMM; break;
    case Kind::fetch_add: opcode = mlx5::MLX5_OPCODE_ATOMIC_FA; break;
    case Kind::bad_opcode: opcode = mlx5::MLX5_OPCODE_SEND; break;
  }
  // Clear the WQE's WQEBBs so that stale bytes of an earlier lap never differ between setups.
  for (uint32_t b = 0; b < mlx5::wqebbs_for_ds(ds); ++b) std::memset(ring.wqebb(start + b), 0, 64);
  mlx5::mlx5_wqe_ctrl_seg ctrl;
  mlx5::set_ctrl_seg(&ctrl, static_cast<uint16_t>(start), opcode, 0, s.qp().qpn,
                     op.signaled ? mlx5::MLX5_WQE_CTRL_CQ_UPDATE : 0, static_cast<uint8_t>(ds), 0,
                     mlx5::be32::from_host(op.immediate));
  put_segment(ring, start, 0, &ctrl);
  if (op.kind != Kind::nop) {
    uint64_t remote = s.destination_address(op.dest_offset);
    uint32_t rkey = key_of(kDestMr);
    uint32_t lkey = key_of(kSourceMr);
    switch (op.fault) {
      case Fault::none: break;
      case Fault::bad_rkey: rkey = key_of(kDestMr) ^ 1; break;  // right index, stale tag
      case Fault::out_of_bounds: remote = s.destination_address(kDestBytes - op.length / 2); break;
      case Fault::read_only: rkey = key_of(kReadOnlyMr); break;
      case Fault::bad_lkey: lkey = key_of(6); break;  // an empty slot
      case Fault::misaligned: remote += 4; break;
    }
    mlx5::mlx5_wqe_raddr_seg raddr;
    mlx5::set_raddr_seg(&raddr, remote, rkey);
    put_segment(ring, start, 1, &raddr);
    if (op.kind == Kind::inline_write) {
      const uint32_t header = mlx5::byte_swap(op.length | mlx5::MLX5_INLINE_SEG);
      mlx5::copy_into_wqe(ring, start, 2 * mlx5::MLX5_SEND_WQE_DS, &header, 4);
      mlx5::copy_into_wqe(ring, start, 2 * mlx5::MLX5_SEND_WQE_DS + 4, op.payload.data(), op.length);
    } else if (op.kind == Kind::fetch_add) {
      mlx5::mlx5_wqe_atomic_seg atomic;
      mlx5::set_atomic_fetch_add_seg(&atomic, op.addend);
      put_segment(ring, start, 2, &atomic);
      mlx5::mlx5_wqe_data_seg data;
      mlx5::set_data_seg(&data, 8, lkey, s.source_address(op.source_offset));
      put_segment(ring, start, 3, &data);
    } else if (op.kind == Kind::gather) {
      const uint32_t first = op.length / 3;
      mlx5::mlx5_wqe_data_seg data;
      mlx5::set_data_seg(&data, first, lkey, s.source_address(op.source_offset));
      put_segment(ring, start, 2, &data);
      mlx5::set_data_seg(&data, op.length - first, lkey,
                         s.source_address(op.source_offset + first + 40));
      put_segment(ring, start, 3, &data);
    } else {
      mlx5::mlx5_wqe_data_seg data;
      mlx5::set_data_seg(&data, op.length, lkey, s.source_address(op.source_offset));
      put_segment(ring, start, 2, &data);
    }
  }
  s.producer += mlx5::wqebbs_for_ds(ds);
}

std::string describe(const Op& op) {
  static const char* kinds[] = {"NOP", "INL", "WRITE", "GATHER", "WRITE_IMM", "FADD", "SEND?"};
  static const char* faults[] = {"", " bad_rkey", " oob", " read_only", " bad_lkey", " misaligned"};
  std::ostringstream out;
  out << kinds[static_cast<int>(op.kind)];
  if (op.kind != Kind::nop) out << "(" << op.length << "B src+" << op.source_offset << " dst+" << op.dest_offset << ")";
  out << faults[static_cast<int>(op.fault)] << (op.signaled ? " S" : " u");
  return out.str();
}

// --- the random program of one seed ---------------------------------------------------------------

struct Doorbell {
  size_t ops;       // WQEs (of the round) announced
  uint32_t budget;  // of the one visit that follows the doorbell
};
struct Round {
  std::vector<Op> ops;
  uint32_t receives = 0;       // posted at the start of the round
  bool build_up_front = true;  // every WQE built before the first doorbell (else per doorbell)
  std::vector<Doorbell> doorbells;
};

// Which WQEs a program holds: any kind, or only those of express windows (engine/express.h: NOPs,
// inline payloads of at most 28 B, one-segment WRITEs under 256 B; all one WQEBB).
// `lone`: the same WQEs, each rung by a doorbell of its own and visited at once, so that every
// window of a QP in RTS has exactly one WQEBB announced (engine/lone.h).
enum class Mix : uint8_t { any, one_wqebb, lone };

// `hazards`: destinations and sources anywhere (a later WQE may overwrite or read what an earlier
// one of the same doorbell wrote); otherwise every WQE of a round writes a range of its own and
// no source is ever written.
std::vector<Round> make_program(uint32_t seed, uint32_t sq_wqebbs, uint32_t rq_wqes, bool hazards,
                                Mix mix = Mix::any) {
  std::mt19937 rng(seed);
  auto uniform = [&](uint32_t lo, uint32_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  // 40 % of the seeds have no fault at all; the others one now and then.
  const double fault_rate = chance(0.4) ? 0.0 : 1.0 / uniform(40, 400);
  const double signal_rate = chance(0.2) ? 1.0 : 0.1 + 0.8 * uniform(0, 100) / 100.0;
  std::vector<Round> program(uniform(4, 12));
  for (Round& round : program) {
    uint32_t wqebbs = 0;
    uint32_t imms = 0;
    size_t next_dest = 0;
    const uint32_t target = uniform(1, sq_wqebbs);
    while (true) {
      Op op;
      const uint32_t pick = uniform(0, 99);
      if (mix != Mix::any) {
        op.kind = pick < 10 ? Kind::nop : (pick < 55 ? Kind::inline_write : Kind::write);
        if (op.kind == Kind::inline_write) op.length = chance(0.5) ? 8 : uniform(1, 28);
        if (op.kind == Kind::write) op.length = uniform(1, 255);
      } else if (pick < 8) {
        op.kind = Kind::nop;
      } else if (pick < 30) {
        op.kind = Kind::inline_write;
        op.length = chance(0.5) ? 8 : (chance(0.7) ? 100 : uniform(1, 200));
      } else if (pick < 84) {
        op.kind = Kind::write;
        op.length = chance(0.55) ? uniform(8, 255) : uniform(256, 4096);
        if (chance(0.1)) op.length = chance(0.5) ? 256 : 255;
      } else if (pick < 88) {
        op.kind = Kind::gather;
        op.length = uniform(3, 600);
      } else if (pick < 95) {
        op.kind = Kind::write_imm;
        op.length = uniform(0, 700);
        op.immediate = rng();
        ++imms;
      } else {
        op.kind = Kind::fetch_add;
        op.length = 8;
        op.addend = rng();
      }
      op.signaled = chance(signal_rate);
      if (wqebbs + op_wqebbs(op) > target) break;
      // Addresses.
      if (op.kind == Kind::fetch_add) {
        op.source_offset = static_cast<uint32_t>(kResultsOffset + 8 * uniform(0, 511));
      } else if (op.kind == Kind::inline_write) {
        op.payload.resize(op.length);
        for (auto& b : op.payload) b = static_cast<uint8_t>(rng());
      } else if (op.kind != Kind::nop) {
        op.source_offset = uniform(0, static_cast<uint32_t>(kResultsOffset - op.length - 64));
        if (chance(0.5)) op.source_offset &= ~15u;
      }
      if (op.kind != Kind::nop) {
        const uint32_t align = op.kind == Kind::fetch_add ? 8 : (chance(0.5) ? 16 : 1);
        if (hazards) {
          // A small destination area, so that WQEs of one window overlap often.
          op.dest_offset = uniform(0, 8192 - op.length) & ~(align - 1);
        } else {
          next_dest = (next_dest + align - 1) & ~size_t{align - 1};
          if (next_dest + op.length + 8 > kDestBytes) break;
          op.dest_offset = static_cast<uint32_t>(next_dest);
          next_dest += op.length + uniform(0, 24);
        }
      }
      if (fault_rate > 0 && chance(fault_rate)) {
        if (op.kind == Kind::nop && mix != Mix::any) {
          // a bad opcode is no express WQE: the NOP stays
        } else if (op.kind == Kind::nop) {
          op.kind = Kind::bad_opcode;
          op.length = 8;
        } else if (op.kind == Kind::fetch_add) {
          op.fault = chance(0.5) ? Fault::misaligned : Fault::bad_rkey;
        } else if (op.kind == Kind::inline_write) {
          op.fault = static_cast<Fault>(uniform(1, 3));
        } else {
          op.fault = static_cast<Fault>(uniform(1, 4));
        }
        if (op.fault == Fault::out_of_bounds && op.length < 2) op.fault = Fault::bad_rkey;
      }
      wqebbs += op_wqebbs(op);
      round.ops.push_back(std::move(op));
    }
    if (round.ops.empty()) {
      Op nop;
      nop.signaled = true;
      round.ops.push_back(nop);
    }
    // Enough receive WQEs, mostly; now and then too few (RNR_RETRY_EXC_ERR).
    round.receives = chance(0.93) ? imms + uniform(0, 2) : uniform(0, imms);
    if (round.receives > rq_wqes) round.receives = rq_wqes;
    round.build_up_front = chance(0.5);
    const uint32_t doorbells = uniform(1, 4);
    for (uint32_t d = 0; d + 1 < doorbells; ++d) {
      round.doorbells.push_back(
          Doorbell{uniform(0, static_cast<uint32_t>(round.ops.size())), uniform(1, 70)});
    }
    round.doorbells.push_back(Doorbell{round.ops.size(), uniform(1, 70)});
    if (mix == Mix::lone) {  // a doorbell after every WQE, each followed by a visit
      round.doorbells.clear();
      for (size_t i = 1; i <= round.ops.size(); ++i) round.doorbells.push_back(Doorbell{i, uniform(1, 70)});
    }
    for (size_t d = 1; d < round.doorbells.size(); ++d) {  // monotonic
      if (round.doorbells[d].ops < round.doorbells[d - 1].ops) {
        round.doorbells[d].ops = round.doorbells[d - 1].ops;
      }
    }
  }
  return program;
}

// --- comparison ----------------------------------------------------------------------------------

// Without the engine's clock: the timestamp and the softnic's CQE extension (cqe_times.h: the
// doorbell's dates and the path, which differ between the executors compared).
mlx5::mlx5_cqe64 without_timestamp(mlx5::mlx5_cqe64 cqe) {
  cqe.timestamp = mlx5::be64{0};
  std::memset(reinterpret_cast<uint8_t*>(&cqe) + softnic::CQE_TIMES_OFFSET, 0, softnic::CQE_TIMES_BYTES);
  return cqe;
}

std::string cqe_hex(const mlx5::mlx5_cqe64& cqe) {
  std::ostringstream out;
  const auto* b = reinterpret_cast<const uint8_t*>(&cqe);
  for (int i = 0; i < 64; ++i) {
    static const char* digits = "0123456789abcdef";
    out << digits[b[i] >> 4] << digits[b[i] & 15] << ((i % 16 == 15) ? " | " : "");
  }
  return out.str();
}

void expect_same_counters(const softnic::ModelCounters& a, const softnic::ModelCounters& b,
                          const char* who) {
  EXPECT_EQ(a.doorbells, b.doorbells) << who;
  EXPECT_EQ(a.wqes_executed, b.wqes_executed) << who;
  EXPECT_EQ(a.tx_bytes, b.tx_bytes) << who;
  EXPECT_EQ(a.tx_packets, b.tx_packets) << who;
  EXPECT_EQ(a.rx_bytes, b.rx_bytes) << who;
  EXPECT_EQ(a.rx_packets, b.rx_packets) << who;
  EXPECT_EQ(a.cqes_written, b.cqes_written) << who;
  EXPECT_EQ(a.error_cqes, b.error_cqes) << who;
  EXPECT_EQ(a.bad_doorbells, b.bad_doorbells) << who;
}

// Compares the CQEs [from, to) of two CQs.
void expect_same_cqes(const softnic::CqContext& a, const softnic::CqContext& b, uint64_t from,
                      const char* which) {
  ASSERT_EQ(a.produced, b.produced) << which << " CQEs produced";
  for (uint64_t n = from; n < a.produced; ++n) {
    const auto x = without_timestamp(a.cqes[n & (a.cqe_count - 1)]);
    const auto y = without_timestamp(b.cqes[n & (b.cqe_count - 1)]);
    ASSERT_EQ(0, std::memcmp(&x, &y, sizeof x))
        << which << " CQE " << n << "\n one at a time: " << cqe_hex(x) << "\n window:        "
        << cqe_hex(y);
  }
}

// A visit of Mix::lone's programs: every window of a QP in RTS must be a lone window (serve_lone,
// no express or staged fallback), and serve_qp's visit must end after it.
uint32_t visit_lone(softnic::Window& window, Synthetic& s, uint32_t budget) {
  const softnic::HostLanes lanes;
  softnic::settle_in_flight(lanes, window);  // as serve_window does before its head
  softnic::open_window<Scope::system>(lanes, window, s.qp(), &window.cache[0], s.tables);
  if (window.state == softnic::QP_STATE_RESET || window.available == 0) return 0;
  if (window.state != softnic::QP_STATE_RTS) {  // flushes: one WQE a window, as serve_qp does
    uint32_t executed = 0;
    while (executed < budget && softnic::serve_alone(lanes, s.qp(), s.tables).executed != 0) {
      ++executed;
      softnic::open_window<Scope::system>(lanes, window, s.qp(), &window.cache[0], s.tables);
      if (window.available == 0) break;
    }
    return executed;
  }
  EXPECT_EQ(window.available, 1u) << "a doorbell of Mix::lone announced more than one WQEBB";
  const softnic::Served served = softnic::serve_lone<Scope::system>(lanes, window, window.cache[0], s.qp());
  EXPECT_EQ(served.executed, 1u) << "the WQE at " << s.qp().sq_consumer << " was not a lone window";
  EXPECT_EQ(served.lone, 1u);
  return served.executed;
}

// One visit of the windowed engine: serve_qp, or (Mix::one_wqebb) its loop with every window of a
// QP in RTS required to be an express window (serve_express, no staged fallback); the WQEs of
// express passes that ran more than one window of a backlog are added to `run_wqes`.
uint32_t visit(Mix mix, softnic::Window& window, Synthetic& s, uint32_t budget, uint64_t* run_wqes = nullptr) {
  const softnic::HostLanes lanes;
  if (mix == Mix::any) return softnic::serve_qp(lanes, window, s.qp(), s.tables, &window.cache[0], budget).executed;
  if (mix == Mix::lone) return visit_lone(window, s, budget);
  uint32_t executed = 0;
  while (executed < budget) {
    softnic::open_window<Scope::system>(lanes, window, s.qp(), &window.cache[0], s.tables,
                                        executed != 0);
    if (window.state == softnic::QP_STATE_RESET || window.available == 0) break;
    const softnic::Served served =
        window.state == softnic::QP_STATE_RTS
            ? softnic::serve_express<Scope::system>(lanes, window, window.cache[0], s.qp())
            : softnic::serve_alone(lanes, s.qp(), s.tables);
    EXPECT_LE(served.executed, softnic::EXPRESS_RUN);
    if (run_wqes != nullptr && served.executed > softnic::WINDOW_LANES) *run_wqes += served.executed;
    EXPECT_NE(served.executed, 0u) << "a window of one-WQEBB WQEs at " << s.qp().sq_consumer
                                   << " was not an express window";
    if (served.executed == 0) break;
    executed += served.executed;
  }
  return executed;
}

// Drives the reference one WQE at a time and `windowed` in windows until neither has anything
// announced left.
void drain(Synthetic& reference, Synthetic& windowed, softnic::Window& window, Mix mix) {
  for (int guard = 0; guard < 100000; ++guard) {
    const uint32_t a = softnic::service_qp(reference.qp(), reference.tables, 64);
    const uint32_t b = visit(mix, window, windowed, 64);
    if (a != 0 || b != 0) continue;
    // A full ring of held windows fetches nothing until its oldest leaves: the engine loop's
    // release, at their dates.
    if (window.held == nullptr || window.held->head == window.held->tail) return;
    softnic::settle_held_windows(softnic::HostLanes{}, window);
  }
  FAIL() << "the engines never ran dry";
}

struct Outcome {
  uint64_t windowed_wqes = 0;
  uint64_t errors = 0;
  uint64_t run_wqes = 0;  // executed by express passes of more than one window (Mix::one_wqebb)
};

// Runs one seed's program through both engines; returns false (with gtest failures) on the first
// round that differs.
// `profiled`: the windowed engine runs under an enabled timing profile of zero latencies and no
// rate limit, i.e. through the paced paths (the paced lone window, the staged window's pacing),
// whose outcome must be that of the fast ones. `held`: as an engine loop runs them, the paced lone
// WQEs held (in_flight.h) and released by the next visit's settle, under a profile whose latency
// makes the lone window hold them.
bool run_differential(uint32_t seed, bool hazards, Outcome* outcome, Mix mix = Mix::any,
                      bool profiled = false, bool held = false, uint32_t kSq = 64) {
  constexpr uint32_t kCq = 128;
  constexpr uint32_t kRq = 64;
  const std::vector<Round> program = make_program(seed, kSq, kRq, hazards, mix);
  auto reference = std::make_unique<Synthetic>(kSq, kCq, kRq);
  auto windowed = std::make_unique<Synthetic>(kSq, kCq, kRq);
  softnic::Window window{};
  window.profile.enabled = profiled ? 1 : 0;
  window.holds = held ? 1 : 0;
  softnic::HeldWindows ring{};  // held: the paced express windows, too (held_windows.h)
  if (held) window.held = &ring;
  // Held: dates far enough ahead that the lone window holds its WQE rather than releasing it in
  // place (IN_FLIGHT_HOLD_MIN_NS); the next visit's settle waits for them.
  if (held) window.profile.doorbell_to_data_ns = softnic::IN_FLIGHT_HOLD_MIN_NS + 2000;
  std::ostringstream trace;  // the program so far, for the failure message
  for (size_t r = 0; r < program.size(); ++r) {
    const Round& round = program[r];
    const uint64_t send_from = reference->qp().send_cq.produced;
    const uint64_t recv_from = reference->responder().recv_cq.produced;
    trace << "round " << r << " (+" << round.receives << " receives, "
          << (round.build_up_front ? "built up front" : "built per doorbell") << ", sq at "
          << reference->producer << "):";
    size_t doorbell_index = 0;
    for (size_t i = 0; i < round.ops.size(); ++i) {
      while (doorbell_index < round.doorbells.size() - 1 &&
             round.doorbells[doorbell_index].ops == i) {
        trace << " [db b" << round.doorbells[doorbell_index].budget << "]";
        ++doorbell_index;
      }
      trace << " " << i << ":" << describe(round.ops[i]);
    }
    trace << " [db]\n";
    reference->post_receives(round.receives);
    windowed->post_receives(round.receives);
    uint64_t announced = reference->producer;  // the round's first WQEBB
    size_t built = 0;
    if (round.build_up_front) {
      for (const Op& op : round.ops) build(*reference, op), build(*windowed, op);
      built = round.ops.size();
    }
    size_t announced_ops = 0;
    for (const Doorbell& d : round.doorbells) {
      for (; built < d.ops; ++built) build(*reference, round.ops[built]), build(*windowed, round.ops[built]);
      for (; announced_ops < d.ops; ++announced_ops) announced += op_wqebbs(round.ops[announced_ops]);
      reference->ring_doorbell(announced);
      windowed->ring_doorbell(announced);
      softnic::service_qp(reference->qp(), reference->tables, d.budget);
      outcome->windowed_wqes += visit(mix, window, *windowed, d.budget, &outcome->run_wqes);
    }
    drain(*reference, *windowed, window, mix);
    EXPECT_EQ(window.in_flight.stage, softnic::IN_FLIGHT_NONE) << "a visit that found nothing left a WQE held";
    // Held windows wait for their dates, not for a visit: the engine loop's last steps.
    softnic::settle_held_windows(softnic::HostLanes{}, window);
    EXPECT_EQ(ring.head, ring.tail) << "a settle left a window held";

    SCOPED_TRACE("seed " + std::to_string(seed) + ", after round " + std::to_string(r) +
                 "; program:\n" + trace.str());
    softnic::QpContext& a = reference->qp();
    softnic::QpContext& b = windowed->qp();
    EXPECT_EQ(a.sq_consumer, b.sq_consumer);
    EXPECT_EQ(a.sq_consumer, reference->producer);
    EXPECT_EQ(a.sq_target, b.sq_target);
    EXPECT_EQ(a.last_doorbell, b.last_doorbell);
    EXPECT_EQ(a.state, b.state);
    expect_same_counters(a.counters, b.counters, "requester");
    expect_same_counters(reference->responder().counters, windowed->responder().counters,
                         "responder");
    EXPECT_EQ(reference->responder().rq_consumer, windowed->responder().rq_consumer);
    expect_same_cqes(a.send_cq, b.send_cq, send_from, "send");
    expect_same_cqes(reference->responder().recv_cq, windowed->responder().recv_cq, recv_from,
                     "receive");
    for (size_t i = 0; i < kDestBytes; ++i) {
      if (reference->destination_bytes()[i] != windowed->destination_bytes()[i]) {
        ADD_FAILURE() << "destination byte " << i << ": one at a time "
                      << int{reference->destination_bytes()[i]} << ", window "
                      << int{windowed->destination_bytes()[i]};
        break;
      }
    }
    EXPECT_EQ(0, std::memcmp(reference->source_bytes(), windowed->source_bytes(), kSourceBytes))
        << "source buffer (FETCH_ADD results)";
    if (::testing::Test::HasFailure()) return false;
  }
  outcome->errors += reference->qp().counters.error_cqes;
  return true;
}

enum class Hazards { none, all, every_other };

// Seeds 1..`seeds` through run_differential, stopping at the first that differs.
Outcome run_seeds(uint32_t seeds, Hazards hazards, Mix mix = Mix::any, bool profiled = false,
                  bool held = false, uint32_t sq_wqebbs = 64) {
  Outcome outcome;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    const bool h = hazards == Hazards::all || (hazards == Hazards::every_other && seed % 2 == 0);
    if (!run_differential(seed, h, &outcome, mix, profiled, held, sq_wqebbs)) break;
  }
  return outcome;
}

TEST(EngineWindow, WindowsMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(200, Hazards::none);
  // The programs exercised the window path and the error paths.
  EXPECT_GT(outcome.windowed_wqes, 10000u);
  EXPECT_GT(outcome.errors, 50u);
}

// Same, but a WQE may overwrite bytes an earlier WQE of the same doorbell wrote (and a FETCH_ADD
// return them). The window copies small WRITEs per lane and large ones warp-wide after them, so
// it must end before a WRITE whose destination overlaps an earlier one's (disjoint_prefix).
TEST(EngineWindow, WindowsMatchOneWqeAtATimeWhenWritesOverlap) {
  run_seeds(200, Hazards::all);
}

// The express window (engine/express.h) alone: programs of one-WQEBB WQEs only, every window of
// a QP in RTS served by serve_express, against one WQE at a time.
TEST(EngineWindow, ExpressWindowsMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(200, Hazards::every_other, Mix::one_wqebb);
  EXPECT_GT(outcome.windowed_wqes, 10000u);
  EXPECT_GT(outcome.errors, 20u);
}

// Express passes over a backlog (engine/express.h, EXPRESS_RUN): rounds of up to 256 one-WQEBB
// WQEs, so that doorbells announce several windows at once; a pass runs windows of 32 back to back
// until one ends short (a fault, an overlap, the announced WQEBBs), and the outcome is one WQE at a
// time's.
TEST(EngineWindow, ExpressRunsMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(100, Hazards::every_other, Mix::one_wqebb, false, false, 256);
  EXPECT_GT(outcome.run_wqes, 5000u) << "the programs rarely gave a pass more than one window";
  EXPECT_LT(outcome.run_wqes, outcome.windowed_wqes) << "no pass ended after one window";
  EXPECT_GT(outcome.errors, 10u);
}

// The lone window (engine/lone.h) alone: one-WQEBB WQEs (NOPs, inline payloads up to 28 B,
// one-segment WRITEs under 256 B, faults among them), each rung on its own and executed by
// serve_lone, against one WQE at a time: the same bytes, CQEs (error CQEs included), consumer,
// state and counters, and the flushes after a failure. Then serve_window and serve_qp on single-WQE
// doorbells: one lone window a visit, in order, each WQE once, the CQEs' fields.
TEST(EngineWindow, LoneWqesMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(200, Hazards::every_other, Mix::lone);
  EXPECT_GT(outcome.windowed_wqes, 5000u);
  EXPECT_GT(outcome.errors, 20u);
}

// The same under a timing profile: the paced lone window (lone.h, lone_wqe_paced) executes what
// the fast one does, and so do the paced windows of mixed programs.
TEST(EngineWindow, PacedLoneWqesMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(100, Hazards::every_other, Mix::lone, /*profiled=*/true);
  EXPECT_GT(outcome.windowed_wqes, 2500u);
  EXPECT_GT(outcome.errors, 10u);
  const Outcome mixed = run_seeds(50, Hazards::none, Mix::any, /*profiled=*/true);
  EXPECT_GT(mixed.windowed_wqes, 2500u);
}

// Held as an engine loop holds them (Window::holds): released at the next visit, the outcome is
// still that of one WQE at a time, error CQEs before the flushes they cause.
TEST(EngineWindow, HeldLoneWqesMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(100, Hazards::every_other, Mix::lone, /*profiled=*/true, /*held=*/true);
  EXPECT_GT(outcome.windowed_wqes, 2500u);
  EXPECT_GT(outcome.errors, 10u);
  const Outcome mixed = run_seeds(50, Hazards::none, Mix::any, /*profiled=*/true, /*held=*/true);
  EXPECT_GT(mixed.windowed_wqes, 2500u);
}

// Paced express windows held in the warp's ring (held_windows.h), released oldest first at the next
// visits and the settle: the outcome of one WQE at a time, error CQEs before their flushes, and the
// ring's wrap (more windows than it holds) waits for the oldest.
TEST(EngineWindow, HeldWindowsMatchOneWqeAtATime) {
  const Outcome outcome = run_seeds(100, Hazards::every_other, Mix::one_wqebb, /*profiled=*/true, /*held=*/true);
  EXPECT_GT(outcome.windowed_wqes, 5000u);
  EXPECT_GT(outcome.errors, 10u);
}

// A Window that holds what it paces, under a profile of these latencies.
void hold_paced(softnic::Window& window, uint32_t doorbell_to_data_ns, uint32_t data_to_cqe_ns) {
  window.profile.enabled = 1;
  window.profile.doorbell_to_data_ns = doorbell_to_data_ns;
  window.profile.data_to_cqe_ns = data_to_cqe_ns;
  window.holds = 1;
}

// Held windows wait for their dates: the visits return with every window retired and nothing
// written; with the ring of four full a fifth doorbell's visit fetches nothing (pending) until the
// oldest window leaves; the loop's step before the fifth's dates does nothing; and the settle
// writes every payload and CQE in order, each CQE stamped no earlier than its ring date plus the
// profile's latencies.
TEST(EngineWindow, HeldWindowsWaitForTheirDates) {
  auto s = std::make_unique<Synthetic>(64, 128, 0);
  softnic::Window window{};
  // Dates tens of milliseconds apart: every step below is ordered by them however loaded the
  // machine (a ctest -j run beside it).
  hold_paced(window, 300'000'000, 100'000'000);
  softnic::HeldWindows ring{};
  window.held = &ring;
  const softnic::HostLanes lanes;
  constexpr uint32_t WINDOWS = softnic::HELD_WINDOWS + 1, PER_WINDOW = 4;
  std::vector<uint64_t> rung;
  const auto visit_qp = [&] { return softnic::serve_qp(lanes, window, s->qp(), s->tables, &window.cache[0], 64); };
  for (uint32_t n = 0; n < WINDOWS; ++n) {
    for (uint32_t k = 0; k < PER_WINDOW; ++k) {
      Op op;
      op.kind = Kind::inline_write;
      op.length = 8;
      op.signaled = true;
      op.dest_offset = 8 * (n * PER_WINDOW + k);
      op.payload.assign(8, static_cast<uint8_t>(1 + n * PER_WINDOW + k));
      build(*s, op);
    }
    s->ring_doorbell(s->producer);
    // The first four rung 250 ms ago, as the engine loop's pass clock may date them (ring_date):
    // due 50 ms and 150 ms from now. The fifth is dated when seen (no clock): 300 ms ahead.
    window.clock.pass_ns = n + 1 < WINDOWS ? dissect::now_ns() - 250'000'000 : 0;
    const uint64_t consumer = s->qp().sq_consumer;
    if (n == softnic::HELD_WINDOWS) {
      const softnic::Served held_back = visit_qp();
      EXPECT_EQ(held_back.executed, 0u) << "a visit fetched WQEs with the ring full";
      EXPECT_EQ(held_back.pending, 1u) << "a visit held back by the ring says more is announced";
      EXPECT_EQ(s->qp().sq_consumer, consumer);
      softnic::release_held_windows(lanes, window, softnic::HELD_WINDOWS - 1);  // the oldest, at its dates
      EXPECT_EQ(s->destination_bytes()[0], 1) << "the oldest window left without its payload";
    }
    const softnic::Served served = visit_qp();
    ASSERT_EQ(served.executed, PER_WINDOW) << "window " << n;
    EXPECT_EQ(s->qp().sq_consumer, consumer + PER_WINDOW) << "a held window is retired at its hold";
    rung.push_back(s->qp().doorbell_rung_ns);
    if (n < softnic::HELD_WINDOWS) EXPECT_EQ(ring.tail - ring.head, n + 1) << "window " << n;
  }
  const uint8_t* bytes = s->destination_bytes();
  const uint32_t last = (WINDOWS - 1) * PER_WINDOW;  // the fifth window's first WQE
  EXPECT_NE(bytes[8 * last], 1 + last) << "the fifth window's payload before its date";
  const auto cqe = [&](uint32_t i) -> const mlx5::mlx5_cqe64& { return s->send_cqes[i % s->send_cqes.size()]; };
  const uint8_t unowned = cqe(last).op_own;
  softnic::release_due_held_windows(lanes, window);  // the loop's step, ~150 ms early
  EXPECT_NE(ring.tail, ring.head);
  EXPECT_NE(bytes[8 * last], 1 + last) << "the loop's step moved a payload early";
  EXPECT_EQ(cqe(last).op_own, unowned) << "a CQE before its date";
  softnic::settle_held_windows(lanes, window);
  EXPECT_EQ(ring.tail, ring.head);
  for (uint32_t i = 0; i < WINDOWS * PER_WINDOW; ++i) {
    EXPECT_EQ(bytes[8 * i], 1 + i) << "payload of WQE " << i;
    EXPECT_EQ(cqe(i).op_own >> 4, mlx5::MLX5_CQE_REQ) << "CQE " << i;
    EXPECT_EQ(cqe(i).wqe_counter.value(), static_cast<uint16_t>(i)) << "CQE " << i;
    EXPECT_GE(cqe(i).timestamp.value(), rung[i / PER_WINDOW] + 400'000'000)
        << "CQE " << i << " before its ring date plus the latencies";
  }
}

// A held WQE's payload and CQE wait for their dates, not for the visit: the visit returns with the
// WQE retired and nothing written, the loop's step before the date does nothing, and the release
// writes both, the CQE stamped no earlier than the ring date plus the profile's latencies.
TEST(EngineWindow, HeldLoneWqeWaitsForItsDates) {
  auto s = std::make_unique<Synthetic>(64, 128, 0);
  softnic::Window window{};
  hold_paced(window, 3'000'000, 1'000'000);  // 3 ms and 1 ms: far beyond a visit on any machine
  const softnic::HostLanes lanes;
  for (const Kind kind : {Kind::inline_write, Kind::write}) {
    Op op;
    op.kind = kind;
    op.length = 8;
    op.signaled = true;
    op.dest_offset = kind == Kind::write ? 64 : 0;
    op.source_offset = 8;
    op.payload.assign(8, 0x3c);
    build(*s, op);
    s->ring_doorbell(s->producer);
    const uint64_t consumer = s->qp().sq_consumer;
    const uint64_t produced = s->qp().send_cq.produced;
    const softnic::Served served = softnic::serve_qp(lanes, window, s->qp(), s->tables, &window.cache[0], 64);
    ASSERT_EQ(served.executed, 1u);
    EXPECT_EQ(s->qp().sq_consumer, consumer + 1) << "a held WQE is retired at its hold";
    const uint8_t* written = s->destination_bytes() + op.dest_offset;
    const uint8_t* expected = kind == Kind::write ? s->source_bytes() + op.source_offset : op.payload.data();
    const mlx5::mlx5_cqe64& cqe = s->send_cqes[produced % s->send_cqes.size()];
    const uint8_t before = cqe.op_own;
    EXPECT_NE(0, std::memcmp(written, expected, 8)) << "the payload moved before its date";
    softnic::release_due_in_flight(lanes, window);  // the loop's step, ~3 ms early
    EXPECT_EQ(window.in_flight.stage, softnic::IN_FLIGHT_PAYLOAD);
    EXPECT_NE(0, std::memcmp(written, expected, 8)) << "the loop's step moved the payload early";
    EXPECT_EQ(cqe.op_own, before) << "a CQE before its date";
    softnic::settle_in_flight(lanes, window);
    EXPECT_EQ(window.in_flight.stage, softnic::IN_FLIGHT_NONE);
    EXPECT_EQ(0, std::memcmp(written, expected, 8));
    EXPECT_NE(cqe.op_own, before);
    EXPECT_EQ(cqe.op_own >> 4, mlx5::MLX5_CQE_REQ);
    EXPECT_EQ(cqe.wqe_counter.value(), static_cast<uint16_t>(consumer));
    const uint64_t stamp = cqe.timestamp.value();
    EXPECT_GE(stamp, s->qp().doorbell_rung_ns + 4'000'000) << "the CQE before the ring date plus the latencies";
  }
}

TEST(EngineWindow, SingleWqeDoorbellsTakeTheLoneWindowInOrder) {
  auto s = std::make_unique<Synthetic>(64, 128, 0);
  softnic::Window window{};
  const softnic::HostLanes lanes;
  for (uint32_t n = 0; n < 100; ++n) {  // laps the 64-WQEBB ring and the 128-entry CQ
    Op op;
    op.kind = n % 3 == 0 ? Kind::write : Kind::inline_write;
    op.length = 8;
    op.signaled = n % 2 == 0;
    op.dest_offset = 8 * (n % 16);
    op.source_offset = 8 * n;
    op.payload.assign(8, static_cast<uint8_t>(n));
    build(*s, op);
    s->ring_doorbell(s->producer);
    // Every other WQE through serve_window, which says it was a lone window; the rest through
    // serve_qp, whose visit ends after it.
    const softnic::Served served =
        n % 2 == 0 ? softnic::serve_window<Scope::system, Scope::system>(lanes, window, s->qp(), s->tables,
                                                                         &window.cache[0])
                   : softnic::serve_qp(lanes, window, s->qp(), s->tables, &window.cache[0], 64);
    ASSERT_EQ(served.executed, 1u) << "WQE " << n;
    if (n % 2 == 0) {
      EXPECT_EQ(served.lone, 1u) << "WQE " << n;
    }
    EXPECT_EQ(served.pending, 0u);
    EXPECT_EQ(s->qp().sq_consumer, n + 1);
    const uint8_t* written = s->destination_bytes() + op.dest_offset;
    const uint8_t* expected = op.kind == Kind::write ? s->source_bytes() + op.source_offset : op.payload.data();
    EXPECT_EQ(0, std::memcmp(written, expected, 8)) << "WQE " << n;
    // A second visit finds nothing.
    EXPECT_EQ(softnic::serve_qp(lanes, window, s->qp(), s->tables, &window.cache[0], 64).executed, 0u);
  }
  const softnic::QpContext& q = s->qp();
  EXPECT_EQ(q.counters.wqes_executed, 100u);
  EXPECT_EQ(q.counters.cqes_written, 50u);
  EXPECT_EQ(q.counters.tx_bytes, 800u);
  EXPECT_EQ(q.counters.doorbells, 100u);
  ASSERT_EQ(q.send_cq.produced, 50u);
  for (uint64_t c = 0; c < 50; ++c) {  // CQE c is WQE 2c's: REQ, 8 bytes, its counter, the QPN
    const mlx5::mlx5_cqe64& cqe = q.send_cq.cqes[c & (q.send_cq.cqe_count - 1)];
    EXPECT_EQ(mlx5::cqe_opcode(cqe.op_own), mlx5::MLX5_CQE_REQ) << "CQE " << c;
    EXPECT_EQ(cqe.byte_cnt.value(), 8u) << "CQE " << c;
    EXPECT_EQ(cqe.wqe_counter.value(), static_cast<uint16_t>(2 * c)) << "CQE " << c;
    EXPECT_EQ(cqe.sop_drop_qpn.value() & 0xffffff, q.qpn) << "CQE " << c;
  }
}

// The smallest case of the above: a large pointer WRITE (copied warp-wide after the lane copies)
// followed by a small inline WRITE to the same bytes, one doorbell. One at a time, the inline bytes
// land last.
TEST(EngineWindow, LaterSmallWriteOverwritesEarlierLargeWriteInOneWindow) {
  Op large;
  large.kind = Kind::write;
  large.length = 256;  // WARP_COPY_BYTES
  Op small;
  small.kind = Kind::inline_write;
  small.length = 8;
  small.payload.assign(8, 0x11);
  small.signaled = true;
  auto reference = std::make_unique<Synthetic>(64, 64, 0);
  auto windowed = std::make_unique<Synthetic>(64, 64, 0);
  for (Synthetic* s : {reference.get(), windowed.get()}) {
    build(*s, large);
    build(*s, small);
    s->ring_doorbell(s->producer);
  }
  softnic::Window window{};
  EXPECT_EQ(softnic::service_qp(reference->qp(), reference->tables, 64), 2u);
  EXPECT_EQ(softnic::serve_qp(softnic::HostLanes{}, window, windowed->qp(), windowed->tables, &window.cache[0]).executed,
            2u);
  EXPECT_EQ(0, std::memcmp(reference->destination_bytes(), small.payload.data(), 8));
  EXPECT_EQ(0, std::memcmp(windowed->destination_bytes(), small.payload.data(), 8))
      << "the window copied the 256 B WRITE after the inline WRITE that follows it";
  EXPECT_EQ(0, std::memcmp(reference->destination_bytes(), windowed->destination_bytes(), 256));
}

// Which copy a WRITE gets: small and inline payloads by their lane; a medium pointer payload (16 B
// aligned ends, at most 2 KiB) by its lane only when the window holds more medium ones than its
// length / 64 (the lanes' copies then finish in fewer memory round trips than one warp-wide copy
// after another); the rest warp-wide.
TEST(EngineWindow, MediumPayloadsGoToTheirLanesOnlyInNumbers) {
  alignas(16) static uint8_t source[4096], destination[4096];
  auto write = [](uint64_t length, uint32_t misalign) {
    softnic::WindowWqe w{};
    w.opcode = mlx5::MLX5_OPCODE_RDMA_WRITE;
    w.plan.destination = destination + misalign;
    w.plan.source = source;
    w.plan.length = length;
    return w;
  };
  EXPECT_TRUE(softnic::copied_by_lane(write(64, 0), 0)) << "small";
  EXPECT_FALSE(softnic::medium_payload(write(64, 0))) << "small is not medium";
  EXPECT_TRUE(softnic::medium_payload(write(512, 0)));
  EXPECT_TRUE(softnic::copied_by_lane(write(512, 0), 32)) << "32 of 512 B: 8 round trips by lane, 32 warp-wide";
  EXPECT_TRUE(softnic::copied_by_lane(write(512, 0), 9));
  EXPECT_FALSE(softnic::copied_by_lane(write(512, 0), 8)) << "8 of 512 B: as many round trips either way";
  EXPECT_FALSE(softnic::copied_by_lane(write(2048, 0), 32)) << "2 KiB: warp-wide is as fast";
  EXPECT_FALSE(softnic::medium_payload(write(4096, 0))) << "large";
  EXPECT_FALSE(softnic::medium_payload(write(512, 8))) << "an 8 B aligned destination";
  EXPECT_TRUE(softnic::copied_by_lane(write(1000, 0), 32)) << "a tail after the 16 B words is the lane's too";
}

// A producer writing one word again and again (a flag, a counter): twelve 8 B inline WRITEs to
// the same bytes under one doorbell are one window, not twelve, and the last one's bytes remain.
TEST(EngineWindow, WritesToTheSameBytesShareOneWindowInOrder) {
  auto windowed = std::make_unique<Synthetic>(64, 64, 0);
  constexpr uint32_t kWrites = 12;
  for (uint32_t k = 0; k < kWrites; ++k) {
    Op write;
    write.kind = Kind::inline_write;
    write.length = 8;
    write.payload.assign(8, static_cast<uint8_t>(0x10 + k));
    write.signaled = k + 1 == kWrites;
    build(*windowed, write);
  }
  windowed->ring_doorbell(windowed->producer);
  softnic::Window window{};
  const softnic::Served one = softnic::serve_window<dissect::Scope::system, dissect::Scope::system>(
      softnic::HostLanes{}, window, windowed->qp(), windowed->tables, &window.cache[0]);
  EXPECT_EQ(one.executed, kWrites) << "one window per overwriting WQE";
  EXPECT_EQ(one.syndrome, 0);
  const std::vector<uint8_t> last(8, 0x10 + kWrites - 1);
  EXPECT_EQ(0, std::memcmp(windowed->destination_bytes(), last.data(), 8)) << "a later WRITE landed first";
  EXPECT_EQ(windowed->qp().counters.wqes_executed, kWrites);
}

// A doorbell that announces only the first WQEBB of a 3-WQEBB WQE: one at a time, that WQE
// executes and the engine then waits for the next doorbell (sq_consumer > sq_target). The next
// WQE, built but never announced, must not execute (serve_window once read the whole ring as
// announced here, `sq_target - sq_consumer` wrapping).
TEST(EngineWindow, DoorbellInsideAWqeAnnouncesNothingBeyondIt) {
  Op wide;
  wide.kind = Kind::inline_write;
  wide.length = 100;  // 3 WQEBBs
  wide.payload.assign(100, 0x22);
  wide.signaled = true;
  Op next;
  next.kind = Kind::write;
  next.length = 64;
  next.dest_offset = 4096;
  next.signaled = true;
  auto reference = std::make_unique<Synthetic>(64, 64, 0);
  auto windowed = std::make_unique<Synthetic>(64, 64, 0);
  for (Synthetic* s : {reference.get(), windowed.get()}) {
    build(*s, wide);
    build(*s, next);
    s->ring_doorbell(1);  // inside the first WQE
  }
  softnic::Window window{};
  const uint32_t a = softnic::service_qp(reference->qp(), reference->tables, 64);
  const uint32_t b =
      softnic::serve_qp(softnic::HostLanes{}, window, windowed->qp(), windowed->tables, &window.cache[0]).executed;
  // A WQE not announced in full is unusable (execute.h): one WQEBB, LOCAL_QP_OP_ERR, the QP in
  // error; the unannounced WQE after it never runs.
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(reference->qp().sq_consumer, 1u);
  EXPECT_EQ(reference->qp().state, softnic::QP_STATE_ERROR);
  EXPECT_EQ(b, a);
  EXPECT_EQ(windowed->qp().sq_consumer, reference->qp().sq_consumer);
  EXPECT_EQ(windowed->qp().state, reference->qp().state);
  EXPECT_EQ(windowed->qp().send_cq.produced, reference->qp().send_cq.produced);
  EXPECT_EQ(windowed->qp().counters.error_cqes, 1u);
  EXPECT_EQ(windowed->qp().counters.wqes_executed, 1u);
}

// has_news, what the GPU engine's sweep visits a QP on (gpu_kernel.cu): a doorbell value the engine
// has not acted on, then WQEs left for a later visit by the budget, and nothing once a visit took
// every announced WQE, however often the same value is read again. A sweep that passed over a QP
// with work would leave its WQEs in the ring for good.
TEST(EngineWindow, HasNewsUntilAVisitTakesEveryAnnouncedWqe) {
  auto s = std::make_unique<Synthetic>(64, 64, 0);
  const auto news = [&] { return softnic::has_news(s->qp(), *s->qp().doorbell); };
  EXPECT_FALSE(news()) << "a QP never rung";
  Op write;
  write.kind = Kind::write;
  write.length = 8;
  for (uint32_t i = 0; i < 40; ++i) {  // more than a window (32 on the host)
    write.dest_offset = 64 * i;
    build(*s, write);
  }
  s->ring_doorbell(40);
  EXPECT_TRUE(news()) << "a new doorbell value";
  softnic::Window window{};
  const auto visit = [&](uint32_t budget) {
    return softnic::serve_qp(softnic::HostLanes{}, window, s->qp(), s->tables, &window.cache[0], budget);
  };
  const softnic::Served first = visit(32);
  EXPECT_EQ(first.executed, 32u);
  EXPECT_EQ(first.pending, 1u);
  EXPECT_TRUE(news()) << "the budget left " << s->qp().sq_target - s->qp().sq_consumer << " WQEBBs";
  EXPECT_EQ(visit(32).executed, 8u);
  EXPECT_FALSE(news()) << "every announced WQE taken";
  s->ring_doorbell(40);
  EXPECT_FALSE(news()) << "the same value again";
}

// --- an error in the middle of a window ------------------------------------------------------------

TEST(EngineWindow, ErrorInTheMiddleOfAWindowStopsItAndTheRestIsFlushed) {
  auto s = std::make_unique<Synthetic>(64, 64, 0);
  std::vector<Op> ops(10);
  for (uint32_t i = 0; i < 10; ++i) {
    Op& op = ops[i];
    op.signaled = i % 2 == 0 && i != 6;  // 0, 2, 4, 8: the failure and the flushes complete anyway
    op.dest_offset = 8192 * i;
    op.source_offset = 4096 * i;
    if (i == 1 || i == 7) {
      op.kind = Kind::inline_write;
      op.length = i == 1 ? 100 : 8;
      op.payload.resize(op.length);
      fill_pattern(op.payload.data(), op.length, 100 + i);
    } else {
      op.kind = Kind::write;
      op.length = i == 3 || i == 8 ? 3000 : 64;  // a warp-wide copy each side of the failure
    }
  }
  ops[5].fault = Fault::bad_rkey;
  for (const Op& op : ops) build(*s, op);
  s->ring_doorbell(s->producer);  // one doorbell announces all ten
  softnic::QpContext& qp = s->qp();
  std::vector<uint64_t> starts;
  for (uint64_t at = 0, i = 0; i < ops.size(); at += op_wqebbs(ops[i]), ++i) starts.push_back(at);

  softnic::Window window{};
  auto visit = [&] {
    return softnic::serve_window<Scope::system, Scope::system>(softnic::HostLanes{}, window, qp,
                                                               s->tables, &window.cache[0]);
  };
  const softnic::Served first = visit();
  EXPECT_EQ(window.count, 10u) << "the ten WQEs formed one window";
  EXPECT_EQ(first.executed, 6u);
  EXPECT_EQ(first.syndrome, mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  EXPECT_EQ(qp.state, softnic::QP_STATE_ERROR);
  EXPECT_EQ(qp.sq_consumer, starts[6]);
  // WQEs 0..4 moved their bytes, 5..9 nothing.
  for (uint32_t i = 0; i < 10; ++i) {
    const Op& op = ops[i];
    const uint8_t* landed = s->destination_bytes() + op.dest_offset;
    const uint8_t* expected =
        op.kind == Kind::inline_write ? op.payload.data() : s->source_bytes() + op.source_offset;
    if (i < 5) {
      EXPECT_EQ(0, std::memcmp(landed, expected, op.length)) << "WQE " << i;
    } else {
      for (uint32_t k = 0; k < op.length; ++k) ASSERT_EQ(landed[k], 0xa5) << "WQE " << i << " byte " << k;
    }
  }
  // CQEs: 0, 2, 4 (signalled) and 5 (the error).
  ASSERT_EQ(qp.send_cq.produced, 4u);
  auto cqe_at = [&](uint64_t n) { return qp.send_cq.cqes[n & (qp.send_cq.cqe_count - 1)]; };
  const uint32_t good[] = {0, 2, 4};
  for (uint64_t n = 0; n < 3; ++n) {
    const auto cqe = cqe_at(n);
    EXPECT_EQ(mlx5::cqe_opcode(cqe.op_own), mlx5::MLX5_CQE_REQ) << n;
    EXPECT_EQ(cqe.wqe_counter.value(), starts[good[n]]) << n;
    EXPECT_EQ(cqe.byte_cnt.value(), ops[good[n]].length) << n;
    EXPECT_EQ(mlx5::cqe_owner(cqe.op_own), mlx5::cqe_owner_for(n, qp.send_cq.cqe_count));
  }
  {
    const auto cqe = cqe_at(3);
    EXPECT_EQ(mlx5::cqe_opcode(cqe.op_own), mlx5::MLX5_CQE_REQ_ERR);
    EXPECT_EQ(cqe.wqe_counter.value(), starts[5]);
    EXPECT_EQ(reinterpret_cast<const mlx5::mlx5_err_cqe*>(&cqe)->syndrome,
              mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  }
  EXPECT_EQ(qp.counters.wqes_executed, 6u);
  EXPECT_EQ(qp.counters.tx_packets, 5u);
  EXPECT_EQ(qp.counters.error_cqes, 1u);
  EXPECT_EQ(qp.counters.cqes_written, 4u);
  uint64_t moved = 0;
  for (uint32_t i = 0; i < 5; ++i) moved += ops[i].length;
  EXPECT_EQ(qp.counters.tx_bytes, moved);
  EXPECT_EQ(s->responder().counters.rx_bytes, moved);
  EXPECT_EQ(s->responder().counters.rx_packets, 5u);

  // Later visits flush 6..9, one each, in order.
  for (uint32_t i = 6; i < 10; ++i) {
    const softnic::Served later = visit();
    EXPECT_EQ(later.executed, 1u) << "WQE " << i;
    EXPECT_EQ(later.syndrome, mlx5::MLX5_CQE_SYNDROME_WR_FLUSH_ERR) << "WQE " << i;
    const auto cqe = cqe_at(qp.send_cq.produced - 1);
    EXPECT_EQ(mlx5::cqe_opcode(cqe.op_own), mlx5::MLX5_CQE_REQ_ERR) << "WQE " << i;
    EXPECT_EQ(cqe.wqe_counter.value(), starts[i]) << "WQE " << i;
    EXPECT_EQ(reinterpret_cast<const mlx5::mlx5_err_cqe*>(&cqe)->syndrome,
              mlx5::MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
  }
  EXPECT_EQ(qp.send_cq.produced, 8u);
  EXPECT_EQ(qp.sq_consumer, s->producer);
  EXPECT_EQ(visit().executed, 0u);
  for (uint32_t i = 5; i < 10; ++i) {
    const uint8_t* landed = s->destination_bytes() + ops[i].dest_offset;
    for (uint32_t k = 0; k < ops[i].length; ++k) ASSERT_EQ(landed[k], 0xa5) << "WQE " << i;
  }
  EXPECT_EQ(qp.counters.wqes_executed, 10u);
  EXPECT_EQ(qp.counters.tx_packets, 5u);
  EXPECT_EQ(qp.counters.error_cqes, 5u);
  EXPECT_EQ(qp.counters.tx_bytes, moved);
}

// --- the host engine: 4 threads, 16 QPs, exactly once and in order ------------------------------

using Policy = gda::ordering::system_release_store;

struct Submitter {
  nic::QpHandle qp;
  uint32_t index = 0;               // which QP (its slots in the destination)
  uint32_t posted = 0;              // WQEs posted (each one WQEBB: WQE j starts at WQEBB j)
  std::deque<uint64_t> signaled;    // WQEBB indices of the signalled WQEs not yet completed
  uint64_t cqes = 0;
  std::string error;                // first problem seen
};

constexpr uint32_t kSlotsPerQp = 8;
uint64_t sequence_value(uint32_t qp, uint32_t j) { return (uint64_t{qp + 1} << 40) | (j + 1); }

// Consumes the QP's CQEs itself (so that the reservation never needs to), checking each against
// the next signalled WQE.
void poll(Submitter& s) {
  nic::SendQueueState* state = s.qp.state;
  const nic::CqHandle& cq = s.qp.send_cq;
  for (;;) {
    const uint64_t ci = state->cq_ci;
    mlx5::mlx5_cqe64* cqe = &cq.cqes[ci & (cq.cqe_count - 1)];
    const uint32_t tail = __atomic_load_n(reinterpret_cast<uint32_t*>(cqe) + 15, __ATOMIC_ACQUIRE);
    const uint8_t op_own = static_cast<uint8_t>(tail >> 24);
    if (!mlx5::cqe_is_sw_owned(op_own, ci, cq.cqe_count)) return;
    const uint16_t counter = mlx5::byte_swap(static_cast<uint16_t>(tail & 0xffff));
    if (s.error.empty()) {
      if (mlx5::cqe_opcode(op_own) != mlx5::MLX5_CQE_REQ) {
        s.error = "QP " + std::to_string(s.index) + ": CQE " + std::to_string(ci) + " has opcode " +
                  std::to_string(mlx5::cqe_opcode(op_own));
      } else if (s.signaled.empty()) {
        s.error = "QP " + std::to_string(s.index) + ": CQE " + std::to_string(ci) +
                  " (wqe_counter " + std::to_string(counter) + ") for no signalled WQE";
      } else if (counter != static_cast<uint16_t>(s.signaled.front())) {
        s.error = "QP " + std::to_string(s.index) + ": CQE " + std::to_string(ci) +
                  " has wqe_counter " + std::to_string(counter) + ", expected " +
                  std::to_string(static_cast<uint16_t>(s.signaled.front()));
      }
    }
    if (!s.signaled.empty()) {
      state->cons_idx = s.signaled.front() + 1;
      s.signaled.pop_front();
    }
    state->cq_ci = ci + 1;
    ++s.cqes;
  }
}

TEST(EngineWindow, FourEngineThreadsExecuteEveryWqeOnceAndInOrder) {
  constexpr uint32_t kQps = 16;
  constexpr uint32_t kProducers = 4;
  constexpr uint32_t kPerQp = 1500;  // 24,000 WQEs in all
  constexpr uint32_t kSq = 64;
  softnic::SoftNicOptions options;
  options.engine_threads = 4;
  softnic::SoftNic nic_(options);
  ASSERT_EQ(nic_.engine_threads(), 4u);
  auto pd = nic_.create_pd();
  nic::QpAttributes attributes;
  attributes.sq_wqebbs = kSq;
  std::vector<std::unique_ptr<nic::QueuePair>> qps;
  for (uint32_t i = 0; i < kQps; ++i) qps.push_back(pd->create_qp(attributes));
  for (uint32_t i = 0; i < kQps; i += 2) {  // pairs: 0 <-> 1, 2 <-> 3, ...
    qps[i]->connect(qps[i + 1]->endpoint());
    qps[i + 1]->connect(qps[i]->endpoint());
  }
  std::vector<uint64_t> slots(kQps * kSlotsPerQp, 0);
  const nic::MemoryRegion mr =
      pd->register_memory(slots.data(), slots.size() * sizeof(uint64_t), nic::ACCESS_ALL);
  std::vector<Submitter> submitters(kQps);
  for (uint32_t i = 0; i < kQps; ++i) {
    submitters[i].qp = qps[i]->handle();
    submitters[i].index = i;
    ASSERT_EQ(submitters[i].qp.sq.wqebb_count, kSq);
  }

  std::vector<std::thread> producers;
  for (uint32_t t = 0; t < kProducers; ++t) {
    producers.emplace_back([&, t] {
      std::mt19937 rng(1000 + t);
      std::vector<Submitter*> mine;
      for (uint32_t i = t; i < kQps; i += kProducers) mine.push_back(&submitters[i]);
      bool busy = true;
      while (busy) {
        busy = false;
        for (Submitter* s : mine) {
          poll(*s);
          if (s->posted == kPerQp) {
            busy |= !s->signaled.empty();
            continue;
          }
          busy = true;
          // Room for one WQEBB, from the CQEs this thread consumed itself.
          if (s->posted + 1 - s->qp.state->cons_idx > kSq) {
            std::this_thread::yield();
            continue;
          }
          // Up to a few WQEs per turn; signalled one in four at random, every 32nd and the last.
          const uint32_t burst = 1 + rng() % 6;
          for (uint32_t b = 0; b < burst && s->posted < kPerQp; ++b) {
            if (s->posted + 1 - s->qp.state->cons_idx > kSq) break;
            const uint32_t j = s->posted;
            const bool signaled = rng() % 4 == 0 || j % 32 == 31 || j + 1 == kPerQp;
            const uint64_t value = sequence_value(s->index, j);
            const uint64_t address = reinterpret_cast<uintptr_t>(
                &slots[s->index * kSlotsPerQp + j % kSlotsPerQp]);
            uint64_t end = 0;
            const gda::Status st = gda::put_value<Policy>(
                s->qp, value, 8, address, mr.rkey,
                signaled ? gda::Completion::signaled : gda::Completion::unsignaled, &end);
            if (st != gda::Status::ok || end != j + 1) {
              if (s->error.empty()) s->error = "QP " + std::to_string(s->index) + ": put failed";
              s->posted = kPerQp;
              s->signaled.clear();
              break;
            }
            if (signaled) s->signaled.push_back(j);
            ++s->posted;
          }
        }
      }
    });
  }
  for (auto& p : producers) p.join();
  nic_.stop();

  uint64_t cqes = 0;
  for (const Submitter& s : submitters) {
    EXPECT_TRUE(s.error.empty()) << s.error;
    EXPECT_EQ(s.posted, kPerQp);
    EXPECT_TRUE(s.signaled.empty());
    cqes += s.cqes;
    const softnic::ModelCounters c = nic_.counters(s.qp.qpn);
    EXPECT_EQ(c.wqes_executed, kPerQp) << "QP " << s.index;
    EXPECT_EQ(c.cqes_written, s.cqes) << "QP " << s.index;
    EXPECT_EQ(c.error_cqes, 0u) << "QP " << s.index;
    EXPECT_EQ(c.tx_bytes, uint64_t{kPerQp} * 8) << "QP " << s.index;
    EXPECT_EQ(c.bad_doorbells, 0u) << "QP " << s.index;
    // No CQE beyond those consumed.
    const uint64_t ci = s.qp.state->cq_ci;
    const auto& next = s.qp.send_cq.cqes[ci & (s.qp.send_cq.cqe_count - 1)];
    EXPECT_FALSE(mlx5::cqe_is_sw_owned(next.op_own, ci, s.qp.send_cq.cqe_count)) << "QP " << s.index;
    // Each slot holds the last sequence number written to it.
    for (uint32_t k = 0; k < kSlotsPerQp; ++k) {
      const uint32_t last = (kPerQp - 1) - ((kPerQp - 1 - k) % kSlotsPerQp);
      ASSERT_EQ(last % kSlotsPerQp, k);
      EXPECT_EQ(slots[s.index * kSlotsPerQp + k], sequence_value(s.index, last))
          << "QP " << s.index << " slot " << k;
    }
  }
  EXPECT_GT(cqes, uint64_t{kQps} * kPerQp / 8);
}

// A QP with one signalled 8 B inline WRITE of `value` bytes built (not yet rung).
std::unique_ptr<Synthetic> one_signaled_inline_write(uint8_t value) {
  auto s = std::make_unique<Synthetic>(64, 64, 0);
  Op op;
  op.kind = Kind::inline_write;
  op.length = 8;
  op.payload.assign(8, value);
  op.signaled = true;
  build(*s, op);
  return s;
}

}  // namespace

// --- the timing profile ------------------------------------------------------------------------

// A profile only adds delay: the payload lands no earlier than doorbell_to_data after the engine saw
// the doorbell, the CQE no earlier than data_to_cqe after that (times in milliseconds, so the bound
// holds on any machine; the test asserts the order of events, not a speed).
TEST(EngineWindow, TimingProfileDelaysPayloadThenCqe) {
  auto s = one_signaled_inline_write(0x5a);
  softnic::Window window{};
  window.profile.enabled = 1;
  window.profile.doorbell_to_data_ns = 2'000'000;
  window.profile.data_to_cqe_ns = 1'000'000;
  const uint64_t t0 = dissect::now_ns();
  s->ring_doorbell(1);
  const softnic::Served served =
      softnic::serve_qp(softnic::HostLanes{}, window, s->qp(), s->tables, &window.cache[0]);
  const uint64_t t1 = dissect::now_ns();
  EXPECT_EQ(served.executed, 1u);
  EXPECT_EQ(s->destination_bytes()[0], 0x5a);
  EXPECT_GE(t1 - t0, 3'000'000u);
  const uint64_t cqe_time = s->send_cqes[0].timestamp.value();
  EXPECT_GE(cqe_time, t0 + 3'000'000u);
  EXPECT_GE(s->qp().doorbell_seen_ns, t0);
}

// The ring date (window.h, ring_date): the start of the pass whose read saw the doorbell, the
// late end of the interval the ring lies in, so that a profile never releases a CQE early; none
// without a clock.
TEST(EngineWindow, RingDateIsTheStartOfThePassThatSawIt) {
  EXPECT_EQ(softnic::ring_date(softnic::DoorbellClock{}), 0u) << "no clock: none";
  std::mt19937_64 random(11);
  for (int i = 0; i < 1000; ++i) {
    softnic::DoorbellClock c;
    c.pass_ns = 1 + random() % 1'000'000'000;
    ASSERT_EQ(softnic::ring_date(c), c.pass_ns);
  }
}

// Under a profile a window paces from the ring date the engine loop's clock gives (not from the
// sighting), its CQE no earlier than that date plus the profile's latencies, and the CQE's softnic
// extension (cqe_times.h) says when the doorbell was dated and seen and which path wrote it.
TEST(EngineWindow, ProfiledCqeIsNeverBeforeTheRingDatePlusTheLatencies) {
  {
    auto s = one_signaled_inline_write(0x5a);
    softnic::Window window{};
    window.profile.enabled = 1;
    window.profile.doorbell_to_data_ns = 2'000'000;
    window.profile.data_to_cqe_ns = 1'000'000;
    const uint64_t t0 = dissect::now_ns();
    // The engine loop's clock as a host engine sets it: this pass began 1.5 ms back.
    window.clock.pass_ns = t0 - 1'500'000;
    s->ring_doorbell(1);
    const softnic::Served served =
        softnic::serve_qp(softnic::HostLanes{}, window, s->qp(), s->tables, &window.cache[0]);
    ASSERT_EQ(served.executed, 1u);
    EXPECT_EQ(s->destination_bytes()[0], 0x5a);
    const uint64_t rung = s->qp().doorbell_rung_ns;
    EXPECT_EQ(rung, t0 - 1'500'000);
    EXPECT_GE(s->qp().doorbell_seen_ns, t0) << "under a profile: the clock after the read";
    const mlx5::mlx5_cqe64& cqe = s->send_cqes[0];
    const uint64_t stamp = cqe.timestamp.value();
    EXPECT_GE(stamp, rung + 3'000'000u) << "CQE before the ring date plus the latencies";
    const softnic::CqeTimes times = softnic::cqe_times(cqe);
    EXPECT_EQ(times.rung_to_stamp_ns, stamp - rung);
    EXPECT_EQ(times.seen_to_stamp_ns, stamp - s->qp().doorbell_seen_ns);
    EXPECT_EQ(times.path, softnic::CQE_PATH_LONE) << "a profile's one-WQE window is the paced lone one";
  }
}

// Without a profile the engine reads no clock for a doorbell: the CQE extension carries the pass's
// start as both the sighting and the ring date, and names the lone window.
TEST(EngineWindow, FastCqeNamesTheLoneWindowAndThePasses) {
  auto s = one_signaled_inline_write(0x33);
  softnic::Window window{};
  const uint64_t t0 = dissect::now_ns();
  window.clock.pass_ns = t0 - 1'000;
  s->ring_doorbell(1);
  const softnic::Served served =
      softnic::serve_qp(softnic::HostLanes{}, window, s->qp(), s->tables, &window.cache[0]);
  ASSERT_EQ(served.executed, 1u);
  const mlx5::mlx5_cqe64& cqe = s->send_cqes[0];
  const uint64_t stamp = cqe.timestamp.value();
  const softnic::CqeTimes times = softnic::cqe_times(cqe);
  EXPECT_EQ(times.path, softnic::CQE_PATH_LONE);
  EXPECT_EQ(times.seen_to_stamp_ns, stamp - (t0 - 1'000));
  EXPECT_EQ(times.rung_to_stamp_ns, stamp - (t0 - 1'000));
  // No pass clock (a Window nobody sets): nothing kept, the fields say so.
  auto u = one_signaled_inline_write(0x33);
  softnic::Window bare{};
  u->ring_doorbell(1);
  ASSERT_EQ(softnic::serve_qp(softnic::HostLanes{}, bare, u->qp(), u->tables, &bare.cache[0]).executed, 1u);
  EXPECT_EQ(softnic::cqe_times(u->send_cqes[0]).seen_to_stamp_ns, softnic::CQE_TIME_UNKNOWN);
  EXPECT_EQ(softnic::cqe_times(u->send_cqes[0]).rung_to_stamp_ns, softnic::CQE_TIME_UNKNOWN);
}

// The NIC's pipe is shared: a window waits for the slot the pipe gives it.
// The message stage and the link are one pipeline: a window holds the pipe for the slower of the
// two, so cx7-ib carries its 260 Mmsg/s at 8 B; the link's packets carry 42 B of headers each, so
// 512 B writes reach 90 % of its 24.8 GB/s and 256 B writes do not (Figure 8's first size).
TEST(EngineWindow, PipeCostIsTheSlowerStageNotTheSum) {
  const softnic::TimingProfile p = softnic::timing_profile("cx7-ib");
  const double unit_ns = 1.0 / softnic::PIPE_UNITS_PER_NS;
  EXPECT_NEAR(softnic::pipe_cost_units(softnic::pipe_rates(p), 32, 32 * 8) * unit_ns, 32 * 1e3 / 260, 1e-6) << "8 B: the message stage";
  auto payload_gbps = [&](uint64_t size) { return size / (softnic::pipe_cost_units(softnic::pipe_rates(p), 32, 32 * size) * unit_ns / 32); };
  EXPECT_GE(payload_gbps(512), 0.9 * 24.8);
  EXPECT_LT(payload_gbps(256), 0.9 * 24.8);
  EXPECT_NEAR(payload_gbps(32768), 24.8, 0.01 * 24.8) << "large writes: the link's payload rate";
  EXPECT_LE(payload_gbps(1u << 20), 24.8);
  softnic::TimingProfile fast = softnic::timing_profile("fast");
  EXPECT_EQ(softnic::pipe_cost_units(softnic::pipe_rates(fast), 32, 32 * 512), 0.0) << "fast has neither stage";
}

TEST(EngineWindow, TimingProfileWaitsForTheNicsPipe) {
  auto s = std::make_unique<Synthetic>(64, 64, 0);
  Op op;
  op.kind = Kind::inline_write;
  op.length = 8;
  op.payload.assign(8, 0x33);
  build(*s, op);
  softnic::Window window{};
  softnic::TimingProfile profile{};
  profile.enabled = 1;
  profile.message_rate_mps = 1000;  // 1 ns per message
  softnic::use_profile(window, profile);
  const uint64_t t0 = dissect::now_ns();
  uint64_t pipe = (t0 + 2'000'000) * softnic::PIPE_UNITS_PER_NS;  // claimed by others for 2 ms
  window.pipe = &pipe;
  s->ring_doorbell(1);
  softnic::serve_qp(softnic::HostLanes{}, window, s->qp(), s->tables, &window.cache[0]);
  EXPECT_GE(dissect::now_ns() - t0, 2'000'000u);
  // This window's message (1 ns) added after the claim.
  EXPECT_EQ(pipe, (t0 + 2'000'000) * softnic::PIPE_UNITS_PER_NS + softnic::PIPE_UNITS_PER_NS);
}

TEST(TimingProfile, NamesAndFiles) {
  EXPECT_EQ(softnic::timing_profile("fast").enabled, 0u);
  const softnic::TimingProfile cx7 = softnic::timing_profile("cx7-ib");
  EXPECT_EQ(cx7.doorbell_to_data_ns + cx7.data_to_cqe_ns, 3300u);  // the paper's 3.30 us
  EXPECT_DOUBLE_EQ(cx7.message_rate_mps, 260);
  const std::string path = ::testing::TempDir() + "/dissect_profile.txt";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("# a NIC\nname = mine\ndoorbell_to_data_ns = 1000\ngoodput_gbps = 50\nmtu_bytes = 2048\n", f);
    std::fclose(f);
  }
  const softnic::TimingProfile mine = softnic::timing_profile(path);
  EXPECT_STREQ(mine.name, "mine");
  EXPECT_EQ(mine.doorbell_to_data_ns, 1000u);
  EXPECT_DOUBLE_EQ(mine.goodput_gbps, 50);
  EXPECT_EQ(mine.mtu_bytes, 2048u);
  EXPECT_EQ(mine.packet_header_bytes, 0u) << "a key a file leaves out adds nothing";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("doorbell_to_data_ns = -3\n", f);
    std::fclose(f);
  }
  EXPECT_THROW(softnic::timing_profile(path), dissect::InvalidArgument);
  EXPECT_THROW(softnic::timing_profile("no-such-profile"), dissect::InvalidArgument);
}

// cqe_transit_ns (profile.h): the engine's own CQE hop taken out of data_to_cqe_ns, never below
// the payload's date; a file sets it, and cx7-ib (the engine's hop on the H200), not fast.
TEST(TimingProfile, CqeTransitComesOutOfDataToCqe) {
  softnic::TimingProfile p{};
  p.enabled = 1;
  p.data_to_cqe_ns = 575;
  EXPECT_EQ(softnic::cqe_release_ns(p, 1000), 1575u);
  p.cqe_transit_ns = 400;
  EXPECT_EQ(softnic::cqe_release_ns(p, 1000), 1175u);
  p.cqe_transit_ns = 800;
  EXPECT_EQ(softnic::cqe_release_ns(p, 1000), 1000u) << "never before the payload may move";
  EXPECT_EQ(softnic::timing_profile("cx7-ib").cqe_transit_ns, 770u);
  EXPECT_EQ(softnic::timing_profile("fast").cqe_transit_ns, 0u);
  const std::string path = ::testing::TempDir() + "/dissect_profile_transit.txt";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("data_to_cqe_ns = 575\ncqe_transit_ns = 770\n", f);
    std::fclose(f);
  }
  EXPECT_EQ(softnic::timing_profile(path).cqe_transit_ns, 770u);
  // A paced window with it: the CQE data_to_cqe_ns - cqe_transit_ns after the payload's date.
  auto s = one_signaled_inline_write(0x21);
  softnic::Window window{};
  window.profile.enabled = 1;
  window.profile.doorbell_to_data_ns = 1'000'000;
  window.profile.data_to_cqe_ns = 20'000'000;
  window.profile.cqe_transit_ns = 19'000'000;
  const uint64_t t0 = dissect::now_ns();
  window.clock.pass_ns = t0;
  s->ring_doorbell(1);
  ASSERT_EQ(softnic::serve_qp(softnic::HostLanes{}, window, s->qp(), s->tables, &window.cache[0]).executed, 1u);
  const uint64_t stamp = s->send_cqes[0].timestamp.value();
  EXPECT_GE(stamp, t0 + 2'000'000u);
  // Without the transit the CQE would wait until t0 + 21 ms: half of that is slack for the host.
  EXPECT_LT(stamp, t0 + 11'000'000u) << "the transit did not come out of data_to_cqe_ns";
}

// The connection-state model's fields (profile.h): cx7-ib carries them, fast and a file that
// leaves them out do not; a bad value is refused naming the profile, its line, the key and the value.
TEST(TimingProfile, ConnectionStateFields) {
  const softnic::TimingProfile cx7 = softnic::timing_profile("cx7-ib");
  EXPECT_TRUE(softnic::connection_model(cx7));
  EXPECT_EQ(cx7.qp_cache_entries, 12288u);
  EXPECT_EQ(cx7.send_context_miss_ns, 9u);
  EXPECT_EQ(cx7.receive_context_miss_ns, 198u);
  EXPECT_DOUBLE_EQ(cx7.receive_message_rate_mps, 440);
  EXPECT_EQ(cx7.scheduling_quantum_wqes, 32u);
  EXPECT_FALSE(softnic::connection_model(softnic::timing_profile("fast")));
  EXPECT_EQ(softnic::timing_profile("fast").scheduling_quantum_wqes, 0u);
  const std::string path = ::testing::TempDir() + "/dissect_profile_connections.txt";
  auto write = [&](const char* text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text, f);
    std::fclose(f);
  };
  write("name = few\nmessage_rate_mps = 100\n");
  EXPECT_FALSE(softnic::connection_model(softnic::timing_profile(path))) << "left out: no model";
  write("name = small-cache\nqp_cache_entries = 64\nsend_context_miss_ns = 5\n"
        "receive_context_miss_ns = 300\nreceive_message_rate_mps = 400.5\nscheduling_quantum_wqes = 64\n");
  const softnic::TimingProfile mine = softnic::timing_profile(path);
  EXPECT_TRUE(softnic::connection_model(mine));
  EXPECT_EQ(mine.qp_cache_entries, 64u);
  EXPECT_EQ(mine.send_context_miss_ns, 5u);
  EXPECT_EQ(mine.receive_context_miss_ns, 300u);
  EXPECT_DOUBLE_EQ(mine.receive_message_rate_mps, 400.5);
  EXPECT_EQ(mine.scheduling_quantum_wqes, 64u);
  auto refused = [&](const char* text, const std::string& names) {
    write(text);
    try {
      softnic::timing_profile(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const dissect::InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(names), std::string::npos) << what;
    }
  };
  refused("\nqp_cache_entries = 2.5\n", "line 2: qp_cache_entries = '2.5'");
  refused("qp_cache_entries = 99999999\n", "qp_cache_entries = '99999999'");  // above 4 Mi
  refused("qp_cache_entries = many\n", "qp_cache_entries = 'many'");
  refused("send_context_miss_ns = -1\n", "send_context_miss_ns = '-1'");
  refused("receive_context_miss_ns = 1e12\n", "receive_context_miss_ns = '1e12'");
  refused("receive_message_rate_mps = fast\n", "receive_message_rate_mps = 'fast'");
  refused("scheduling_quantum_wqes = 32.5\n", "scheduling_quantum_wqes = '32.5'");
}
