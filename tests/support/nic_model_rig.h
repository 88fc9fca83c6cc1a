// Test support: one synthetic softnic (NicTables, an MR table, a requester QP 0x100 connected to a
// responder QP 0x101 on the same NIC) laid out in one arena, every buffer between guard bands, for
// calling the engine's execute path (src/softnic/engine/execute.h service_qp) directly, with no engine thread.
//
// Layout (each buffer preceded and followed by a guard band of kGuardBytes):
//   send ring | send CQ | receive CQ | receive queue | responder dbrec | doorbell register |
//   region 0 | region 1 | region 2
// The engine may write only the CQs and the regions (through an MR that permits it); a change of a
// byte anywhere else is a guard change. Host memory by default; a GPU replay passes an allocator of
// mapped pinned memory (the device reaches it at the same addresses) and places the rig object
// itself there too, since the MR table, QP contexts and NicTables are members the engine reads.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/ring.h"
#include "dissect/mlx5/wqe.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/impl/context.h"

namespace dissect::testing {

// Keys of the rig's memory table, `index << 8 | tag` as the softnic makes them.
enum RigKey : uint32_t {
  KEY_REGION0_ALL = (0u << 8) | 1,       // region 0, ACCESS_ALL (the issue's "key 1")
  KEY_REGION1_LOCAL = (1u << 8) | 2,     // region 1, local write + remote read: no remote write
  KEY_REGION2_OTHER_PD = (2u << 8) | 3,  // region 2, ACCESS_ALL, another protection domain
  KEY_REGION2_INVALID = (3u << 8) | 4,   // region 2, deregistered (valid = 0)
  KEY_HUGE_LOCAL = (4u << 8) | 5,        // 1 TiB from region 0, local write only (length checks)
  KEY_REGION1_ALL = (5u << 8) | 6,       // region 1, ACCESS_ALL
};
inline constexpr uint32_t kRigKeyCount = 6;
// Key `i` of the above (a function, not an array: a namespace-scope array is not reachable from
// device code, and nic_model_fuzz.h's generator is host and device code).
DISSECT_HD inline uint32_t rig_key(uint32_t i) {
  const uint32_t keys[kRigKeyCount] = {KEY_REGION0_ALL,     KEY_REGION1_LOCAL, KEY_REGION2_OTHER_PD,
                                       KEY_REGION2_INVALID, KEY_HUGE_LOCAL,    KEY_REGION1_ALL};
  return keys[i];
}
inline constexpr uint64_t kHugeMrBytes = 1ull << 40;

struct NicModelRig {
  static constexpr uint32_t kPd = 1;
  static constexpr uint32_t kOtherPd = 2;
  static constexpr uint32_t kRingWqebbs = 64;
  static constexpr uint32_t kCqes = 256;
  static constexpr uint32_t kRqWqes = 8;
  static constexpr uint32_t kRegions = 3;
  static constexpr uint64_t kRegionBytes = 4096;
  static constexpr uint64_t kGuardBytes = 256;
  static constexpr uint8_t kGuardByte = 0xa5;
  static constexpr uint32_t kRequester = 0;
  static constexpr uint32_t kResponder = 1;

  struct Span {
    uint64_t offset;
    uint64_t bytes;
  };

  // `allocate`: where the arena's bytes come from (the rig aligns them to 64 B and never frees
  // them); null: a std::vector the rig owns.
  using Allocate = uint8_t* (*)(uint64_t bytes);
  // `region_flags`: added to every region's access (mr_flags).
  explicit NicModelRig(Allocate allocate = nullptr, uint32_t region_flags = 0)
      : mr_flags(region_flags) {
    uint64_t at = kGuardBytes;
    auto place = [&](uint64_t bytes) {
      const Span s{at, bytes};
      at += bytes + kGuardBytes;
      return s;
    };
    sq = place(uint64_t{kRingWqebbs} * mlx5::MLX5_SEND_WQE_BB);
    send_cq = place(uint64_t{kCqes} * mlx5::MLX5_CQE_SIZE);
    recv_cq = place(uint64_t{kCqes} * mlx5::MLX5_CQE_SIZE);
    rq = place(uint64_t{kRqWqes} * sizeof(mlx5::mlx5_wqe_data_seg));
    dbrec = place(64);
    doorbell = place(64);
    for (Span& r : region) r = place(kRegionBytes);
    uint8_t* raw = nullptr;
    if (allocate != nullptr) {
      raw = allocate(at + 64);
    } else {
      storage.resize(at + 64);
      raw = storage.data();
    }
    // 64-byte aligned, as the softnic's queue memory is.
    base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 63) & ~uintptr_t{63});
    arena_bytes = at;
    reset();
  }
  NicModelRig(const NicModelRig&) = delete;
  NicModelRig& operator=(const NicModelRig&) = delete;

  DISSECT_HD uint8_t* at(Span s, uint64_t offset = 0) const { return base + s.offset + offset; }
  DISSECT_HD uint64_t address(Span s, uint64_t offset = 0) const {
    return reinterpret_cast<uintptr_t>(at(s, offset));
  }
  DISSECT_HD uint64_t region_address(uint32_t r, uint64_t offset = 0) const { return address(region[r], offset); }
  DISSECT_HD softnic::QpContext& requester() { return qps[kRequester]; }
  DISSECT_HD softnic::QpContext& responder() { return qps[kResponder]; }
  DISSECT_HD const mlx5::send_ring& ring() const { return qps[kRequester].sq; }
  DISSECT_HD uint64_t* doorbell_register() const { return reinterpret_cast<uint64_t*>(at(doorbell)); }
  DISSECT_HD mlx5::mlx5_qp_dbrec* responder_dbrec() const {
    return reinterpret_cast<mlx5::mlx5_qp_dbrec*>(at(dbrec));
  }

  // Everything back to a connected pair in RTS whose send queue starts at `first_wqebb`
  // (free-running), guards and regions refilled, `posted_receives` receive WQEs posted.
  void reset(uint64_t first_wqebb = 0, uint32_t posted_receives = kRqWqes, uint32_t fill_seed = 1) {
    std::memset(base, kGuardByte, arena_bytes);
    std::memset(at(sq), 0, sq.bytes);
    for (Span cq : {send_cq, recv_cq}) {
      auto* cqes = reinterpret_cast<mlx5::mlx5_cqe64*>(at(cq));
      for (uint32_t i = 0; i < kCqes; ++i) {
        std::memset(&cqes[i], 0, sizeof cqes[i]);
        cqes[i].op_own = mlx5::MLX5_CQE_INITIAL_OP_OWN;
      }
    }
    uint32_t x = fill_seed * 2654435761u + 7;
    for (const Span& r : region) {
      for (uint64_t i = 0; i < r.bytes; ++i) {
        x = x * 1664525u + 1013904223u;
        *at(r, i) = static_cast<uint8_t>(x >> 24);
      }
    }
    auto* rq_segs = reinterpret_cast<mlx5::mlx5_wqe_data_seg*>(at(rq));
    for (uint32_t i = 0; i < kRqWqes; ++i) {
      mlx5::set_data_seg(&rq_segs[i], 64, KEY_REGION0_ALL, region_address(0, 64 * i));
    }
    std::memset(at(dbrec), 0, dbrec.bytes);
    responder_dbrec()->rcv_counter = mlx5::be32::from_host(posted_receives);
    *doorbell_register() = 0;

    set_mr(0, KEY_REGION0_ALL, region_address(0), kRegionBytes, nic::ACCESS_ALL, kPd, 1);
    set_mr(1, KEY_REGION1_LOCAL, region_address(1), kRegionBytes,
           nic::ACCESS_LOCAL_WRITE | nic::ACCESS_REMOTE_READ, kPd, 1);
    set_mr(2, KEY_REGION2_OTHER_PD, region_address(2), kRegionBytes, nic::ACCESS_ALL, kOtherPd, 1);
    set_mr(3, KEY_REGION2_INVALID, region_address(2), kRegionBytes, nic::ACCESS_ALL, kPd, 0);
    set_mr(4, KEY_HUGE_LOCAL, region_address(0), kHugeMrBytes, nic::ACCESS_LOCAL_WRITE, kPd, 1);
    set_mr(5, KEY_REGION1_ALL, region_address(1), kRegionBytes, nic::ACCESS_ALL, kPd, 1);

    for (uint32_t q = 0; q < 2; ++q) {
      softnic::QpContext& qp = qps[q];
      qp = softnic::QpContext{};
      qp.qpn = softnic::QPN_BASE + q;
      qp.state = softnic::QP_STATE_RTS;
      qp.pd = kPd;
      qp.remote_qp_index = 1 - q;
      qp.remote_nic = &nic;
      qp.sq = mlx5::send_ring{at(sq), kRingWqebbs};
      qp.doorbell = doorbell_register();
      qp.sq_consumer = first_wqebb;
      qp.sq_target = first_wqebb;
      qp.last_doorbell = 0;
    }
    softnic::QpContext& req = requester();
    req.dbrec = reinterpret_cast<mlx5::mlx5_qp_dbrec*>(at(dbrec, 32));  // never read by the engine
    req.send_cq = softnic::CqContext{reinterpret_cast<mlx5::mlx5_cqe64*>(at(send_cq)), kCqes, 0x10, 0};
    softnic::QpContext& resp = responder();
    resp.dbrec = responder_dbrec();
    resp.rq = reinterpret_cast<mlx5::mlx5_wqe_data_seg*>(at(rq));
    resp.rq_wqe_count = kRqWqes;
    resp.rq_consumer = 0;
    resp.recv_cq = softnic::CqContext{reinterpret_cast<mlx5::mlx5_cqe64*>(at(recv_cq)), kCqes, 0x11, 0};
    nic = softnic::NicTables{};
    nic.nic_id = 0;
    nic.mr_capacity = 8;
    nic.qp_capacity = 2;
    nic.qp_count = 2;
    nic.mrs = mrs;
    nic.qps = qps;
  }

  // Added to every region's access: softnic::MR_IN_HOST_MEMORY when the arena is host memory a
  // GPU engine executes on (the GPU replay).
  uint32_t mr_flags;

  void set_mr(uint32_t index, uint32_t key, uint64_t address, uint64_t length, uint32_t access,
              uint32_t pd, uint32_t valid) {
    mrs[index] = softnic::MrEntry{address, length, key, access | mr_flags, pd, valid};
  }

  // The doorbell a submitter rings after writing WQEBBs up to `end` (free-running).
  void ring_doorbell(uint64_t end, uint32_t qpn = softnic::QPN_BASE) {
    *doorbell_register() = mlx5::doorbell_value(end, qpn);
  }

  // True when `offset` of the arena is a byte the engine may write: a CQ or a region.
  bool writable(uint64_t offset) const {
    auto inside = [&](Span s) { return offset >= s.offset && offset < s.offset + s.bytes; };
    if (inside(send_cq) || inside(recv_cq)) return true;
    for (const Span& r : region) {
      if (inside(r)) return true;
    }
    return false;
  }

  const mlx5::mlx5_cqe64& send_cqe(uint64_t n) const {
    return reinterpret_cast<const mlx5::mlx5_cqe64*>(at(send_cq))[n % kCqes];
  }
  const mlx5::mlx5_cqe64& recv_cqe(uint64_t n) const {
    return reinterpret_cast<const mlx5::mlx5_cqe64*>(at(recv_cq))[n % kCqes];
  }
  uint8_t send_cqe_syndrome(uint64_t n) const {
    return reinterpret_cast<const mlx5::mlx5_err_cqe&>(send_cqe(n)).syndrome;
  }
  uint8_t send_cqe_opcode(uint64_t n) const { return mlx5::cqe_opcode(send_cqe(n).op_own); }

  std::vector<uint8_t> storage;
  uint8_t* base = nullptr;
  uint64_t arena_bytes = 0;
  Span sq{}, send_cq{}, recv_cq{}, rq{}, dbrec{}, doorbell{};
  Span region[kRegions]{};
  // 32-byte aligned: the GPU path of read_mr (execute.h) loads an entry as two 16 B vector loads.
  alignas(32) softnic::MrEntry mrs[8]{};
  softnic::QpContext qps[2]{};
  softnic::NicTables nic{};
};

}  // namespace dissect::testing
