// The softnic's "hardware" state: what a ConnectX keeps in its QP, CQ and memory-key contexts.
// An implementation header (impl/, as NCCL keeps them beside their contracts): SoftNic and
// SoftNic hold these tables by value, so their public headers include it, but nothing a user
// calls takes them; the engine's execute path over them is src/softnic/engine/execute.h.
//
// These structs live in memory the engine reaches (host memory for the host-thread engine, GPU
// memory for the engine kernel) and are touched only by the engine once a QP is connected; the
// host API writes them before publishing `state` with a release store.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/ring.h"
#include "dissect/softnic/profile.h"

namespace dissect::softnic {

enum QpState : uint32_t { QP_STATE_RESET = 0, QP_STATE_RTS = 3, QP_STATE_ERROR = 6 };

// MrEntry::access bit beside the nic::Access flags: the region is host memory. A GPU cannot apply
// a system-scope atomic to host memory over PCIe on x86 hosts (compute-sanitizer: "invalid
// system-scoped atomic"), so the GPU engine applies a FETCH_ADD there as a read-modify-write
// (execute_fetch_add).
inline constexpr uint32_t MR_IN_HOST_MEMORY = 1u << 31;

// Memory key context. Keys are `index << 8 | tag`: the tag catches reuse of a stale key.
struct MrEntry {
  uint64_t address;
  uint64_t length;
  uint32_t key;
  uint32_t access;  // nic::Access flags
  uint32_t pd;
  uint32_t valid;   // published last with a release store
};

struct CqContext {
  mlx5::mlx5_cqe64* cqes;
  uint32_t cqe_count;  // power of two
  uint32_t cqn;
  uint64_t produced;   // CQEs written for this QP (free-running): sets the slot and the owner bit
                       // of a CQ of its own
  // 1: a collapsed CQ (PRM CQ context cc = 1): CQE n is written to entry 0, not n % cqe_count,
  // and its owner bit is still that of n (bit log2(cqe_count) of the producer counter, as the
  // counter keeps counting); only the address collapses. write_cqe_at applies it.
  uint32_t collapsed;
  uint32_t reserved;
  // A CQ shared with other QPs (nic::CompletionQueue): the CQ's producer counter, in engine
  // memory, which every member QP's engine reserves its CQE numbers from (reserve_cqes); null for
  // a CQ of this QP alone.
  uint64_t* shared_produced;
};

// The counters a NIC keeps, per QP; the canonical names are those of telemetry's hw vocabulary.
struct ModelCounters {
  uint64_t doorbells;        // doorbell register updates observed
  uint64_t wqes_executed;    // send WQEs consumed (any outcome)
  uint64_t tx_bytes;         // payload bytes sent
  uint64_t tx_packets;       // messages sent
  uint64_t rx_bytes;         // payload bytes written into this QP's PD by peers
  uint64_t rx_packets;
  uint64_t cqes_written;
  uint64_t error_cqes;
  uint64_t bad_doorbells;    // doorbells with a foreign QPN or an index behind the consumer
  // Not a count: the most WQEBBs announced and not yet executed when a window of the engine opened
  // (a lone WQE, the only one announced, leaves it as it is: 0 means never more than one WQE). A
  // submitter faster than the NIC fills its send queue; one slower never does.
  uint64_t deepest_backlog;
};

struct NicTables;

// How the GPU engine reaches a QP's queues and its observers (set by the control path). Without a
// flag the queues are in the engine's GPU memory, rung and polled by kernels on that GPU, and the
// responder is on the same GPU: GPU-scope loads and fences suffice. The host engine ignores them.
enum EngineFlags : uint32_t {
  // Doorbell and WQEs in mapped host memory, or a doorbell register a host thread stores to (the
  // cpu-assisted forwarder, nic::DoorbellPath): the doorbell is acquired with system scope.
  ENGINE_QUEUES_IN_HOST_MEMORY = 1u << 0,
  ENGINE_SYSTEM_COMPLETION = 1u << 1,      // a CQE or payload observer off the engine's GPU
};

// Where the connected QP's NIC lives, as this engine reaches it. Every pointer of the remote side
// (its NicTables, their mrs / qps arrays, the responder's receive queue and CQ, MR addresses and a
// WQE's raddr) is an address in the owner's process. In-process peers share the address space:
// all zero. A peer in another process exported one arena (softnic/ipc.h): its pointers are valid
// only inside [base, base + bytes) of the owner's space, and this engine reaches them at
// address + delta (modulo 2^64), through the CUDA IPC mapping.
struct RemoteWindow {
  uint64_t base;   // owner-space start of the exported arena; 0 = same address space
  uint64_t bytes;  // 0 = same address space: no bound beyond the MR's
  uint64_t delta;  // this process's mapping of the arena minus `base`
};

// QpContext::transport: what the send queue's WQEs are. An RC QP's responder is fixed by
// connect(); a DCI's WQEs each carry an address vector (mlx5_wqe_av after the ctrl segment) naming
// the DCT that answers that WQE (execute_dc_write).
enum QpTransport : uint32_t { QP_TRANSPORT_RC = 0, QP_TRANSPORT_DCI = 1 };

struct QpContext {
  uint32_t qpn;
  uint32_t state;  // QpState; RTS is published last with a release store
  uint32_t pd;
  union {
    uint32_t remote_qp_index;   // RC: index of the connected QP in `remote_nic`'s table
    // A DCI under a timing profile (engine/dc_timing.h): the DCT it is connected to
    // (dc_connection_tag; 0 = none). A DCI is never connected, so the word is free.
    uint32_t dc_connected;
  };
  NicTables* remote_nic;      // the NIC that owns the connected QP (may be this one), owner space
  RemoteWindow remote_window;   // how to reach `remote_nic` and everything it points to
  mlx5::send_ring sq;
  mlx5::mlx5_qp_dbrec* dbrec;
  uint64_t* doorbell;           // the UAR register this QP's submitter stores to
  uint64_t sq_consumer;         // WQEBBs consumed (free-running)
  uint64_t last_doorbell;       // last doorbell value acted on
  uint64_t sq_target;           // highest WQEBB index announced by a doorbell (free-running)
  uint64_t doorbell_seen_ns;    // when the engine saw the doorbell that last raised sq_target:
                                // under a timing profile the clock after the read (DC pacing);
                                // else the start of the pass whose read saw it (0: no pass clock)
  uint64_t doorbell_rung_ns;    // when that doorbell was rung, as the engine dates it: the start
                                // of the last pass whose read saw an older value (window.h,
                                // ring_date); a timing profile's RC windows pace from it
  CqContext send_cq;
  mlx5::mlx5_wqe_data_seg* rq;  // receive WQEs, one data segment each; null = no RQ
  uint32_t rq_wqe_count;
  uint32_t engine_flags;        // EngineFlags: the scopes the GPU engine reads and writes with
  uint64_t rq_consumer;
  CqContext recv_cq;
  ModelCounters counters;
  uint32_t transport;           // QpTransport
  // A DCI's current target under the connection-state model (engine/connection_state.h): a
  // change is a reconnect. 0 = none yet.
  uint32_t dc_destination;
  // Unused: keeps the context a multiple of 16 B, so that the fields after a copy of it in the GPU
  // engine's shared memory (QpCopy) keep their alignment, and its vector loads and code their
  // shape (8 B more reshuffled the fast kernel: pointer put+completion +0.25 us, H100, stop 44).
  uint64_t reserved;
};
static_assert(sizeof(QpContext) % 16 == 0, "QpContext: a multiple of 16 B (see `reserved`)");

// A DC target (DCT): the responder end of DC transport, reachable by any DCI of the fabric that
// names its number and access key in a WQE's address vector. The softnic's DCTs only accept RDMA
// WRITEs into memory of their protection domain (no receive queue, so no SEND / WRITE WITH IMM).
// The slot is never reused while the NIC lives: a destroyed DCT keeps valid = 0.
struct DctContext {
  uint32_t dctn;     // DCTN_BASE + index
  uint32_t valid;    // published last with a release store; 0 once destroyed
  uint32_t pd;
  uint32_t connects;  // DC connects it accepted, under a timing profile (engine/dc_timing.h)
  uint64_t dc_key;   // DC access key (mlx5dv_create_qp dct_access_key)
  uint64_t rx_bytes;  // payload bytes written through it
  uint64_t rx_packets;
};

// What the connection-state model (profile.h, engine/connection_state.h) counted on one NIC: its
// cache's lookups and misses by processing side, added with relaxed atomics by every engine that
// looks a context up here (the responder's side is counted on the responder's NIC).
struct ContextCacheCounters {
  uint64_t send_lookups;     // requester contexts looked up (one per window / DC WQE)
  uint64_t send_misses;
  uint64_t receive_lookups;  // responder QP or DCT contexts looked up
  uint64_t receive_misses;
};

// One NIC's tables, fixed capacity, allocated once in engine-reachable memory.
struct NicTables {
  uint32_t nic_id;
  uint32_t mr_capacity;
  uint32_t qp_capacity;
  uint32_t qp_count;  // QPs created; grows with a release store after the context is written
  MrEntry* mrs;
  QpContext* qps;
  TimingProfile profile;     // what the engine adds to every window (profile.h); fixed at creation
  uint64_t pipe_busy_until;  // the NIC's pipe is claimed until this time, in ns x 4 (window.h)
  // DC transport. `dcts`: this NIC's DC targets (dct_count published with a release store after
  // the context is written). `fabric`: every NIC a DCI of this one can reach, indexed by LID (the
  // AV's rlid; softnic LID = nic_id + 1, lid_of_nic), entries published with release stores and
  // cleared before their NIC goes; null = no fabric (a DCI's WQEs complete with
  // TRANSPORT_RETRY_EXC_ERR). Host engines share the process's table; a GPU engine has its own in
  // its GPU memory, made with its first DCI (SoftNic::open_gpu_fabric).
  DctContext* dcts;
  uint32_t dct_capacity;
  uint32_t dct_count;
  NicTables* const* fabric;
  uint32_t fabric_lids;  // entries of `fabric`
  uint32_t reserved_dc;
  // The connection-state model's QP-context cache: profile.qp_cache_entries tags (the QP or DCT
  // number a slot holds, 0 = empty), owner space; null when the profile has no model.
  uint32_t* qp_cache;
  ContextCacheCounters context_cache;
};

// What an engine was doing, in host memory (mapped for the engine kernel): written by the engine,
// read by the host (the watchdog, error messages).
struct alignas(64) EngineStatus {
  uint64_t heartbeat;      // passes of the first engine warp / thread, / 1024: stalls mean a hang
  uint64_t wqes_executed;  // all QPs
  uint64_t consumer;       // sq_consumer of the QP last serviced with work
  uint32_t current_qpn;    // QP last serviced with work (0 = none yet)
  uint32_t last_syndrome;  // last error syndrome produced (0 = none)
  uint32_t last_error_qpn;
  uint32_t phase;          // EnginePhase
  uint32_t generation;     // start() count: which engine launch wrote this
  uint32_t reserved;
};
static_assert(sizeof(EngineStatus) == 64);

enum EnginePhase : uint32_t { ENGINE_NOT_STARTED = 0, ENGINE_RUNNING = 1, ENGINE_EXITED = 2 };

inline constexpr uint32_t DCTN_BASE = 0x40000;  // dctn = DCTN_BASE + index: apart from QPNs
// Softnic LIDs: nic_id + 1 (LID 0 is reserved in InfiniBand), unicast LIDs up to 0xbfff.
inline constexpr uint32_t MAX_FABRIC_LIDS = 0xc000;
DISSECT_HD constexpr uint16_t lid_of_nic(uint32_t nic_id) { return static_cast<uint16_t>(nic_id + 1); }
inline constexpr uint32_t QPN_BASE = 0x100;  // qpn = QPN_BASE + index; 0..0xff reserved as on mlx5
inline constexpr uint64_t MAX_MESSAGE_BYTES = 1ull << 31;  // 2 GiB, the mlx5 max message size

static_assert(std::is_trivially_copyable_v<QpContext>);
static_assert(std::is_trivially_copyable_v<NicTables>);
static_assert(std::is_trivially_copyable_v<RemoteWindow>);
static_assert(std::is_trivially_copyable_v<DctContext>);

}  // namespace dissect::softnic
