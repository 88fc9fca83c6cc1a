// Device handles: what a submitter (a GPU thread, or a host thread standing in for one) needs to
// drive a queue pair. Plain, trivially copyable, size-pinned: a provider fills them on the host and
// copies them by value into a kernel argument or a host thread's closure.
//
// Every index counts 64-byte WQEBBs and is free-running (never masked) unless its comment says so.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/ring.h"

namespace dissect::telemetry {
struct QpCounters;  // per-QP telemetry slot (nic/qp_counters.h); null when telemetry is off
}

namespace dissect::nic {

// Submitter-side progress of one send queue (NVSHMEM's "management block"). It lives in the same
// memory as the queue (GPU memory for GPU-resident queues) and is touched only by submitters and
// pollers, never by the NIC.
struct alignas(64) SendQueueState {
  uint64_t resv_head;   // next WQEBB to reserve: WQEBBs below it are owned by some submitter
  uint64_t ready_head;  // WQEBBs below it are written and published in reservation order
  uint64_t prod_idx;    // WQEBBs below it are announced by a doorbell
  uint64_t cons_idx;    // WQEBBs below it are completed (retired by a CQE); slots may be reused
  uint64_t cq_ci;       // CQEs consumed from the send CQ (free-running)
  uint32_t post_lock;   // serialises dbrec + doorbell stores among submitters (0 free, 1 held)
  uint32_t error;       // first error CQE seen: syndrome | opcode << 8 | 1 << 16 (0 = none)
  uint64_t error_wqe;   // WQEBB index (widened) of the WQE that failed
  uint64_t reserved[1];
};
static_assert(sizeof(SendQueueState) == 64);

inline constexpr uint32_t SEND_QUEUE_ERROR_VALID = 1u << 16;
DISSECT_HD constexpr uint8_t send_queue_error_syndrome(uint32_t error) { return error & 0xff; }

struct QpHandle;
struct SharedCqState;

struct CqHandle {
  mlx5::mlx5_cqe64* cqes;  // cqe_count entries of 64 B
  uint32_t cqe_count;      // power of two
  uint32_t cqn;
  mlx5::be32* dbrec;       // CQ doorbell record word MLX5_CQ_SET_CI (unused with overrun ignore)
  uint32_t collapsed;      // 1: every CQE lands in entry 0 (CQ context cc = 1; QpAttributes::
                           // send_cq_collapsed); cqe_count is then the owner bit's period only
  SharedCqState* shared;   // a CQ several QPs share (nic::CompletionQueue); null: this QP's own
};

// What the pollers of a CQ shared by several QPs' send queues (nic::CompletionQueue, nic.h) share.
// It lives where they are (the CQ's placement): the provider writes a member's handle, then its
// QPN, before the QP's first post, and clears the QPN after its last CQE; pollers claim CQEs from
// `ci` and retire each on the member its QPN names (gda/completion.h); the NIC never touches it.
// The members are an open-addressed table of member_mask + 1 slots: QPN q is in the first slot
// from member_slot(q) on whose member_qpns entry is q, before the first EMPTY_MEMBER.
struct alignas(64) SharedCqState {
  uint64_t ci;                  // CQEs consumed (free-running), each claimed with a CAS
  uint32_t member_mask;         // slots - 1 (a power of two minus one)
  uint32_t reserved;
  uint32_t* member_qpns;        // per slot: the member's QPN, EMPTY_MEMBER or LEFT_MEMBER
  QpHandle* members;            // per slot: the member's handle as create_qp returned it
  uint64_t orphan_cqes;         // CQEs consumed that named no member (a QP that had left)
};
inline constexpr uint32_t EMPTY_MEMBER = 0;            // never held a member: a probe stops here
inline constexpr uint32_t LEFT_MEMBER = 0xffffffffu;   // held one that left: a probe goes on
DISSECT_HD constexpr uint32_t member_slot(uint32_t qpn, uint32_t mask) {
  return (qpn * 0x9E3779B1u) >> 12 & mask;  // Fibonacci hashing: sequential QPNs spread out
}

struct QpHandle {
  mlx5::send_ring sq;           // the send queue's WQEBB ring
  uint32_t qpn;
  uint32_t max_inline;          // largest inline payload in bytes the QP accepts
  mlx5::be32* dbrec_send;       // &dbrec.send_counter
  uint64_t* doorbell;           // the UAR doorbell register: one 8-byte store rings it; with
                                // DoorbellPath::cpu_assisted its mailbox (nic.h), stored the same way
  SendQueueState* state;
  CqHandle send_cq;             // the send CQ: this QP's own, or one shared with other QPs
                                // (send_cq.shared; its CQEs then name their QP by QPN)
  telemetry::QpCounters* telemetry;  // null when telemetry is off or the QP has no slot
  uint64_t* post_stamps;        // per WQEBB slot: the post's stamp (telemetry_policy.h), 0 where
                                // no WQE starts; used only when `telemetry` is set
  uint64_t telemetry_sample_mask;  // the slot's sample_mask (N - 1 of the 1-in-N latency sample),
                                   // copied so that a post reads no telemetry memory
};

// Points `qp` at its telemetry slot (attach_telemetry(qp, nullptr, nullptr, 0): none).
DISSECT_HD inline void attach_telemetry(QpHandle& qp, telemetry::QpCounters* counters,
                                        uint64_t* post_stamps, uint64_t sample_mask) {
  qp.telemetry = counters;
  qp.post_stamps = post_stamps;
  qp.telemetry_sample_mask = sample_mask;
}

// Receive side of a QP, for RDMA WRITE WITH IMMEDIATE: each one consumes a receive WQE and writes a
// responder CQE carrying the immediate.
struct RecvQueueHandle {
  mlx5::mlx5_wqe_data_seg* rq;  // one 16 B scatter entry per receive WQE (zero-length allowed)
  uint32_t wqe_count;           // power of two
  mlx5::be32* dbrec_recv;       // &dbrec.rcv_counter
  uint64_t* head;               // receive WQEs posted (free-running); submitter-owned
  CqHandle recv_cq;
  uint64_t* recv_cq_ci;         // CQEs consumed from the receive CQ (free-running)
};

static_assert(std::is_trivially_copyable_v<QpHandle>);
static_assert(std::is_trivially_copyable_v<CqHandle>);
static_assert(std::is_trivially_copyable_v<SharedCqState>);
static_assert(std::is_trivially_copyable_v<RecvQueueHandle>);

}  // namespace dissect::nic
