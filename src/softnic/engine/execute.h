// How the softnic consumes a send queue: the same code runs in the host-thread engine and in the
// engine kernel, so both validate and execute WQEs identically.
//
// Per WQE, as a ConnectX does: if the QP is in the error state, flush it; read the control segment
// at the consumer index; check that it names this WQE (index and QPN), has a sane ds and lies
// wholly inside what the doorbells announced; check that the responder answers and every key,
// bound and permission before any byte moves; move the payload (memmove semantics: verbs allows a source and destination that
// overlap); write the responder CQE (WRITE WITH IMM), then the requester CQE if
// the WQE is signalled or failed. After an error CQE the QP is in the error state and every later
// WQE completes with a flush error. A WQE whose control segment is unusable (stale, foreign, ds 0,
// or longer than announced) occupies one WQEBB, so every announced WQEBB is either part of a WQE
// that executed or has a CQE of its own: nothing is skipped silently. Syndromes follow the PRM
// (docs/mlx5_sources.md §3.1); the first check a WQE fails decides, in this order (a write's
// gather segments one after another):
//   any WQE after the QP entered the error state (whatever its ctrl) -> WR_FLUSH_ERR    (0x05)
//   stale WQE, foreign QPN, ds 0, ds spanning WQEBBs no doorbell announced, unknown opcode,
//   ds too short                                                -> LOCAL_QP_OP_ERR   (0x02)
//   bad lkey, local bound, local access flag, FETCH_ADD result address not 8-byte aligned (the
//   model returns the result with one aligned 8-byte store, as the GPU engine must)
//                                                               -> LOCAL_PROT_ERR    (0x04)
//   message over 2 GiB                                          -> LOCAL_LENGTH_ERR  (0x01)
//   responder gone: not connected, its QP destroyed or not RTS, or its NIC destroyed (a ConnectX
//   requester whose responder never answers retries until retry_cnt runs out)
//                                                               -> TRANSPORT_RETRY_EXC_ERR (0x15)
//   bad rkey, remote bound, missing remote permission, misaligned atomic -> REMOTE_ACCESS_ERR (0x13)
//   WRITE WITH IMM with no receive WQE posted at the responder  -> RNR_RETRY_EXC_ERR (0x16)
//   WRITE WITH IMM to a responder whose RQ / receive CQ the engine cannot reach (another
//   process's host memory)                                     -> REMOTE_OP_ERR     (0x14)
// A DCI's WQEs (DC transport) carry an address vector naming their responder; their checks and
// syndromes are listed at execute_dc_write.
// A remote side in another process is reached through its RemoteWindow (context.h): the checks run
// on owner-space addresses, exactly as the owner's engine would run them, and only the final
// access goes through the translated address.
#pragma once

#include <cstddef>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/softnic/impl/context.h"
#include "dissect/softnic/cqe_times.h"
#include "connection_state.h"
#include "dc_timing.h"
#include "table_scope.h"

namespace dissect::softnic {

struct WqeOutcome {
  uint8_t syndrome;   // 0 = success
  uint8_t opcode;     // mlx5 opcode of the WQE
  bool signaled;      // the WQE asked for a CQE (ce = 2)
  uint32_t wqebbs;    // WQEBBs the WQE occupies (1 when its ctrl segment is unusable)
  uint64_t bytes;     // payload bytes moved
};

// Word-wise memmove, the device's copy and the host's reference for it (the CPU tests run this
// same loop against std::memmove). Overlap is legal in verbs (one MR written from itself), so the
// copy runs forwards when the destination starts below the source and backwards otherwise: every
// source byte is read before the copy can overwrite it. An 8-byte word is read whole before it is
// stored, so a word that straddles the overlap still reads only source bytes. Out of line: the
// engine's common copies go through copy_unaliased (engine/window.h), and these loops' unrolled
// code would otherwise sit inside every window.
DISSECT_HD inline DISSECT_COLD void move_bytes_wordwise(void* destination, const void* source, uint64_t length) {
  uint8_t* out = static_cast<uint8_t*>(destination);
  const uint8_t* in = static_cast<const uint8_t*>(source);
  const bool aligned = ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in)) & 7) == 0;
  if (reinterpret_cast<uintptr_t>(out) <= reinterpret_cast<uintptr_t>(in)) {
    uint64_t i = 0;
    if (aligned) {
      for (; i + 8 <= length; i += 8) {
        *reinterpret_cast<uint64_t*>(out + i) = *reinterpret_cast<const uint64_t*>(in + i);
      }
    }
    for (; i < length; ++i) out[i] = in[i];
    return;
  }
  uint64_t i = length;
  if (aligned) {
    for (; (i & 7) != 0; --i) out[i - 1] = in[i - 1];
    for (; i >= 8; i -= 8) {
      *reinterpret_cast<uint64_t*>(out + i - 8) = *reinterpret_cast<const uint64_t*>(in + i - 8);
    }
  }
  for (; i > 0; --i) out[i - 1] = in[i - 1];
}

DISSECT_HD inline void copy_bytes(void* destination, const void* source, uint64_t length) {
#if defined(__CUDA_ARCH__)
  move_bytes_wordwise(destination, source, length);
#else
  std::memmove(destination, source, length);
#endif
}

// `owner_address` (an address in the process that owns it) as this engine reaches it.
template <typename T>
DISSECT_HD inline T* through(const RemoteWindow& window, T* owner_address) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(owner_address) + window.delta);
}

// True when [address, address + length) of the owner's space lies inside the window: memory of
// another process outside its exported arena is not mapped here, so an MR there cannot be reached.
DISSECT_HD inline bool window_covers(const RemoteWindow& window, uint64_t address,
                                     uint64_t length) {
  return window.bytes == 0 || (address >= window.base && length <= window.bytes &&
                               address - window.base <= window.bytes - length);
}

#if defined(__CUDA_ARCH__)
// 16 B at `p` into w[0..3], issued here: in asm, because ptxas sinks plain loads to their first use
// (express.h, read_wqebb). `Weak`: a plain load, which L1 may serve; otherwise ld.relaxed.gpu.
template <bool Weak>
__device__ inline void load_16(const void* p, uint32_t* w) {
  if constexpr (Weak) {
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p) : "memory");
  }
}
#endif

// A NIC's memory-key table: fixed for the NIC's life, so an engine may keep it (QpCopy).
struct MrTable {
  MrEntry* mrs;
  uint32_t capacity;
};
DISSECT_HD inline MrTable mr_table(const NicTables& nic) { return MrTable{nic.mrs, nic.mr_capacity}; }

// Memory-key context `key` of `table` as read now, whatever it holds (zero past the table): the
// loads issued where this is called, so that a caller can put them in flight beside others and
// decide later (mr_holds). `window`: the responder's, when the table is another process's (its
// `mrs` pointer is in the owner's space). On the host: `valid` acquired, then the fields. On the
// GPU the whole 32 B entry is read as two 16 B loads in flight at once (one L2 round trip, not
// two): the control path writes an entry long before a WQE names its key, publishing `valid`
// last, and a WQE racing a re-registration of the slot sees a stale key, which the tag in every
// key refuses.
// `Cached`: weak loads, which L1 may serve (the express window's guesses: a backlog's windows
// read the same entry again and again, and nothing empties L1 between them but the next
// doorbell's acquire, before which every MR change a WQE relies on was made).
template <bool Cached = false>
DISSECT_HD inline MrEntry load_mr(const MrTable& table, uint32_t key,
                                  const RemoteWindow& window = RemoteWindow{}) {
  MrEntry out{};
  const uint32_t index = key >> 8;
  if (index >= table.capacity) return out;
  const MrEntry* entry = &through(window, table.mrs)[index];
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(MrEntry) == 32);
  uint32_t w[8];
  load_16<Cached>(entry, &w[0]);
  load_16<Cached>(reinterpret_cast<const uint8_t*>(entry) + 16, &w[4]);
  __builtin_memcpy(&out, w, sizeof w);
#else
  if (load_acquire<Scope::system>(const_cast<uint32_t*>(&entry->valid)) != 0) out = *entry;
#endif
  return out;
}

// Whether `entry` (load_mr) is a valid context with key `key`.
DISSECT_HD inline bool mr_holds(const MrEntry& entry, uint32_t key) {
  return entry.valid != 0 && entry.key == key;
}

// Reads memory-key context `key` of `nic` into `out`; false when no valid context has that key.
DISSECT_HD inline bool read_mr(const NicTables& nic, uint32_t key, MrEntry* out,
                               const RemoteWindow& window = RemoteWindow{}) {
  *out = load_mr(mr_table(nic), key, window);
  return mr_holds(*out, key);
}

DISSECT_HD inline bool covers(const MrEntry& entry, uint64_t address, uint64_t length) {
  return address >= entry.address && length <= entry.length &&
         address - entry.address <= entry.length - length;
}

// True when `key` names a region of protection domain `pd` covering [address, address + length)
// with every flag of `access`. `window`: as for read_mr; `address` is in the owner's space.
// What key_allows decides from an entry read_mr returned (`found`).
DISSECT_HD inline bool entry_allows(bool found, const MrEntry& entry, uint32_t pd, uint64_t address,
                                    uint64_t length, uint32_t access) {
  return found && entry.pd == pd && (entry.access & access) == access &&
         covers(entry, address, length);
}

DISSECT_HD inline bool key_allows(const NicTables& nic, uint32_t pd, uint32_t key, uint64_t address,
                                  uint64_t length, uint32_t access,
                                  const RemoteWindow& window = RemoteWindow{}) {
  MrEntry entry;
  const bool found = read_mr(nic, key, &entry, window);
  return entry_allows(found, entry, pd, address, length, access);
}

// The entry CQE number `index` of `cq` is written to: index % cqe_count, or entry 0 of a collapsed
// CQ (CqContext::collapsed, the PRM's cc = 1).
DISSECT_HD inline uint64_t cqe_slot(const CqContext& cq, uint64_t index) {
  return cq.collapsed ? 0 : index & (cq.cqe_count - 1);
}

#if defined(__CUDA_ARCH__)
// Of this warp's lanes writing CQEs into the same collapsed CQ together, true for the one writing
// the newest (highest index). The window (engine/window.h) writes a QP's CQEs from its lanes at
// once, lane k the k-th CQE, each into its own slot; into one entry that would be a race with no
// order, and the entry could end on an older CQE than the window's last. So only the newest is
// written: a poller of a collapsed CQ cannot tell, since the NIC may write several CQEs between
// two of its reads and it only ever sees the last. The indexes of one window are within 32 of each
// other: compared relative to one of them, so the counter's wrap does not matter. The window's
// lanes arrive converged (lanes.each after a warp barrier); lanes of a split warp would each elect
// their newest, and entry 0 could hold the older of the two until the next CQE.
__device__ inline bool newest_collapsed_writer(const CqContext& cq, uint64_t index) {
  const unsigned group =
      __match_any_sync(__activemask(), reinterpret_cast<unsigned long long>(cq.cqes));
  const uint32_t low = static_cast<uint32_t>(index);
  const uint32_t base = __shfl_sync(group, low, __ffs(group) - 1);
  const int ahead = static_cast<int>(low - base);
  return __reduce_max_sync(group, ahead) == ahead;
}
#endif

// write_cqe_at in two steps, for a writer with other stores for the same release to cover (the
// express window's payloads): bytes 0..59 of CQE number `index` into `entry` (its slot); returns
// the last word, which publish_cqe stores.
// `cqe_count`: the CQ's (its owner bit).
DISSECT_HD inline uint32_t write_cqe_body(mlx5::mlx5_cqe64* entry, uint32_t cqe_count, uint64_t index,
                                          const mlx5::mlx5_cqe64& cqe, uint8_t cqe_opcode) {
  const uint8_t op_own = mlx5::make_op_own(cqe_opcode, index, cqe_count);
  // Bytes 0..55, then sop_drop_qpn. The built CQE is read with a memcpy: read through uint64_t
  // lvalues it broke the aliasing rules, and GCC -O2 read the words before requester_cqe's field
  // stores (CQEs without their byte count, CPU tier). On the GPU seven 8 B stores (a memcpy into
  // the entry compiled to 56 byte stores); on the host a memcpy.
  uint64_t words[7];
  __builtin_memcpy(words, &cqe, sizeof words);
#if defined(__CUDA_ARCH__)
  uint64_t* out = reinterpret_cast<uint64_t*>(entry);
  for (int i = 0; i < 7; ++i) out[i] = words[i];
#else
  std::memcpy(entry, words, sizeof words);
#endif
  entry->sop_drop_qpn = cqe.sop_drop_qpn;
  return static_cast<uint32_t>(cqe.wqe_counter.raw) |
         (static_cast<uint32_t>(op_own) << 24);  // signature (byte 62) = 0
}

DISSECT_HD inline uint32_t write_cqe_body(mlx5::mlx5_cqe64* entry, const CqContext& cq, uint64_t index,
                                          const mlx5::mlx5_cqe64& cqe, uint8_t cqe_opcode) {
  return write_cqe_body(entry, cq.cqe_count, index, cqe, cqe_opcode);
}

template <Scope S>
DISSECT_HD inline void publish_cqe(mlx5::mlx5_cqe64* entry, uint32_t tail) {
  uint32_t* last_word = reinterpret_cast<uint32_t*>(entry) + 15;
  store_release<S>(last_word, tail);
}

// The slot CQE number `index` of `cq` goes to, as this engine reaches it.
DISSECT_HD inline mlx5::mlx5_cqe64* cqe_entry(const CqContext& cq, uint64_t index,
                                              const RemoteWindow& window = RemoteWindow{}) {
  return &through(window, cq.cqes)[cqe_slot(cq, index)];
}

// Writes CQE number `index` of `cq`: bytes 0..59 first, then the last word (wqe_counter |
// signature | op_own) in one release store, so a poller that acquires that word and sees the new
// owner bit sees the whole entry (rdma-core reads op_own, then rmb()). The poller reads the same
// 4-byte word (gda/completion.h), so writer and reader agree on one atomic object. The release is
// cumulative: payload stores this thread has observed (an engine warp's other lanes, after a warp
// barrier) are visible before the CQE. `scope`: who may observe the CQE and the payloads (the
// GPU when the CQ, the poller and the responder are all on the engine's GPU; the system otherwise).
// `window`: the responder's, when `cq` belongs to a QP of another process.
// A collapsed CQ: every CQE goes to entry 0 (cqe_slot) with the owner bit of its own index (what
// NVSHMEM's ibgda_poll_cq reads is the wqe_counter; it, and the PRM's consumers of cc = 1, ignore
// the owner bit, which keeps the ring's meaning so that one rule serves both kinds); lanes writing
// one together: only the newest (newest_collapsed_writer).
template <Scope S = Scope::system>
DISSECT_HD inline void write_cqe_at(const CqContext& cq, uint64_t index,
                                    const mlx5::mlx5_cqe64& cqe, uint8_t cqe_opcode,
                                    const RemoteWindow& window = RemoteWindow{}) {
#if defined(__CUDA_ARCH__)
  if (cq.collapsed && !newest_collapsed_writer(cq, index)) return;
#endif
  mlx5::mlx5_cqe64* entry = cqe_entry(cq, index, window);
  publish_cqe<S>(entry, write_cqe_body(entry, cq, index, cqe, cqe_opcode));
}

// The first of `count` consecutive CQE numbers of `cq` for one writer. A CQ of one QP: the QP's
// own counter, which only the engine serving that QP advances (after the CQEs are written). A
// shared CQ: one relaxed add to the CQ's counter, which the engines of every member QP advance;
// relaxed suffices because each CQE is published by its own release (write_cqe_at) and a poller
// reads slots by ownership, not by the counter, so CQEs of two QPs may be published in either
// order. GPU scope: every member of a CQ is served by the engine of the CQ's NIC (softnic.h).
DISSECT_HD inline uint64_t reserve_cqes(const CqContext& cq, uint32_t count) {
  if (cq.shared_produced == nullptr) return cq.produced;
  return fetch_add<Scope::gpu>(cq.shared_produced, uint64_t{count});
}

DISSECT_HD inline void write_cqe(CqContext& cq, const mlx5::mlx5_cqe64& cqe, uint8_t cqe_opcode,
                                 const RemoteWindow& window = RemoteWindow{}) {
  write_cqe_at(cq, reserve_cqes(cq, 1), cqe, cqe_opcode, window);
  ++cq.produced;
}

// The requester CQE of the WQE at `wqe_start`, stamped `timestamp` (ns); returns its CQE opcode
// (REQ or REQ_ERR). Bytes 4..12 carry the softnic's diagnostic (dissect/softnic/cqe_times.h): the
// QP's doorbell dates relative to the stamp and `path`, the engine path writing it.
// Of QP `qpn`, whose doorbell was rung at `rung` and seen at `seen` (QpContext's dates).
DISSECT_HD inline uint8_t requester_cqe(uint32_t qpn, uint64_t rung, uint64_t seen, uint64_t wqe_start,
                                        const WqeOutcome& outcome, mlx5::mlx5_cqe64* cqe,
                                        uint64_t timestamp, uint8_t path) {
  *cqe = mlx5::mlx5_cqe64{};
  set_cqe_times(cqe, timestamp, rung, seen, path);
  cqe->wqe_counter = mlx5::be16::from_host(static_cast<uint16_t>(wqe_start));
  cqe->sop_drop_qpn = mlx5::be32::from_host((static_cast<uint32_t>(outcome.opcode) << 24) | qpn);
  cqe->timestamp = mlx5::be64::from_host(timestamp);
  if (outcome.syndrome != 0) {
    reinterpret_cast<mlx5::mlx5_err_cqe*>(cqe)->syndrome = outcome.syndrome;
    return mlx5::MLX5_CQE_REQ_ERR;
  }
  cqe->byte_cnt = mlx5::be32::from_host(static_cast<uint32_t>(outcome.bytes));
  return mlx5::MLX5_CQE_REQ;
}

DISSECT_HD inline uint8_t requester_cqe(const QpContext& qp, uint64_t wqe_start,
                                        const WqeOutcome& outcome, mlx5::mlx5_cqe64* cqe,
                                        uint64_t timestamp, uint8_t path = CQE_PATH_NONE) {
  return requester_cqe(qp.qpn, qp.doorbell_rung_ns, qp.doorbell_seen_ns, wqe_start, outcome, cqe,
                       timestamp, path);
}

DISSECT_HD inline void complete_requester(QpContext& qp, uint64_t wqe_start,
                                          const WqeOutcome& outcome) {
  mlx5::mlx5_cqe64 cqe;
  const uint8_t cqe_opcode = requester_cqe(qp, wqe_start, outcome, &cqe, now_ns(), CQE_PATH_ONE_AT_A_TIME);
  if (outcome.syndrome != 0) ++qp.counters.error_cqes;
  write_cqe(qp.send_cq, cqe, cqe_opcode);
  ++qp.counters.cqes_written;
}

// Receive WQEs the responder has posted and the NIC has not consumed (its RQ doorbell record
// holds the 16-bit producer counter).
DISSECT_HD inline uint32_t receive_wqes_available(QpContext& responder,
                                                  const RemoteWindow& window = RemoteWindow{}) {
  if (responder.rq == nullptr) return 0;
  const mlx5::be32 posted = mlx5::be32::from_raw(
      load_acquire<Scope::system>(&through(window, responder.dbrec)->rcv_counter.raw));
  const uint16_t available = static_cast<uint16_t>(
      static_cast<uint16_t>(posted.value()) - static_cast<uint16_t>(responder.rq_consumer));
  return available <= responder.rq_wqe_count ? available : 0;
}

// The responder half of WRITE WITH IMM, after the payload has landed: consume one receive WQE and
// report the immediate, so the responder's CQE never precedes the data it announces.
DISSECT_HD inline void deliver_immediate(QpContext& responder, mlx5::be32 immediate,
                                         uint64_t bytes,
                                         const RemoteWindow& window = RemoteWindow{}) {
  mlx5::mlx5_cqe64 cqe{};
  cqe.imm_inval_pkey = immediate;
  cqe.byte_cnt = mlx5::be32::from_host(static_cast<uint32_t>(bytes));
  cqe.sop_drop_qpn = mlx5::be32::from_host(responder.qpn);
  cqe.wqe_counter = mlx5::be16::from_host(static_cast<uint16_t>(responder.rq_consumer));
  cqe.timestamp = mlx5::be64::from_host(now_ns());
  write_cqe(responder.recv_cq, cqe, mlx5::MLX5_CQE_RESP_WR_IMM, window);
  ++responder.rq_consumer;
  ++responder.counters.cqes_written;
}

// The responder `qp` is connected to, or null when none would answer: the QP is disconnected
// (SoftNic's control path clears `remote_nic` when the responder's QP or NIC is destroyed), the
// index is past the responder NIC's QPs, or the responder is not in RTS. State is acquired: the
// control path publishes RESET before it frees the responder's queues, and stops this engine
// around the free, so a WQE that saw RTS has finished with them before they go.
DISSECT_HD inline QpContext* answering_responder(const QpContext& qp) {
  if (qp.remote_nic == nullptr) return nullptr;
  const RemoteWindow& window = qp.remote_window;
  NicTables& remote_nic = *through(window, qp.remote_nic);
  if (qp.remote_qp_index >= load_acquire<TABLE_SCOPE>(&remote_nic.qp_count)) return nullptr;
  QpContext& responder = through(window, remote_nic.qps)[qp.remote_qp_index];
  if (load_acquire<TABLE_SCOPE>(&responder.state) != QP_STATE_RTS) return nullptr;
  return &responder;
}

// The connected responder as this engine reaches it (check_write takes it looked up, so that a
// window looks it up once): its NIC's tables and its QP context.
struct RemoteSide {
  NicTables* nic;
  QpContext* responder;
};

// Both null when no responder would answer (answering_responder).
DISSECT_HD inline RemoteSide remote_side(const QpContext& qp) {
  QpContext* responder = answering_responder(qp);
  if (responder == nullptr) return RemoteSide{nullptr, nullptr};
  return RemoteSide{through(qp.remote_window, qp.remote_nic), responder};
}

// What a checked RDMA WRITE will do: every key, bound and permission passed; no byte moved yet.
// One data segment or an inline payload (a gather of several segments is copied segment by
// segment in execute_write).
struct WritePlan {
  uint8_t* destination;    // as this engine reaches it
  const uint8_t* source;   // null: the payload is inline in the WQE
  uint64_t length;
  QpContext* responder;    // as this engine reaches it; null for a DC WRITE (a DCT answers)
  uint32_t payload_at;     // DS index of the first data / inline segment: 2 on RC, 2 + AV DS on DC
};

// The responder side a WRITE is checked against: the NIC whose MR table holds the rkey, the
// protection domain the rkey must belong to, and how this engine reaches that NIC. `nic` null:
// nobody answers.
struct WriteTarget {
  const NicTables* nic;
  uint32_t pd;
  RemoteWindow window;
};

// The checks of a WRITE's responder side, after its local ones (check_write_to, and the express
// window's one-WQEBB WRITEs: engine/express.h): length, an answering responder, the rkey's entry
// (`rkey_entry`, read by read_mr from target.nic: `rkey_found`) and the window; fills `plan` (all
// but `responder`) when they pass. `source`: null for an inline payload.
DISSECT_HD inline uint8_t check_write_target(const WriteTarget& target, uint64_t remote_address,
                                             bool rkey_found, const MrEntry& rkey_entry,
                                             const uint8_t* source, uint64_t length,
                                             uint32_t payload_at, WritePlan* plan) {
  using namespace mlx5;
  if (length > MAX_MESSAGE_BYTES) return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
  if (target.nic == nullptr) return MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
  const RemoteWindow& window = target.window;
  if (!entry_allows(rkey_found, rkey_entry, target.pd, remote_address, length, 2 /*REMOTE_WRITE*/) ||
      !window_covers(window, remote_address, length)) {
    return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
  }
  plan->destination = through(window, reinterpret_cast<uint8_t*>(remote_address));
  plan->source = source;
  plan->length = length;
  plan->responder = nullptr;
  plan->payload_at = payload_at;
  return 0;
}

// Segment `k` of the WQE at `start`, whose first WQEBB is `first_wqebb`: the segments of the first
// WQEBB without the ring's index arithmetic (every one-WQEBB WQE), the rest through it (a WQE may
// wrap the ring).
DISSECT_HD inline const uint8_t* wqe_segment(const mlx5::send_ring& ring, uint64_t start,
                                             const uint8_t* first_wqebb, uint32_t k) {
  return k < mlx5::MLX5_DS_PER_WQEBB ? first_wqebb + k * mlx5::MLX5_SEND_WQE_DS
                                     : ring.segment(start, k);
}

// Checks an RDMA WRITE whose raddr segment is DS `raddr_at` of the WQE (1 on RC: after the ctrl;
// 1 + the AV's DS on DC) against `target`, without moving a byte: returns its syndrome, and fills
// `plan` (all but `responder`) when it is 0. `segments` receives the number of data segments
// (0 = inline). `ring`: where the WQE's bytes are read, qp.sq or a copy of its WQEBBs at the same
// indices.
DISSECT_HD inline uint8_t check_write_to(QpContext& qp, const mlx5::send_ring& ring,
                                         const NicTables& local, const WriteTarget& target,
                                         uint64_t start, uint32_t ds, uint32_t raddr_at,
                                         WritePlan* plan, uint32_t* segments) {
  using namespace mlx5;
  if (ds < raddr_at + 2) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  const uint32_t payload_at = raddr_at + 1;
  const uint8_t* wqe = ring.wqebb(start);
  const auto* raddr = reinterpret_cast<const mlx5_wqe_raddr_seg*>(wqe_segment(ring, start, wqe, raddr_at));
  const uint64_t remote_address = raddr->raddr.value();
  const uint32_t rkey = raddr->rkey.value();
  const auto* first = reinterpret_cast<const mlx5_wqe_data_seg*>(wqe_segment(ring, start, wqe, payload_at));
  const bool is_inline = (first->byte_count.value() & MLX5_INLINE_SEG) != 0;

  uint64_t length = 0;
  *segments = 0;
  if (is_inline) {
    length = first->byte_count.value() & ~MLX5_INLINE_SEG;
    if (payload_at + inline_ds(static_cast<uint32_t>(length)) > ds) {
      return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }
  } else {
    for (uint32_t k = payload_at; k < ds; ++k) {
      const auto* seg = reinterpret_cast<const mlx5_wqe_data_seg*>(wqe_segment(ring, start, wqe, k));
      const uint32_t count = seg->byte_count.value();
      if (count & MLX5_INLINE_SEG) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
      if (!key_allows(local, qp.pd, seg->lkey.value(), seg->addr.value(), count, 0)) {
        return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
      }
      length += count;
    }
    *segments = ds - payload_at;
  }
  const uint8_t* source = is_inline ? nullptr : reinterpret_cast<const uint8_t*>(first->addr.value());
  MrEntry rkey_entry{};
  const bool rkey_found = target.nic != nullptr && read_mr(*target.nic, rkey, &rkey_entry, target.window);
  return check_write_target(target, remote_address, rkey_found, rkey_entry, source, length,
                            payload_at, plan);
}

// Checks an RC RDMA WRITE (or WRITE WITH IMM) against the connected responder `remote`.
DISSECT_HD inline uint8_t check_write(QpContext& qp, const mlx5::send_ring& ring,
                                      const NicTables& local, const RemoteSide& remote,
                                      uint64_t start, uint32_t ds, WritePlan* plan,
                                      uint32_t* segments) {
  const WriteTarget target{remote.responder != nullptr ? remote.nic : nullptr,
                           remote.responder != nullptr ? remote.responder->pd : 0,
                           qp.remote_window};
  const uint8_t syndrome = check_write_to(qp, ring, local, target, start, ds, 1, plan, segments);
  if (syndrome == 0) plan->responder = remote.responder;
  return syndrome;
}

// Moves the payload of a checked WRITE whose source is one segment or inline.
DISSECT_HD inline void perform_write(const QpContext& qp, uint64_t start, const WritePlan& plan) {
  if (plan.source == nullptr) {
    mlx5::copy_from_wqe(qp.sq, start, plan.payload_at * mlx5::MLX5_SEND_WQE_DS + 4,
                        plan.destination, static_cast<uint32_t>(plan.length));
  } else {
    copy_bytes(plan.destination, plan.source, plan.length);
  }
}

// Moves the payload of a checked WRITE, one data segment, inline, or a gather of `segments`.
DISSECT_HD inline void perform_gather_write(const QpContext& qp, uint64_t start, uint32_t ds,
                                            const WritePlan& plan, uint32_t segments) {
  using namespace mlx5;
  if (segments <= 1) {
    perform_write(qp, start, plan);
    return;
  }
  uint8_t* out = plan.destination;
  for (uint32_t k = plan.payload_at; k < ds; ++k) {
    const auto* seg = reinterpret_cast<const mlx5_wqe_data_seg*>(qp.sq.segment(start, k));
    const uint32_t count = seg->byte_count.value();
    copy_bytes(out, reinterpret_cast<const void*>(seg->addr.value()), count);
    out += count;
  }
}

DISSECT_HD inline uint8_t execute_write(QpContext& qp, const NicTables& local, uint64_t start,
                                        const mlx5::mlx5_wqe_ctrl_seg& ctrl, uint32_t ds,
                                        uint64_t* bytes) {
  using namespace mlx5;
  WritePlan plan{};
  uint32_t segments = 0;
  const uint8_t syndrome = check_write(qp, qp.sq, local, remote_side(qp), start, ds, &plan, &segments);
  if (syndrome != 0) return syndrome;
  const RemoteWindow& window = qp.remote_window;
  QpContext& responder = *plan.responder;
  const bool with_immediate = ctrl_opcode(ctrl) == MLX5_OPCODE_RDMA_WRITE_IMM;
  if (with_immediate && responder.rq != nullptr &&
      (!window_covers(window, reinterpret_cast<uintptr_t>(responder.dbrec),
                      sizeof(mlx5::mlx5_qp_dbrec)) ||
       !window_covers(window, reinterpret_cast<uintptr_t>(responder.recv_cq.cqes),
                      uint64_t{responder.recv_cq.cqe_count} * MLX5_CQE_SIZE))) {
    return MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
  }
  if (with_immediate && receive_wqes_available(responder, window) == 0) {
    return MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
  }
  perform_gather_write(qp, start, ds, plan, segments);
  if (with_immediate) deliver_immediate(responder, ctrl.imm, plan.length, window);
  responder.counters.rx_bytes += plan.length;
  ++responder.counters.rx_packets;
  *bytes = plan.length;
  return 0;
}

DISSECT_HD inline uint8_t execute_fetch_add(QpContext& qp, const NicTables& local, uint64_t start,
                                            uint32_t ds, uint64_t* bytes) {
  using namespace mlx5;
  if (ds != RC_FETCH_ADD_DS) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  const auto* raddr = reinterpret_cast<const mlx5_wqe_raddr_seg*>(qp.sq.segment(start, 1));
  const auto* atomic = reinterpret_cast<const mlx5_wqe_atomic_seg*>(qp.sq.segment(start, 2));
  const auto* data = reinterpret_cast<const mlx5_wqe_data_seg*>(qp.sq.segment(start, 3));
  const uint64_t remote_address = raddr->raddr.value();
  const uint64_t result_address = data->addr.value();
  if (data->byte_count.value() != 8) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  if ((result_address & 7) != 0 ||
      !key_allows(local, qp.pd, data->lkey.value(), result_address, 8, 1 /*LOCAL_WRITE*/)) {
    return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
  }
  QpContext* const answering = answering_responder(qp);
  if (answering == nullptr) return MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
  QpContext& responder = *answering;
  const RemoteWindow& window = qp.remote_window;
  NicTables& remote_nic = *through(window, qp.remote_nic);
  MrEntry target{};
  if ((remote_address & 7) != 0 ||
      !key_allows(remote_nic, responder.pd, raddr->rkey.value(), remote_address, 8,
                  8 /*REMOTE_ATOMIC*/, window) ||
      !window_covers(window, remote_address, 8) ||
      !read_mr(remote_nic, raddr->rkey.value(), &target, window)) {
    return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
  }
  // Host byte order at the target, as ConnectX with atomic_req_8B_endianness_mode = 1.
  uint64_t* const word = through(window, reinterpret_cast<uint64_t*>(remote_address));
  const uint64_t add = atomic->swap_add.value();
  uint64_t old;
#if defined(__CUDA_ARCH__)
  if ((target.access & MR_IN_HOST_MEMORY) != 0) {
    // Host memory: no GPU atomic reaches it over PCIe (MR_IN_HOST_MEMORY). A read-modify-write is
    // atomic against this QP's other WQEs (executed in order) but not against other QPs' atomics
    // on the same word or the CPU: a limit of the model on such hosts, not of a NIC.
    volatile uint64_t* target_word = word;
    old = *target_word;
    *target_word = old + add;
  } else {
    old = fetch_add<Scope::system>(word, add);
  }
#else
  old = fetch_add<Scope::system>(word, add);
#endif
  *reinterpret_cast<uint64_t*>(result_address) = old;
  *bytes = 8;
  return 0;
}

// --- DC transport (DCI send queues; docs/dc.md) ---
//
// A DC RDMA WRITE is ctrl | address vector | raddr | data or inline (mlx5_wqe_av, 3 DS with
// MLX5_EXTENDED_UD_AV set in dqp_dct; the compact 1-DS form with it clear). The AV names the
// responder of this WQE alone: dqp_dct's low 24 bits the DCT number, dc_key its access key, and
// rlid the destination port's LID, which the softnic resolves to a NIC through NicTables::fabric
// (softnic LID = nic_id + 1). Consecutive WQEs may name different DCTs (destination switching);
// each is then checked and executed as an RC WRITE would be, against the DCT's protection domain.
// Syndromes, in this order after the RC write's local checks (ds, lkey, length):
//   ds too short for ctrl + AV + raddr + data                    -> LOCAL_QP_OP_ERR (0x02)
//   no NIC has the AV's rlid (or it was destroyed): nothing answers the requester, which retries
//   until retry_cnt runs out, as for an RC responder that is gone -> TRANSPORT_RETRY_EXC_ERR (0x15)
//   the NIC answers but has no DCT with that number (never created, or destroyed)
//                                                               -> REMOTE_INVAL_REQ_ERR (0x12)
//   the DCT exists but dc_key is not its access key              -> REMOTE_ACCESS_ERR (0x13)
//   bad rkey / bound / permission at the DCT's PD                -> REMOTE_ACCESS_ERR (0x13)
// Why these two: rdma-core (providers/mlx5/cq.c mlx5_handle_error_cqe) maps 0x12 to
// IBV_WC_REM_INV_REQ_ERR and 0x13 to IBV_WC_REM_ACCESS_ERR; the IB spec's NAK codes (o9-x,
// "Invalid Request" for a request the responder cannot accept, "Remote Access Error" for a key /
// protection violation) are what a responder that exists returns. The model treats a DC key
// mismatch as a key violation of the addressed DCT, as a bad rkey is. A ConnectX may instead
// drop such a packet and count it in the DCT context (PRM DCTC dc_access_key_violation_count),
// leaving the DCI to retry out (0x15): this is a model choice, stated here and in docs/dc.md.
// WRITE WITH IMM, FETCH_ADD and SEND on a DCI are not modelled (the softnic's DCTs have no receive
// queue and take no atomics): LOCAL_QP_OP_ERR. DC WQEs never go through the parallel RC window
// (engine/window.h window_wqe_size refuses every WQE of a DCI): under `fast` they run here one at
// a time; under a timing profile the parallel engines take them in DC batches (dc_batch.h), each
// lane checking its WQE with check_dc_write, one modelled wait for the batch.

// The NIC the fabric routes `lid` to, or null.
DISSECT_HD inline NicTables* fabric_nic(const NicTables& local, uint32_t lid) {
  if (local.fabric == nullptr || lid == 0 || lid >= local.fabric_lids) return nullptr;
  return load_acquire<TABLE_SCOPE>(const_cast<NicTables**>(&local.fabric[lid]));
}

// DCT `dctn` of `nic`, or null when it has none by that number (or it was destroyed).
DISSECT_HD inline DctContext* find_dct(NicTables& nic, uint32_t dctn) {
  const uint32_t index = dctn - DCTN_BASE;
  if (dctn < DCTN_BASE || index >= load_acquire<TABLE_SCOPE>(&nic.dct_count)) return nullptr;
  DctContext* dct = &nic.dcts[index];
  if (load_acquire<TABLE_SCOPE>(&dct->valid) == 0 || dct->dctn != dctn) return nullptr;
  return dct;
}

// The address vector of the DC WQE at `start`: its form decides how many DS it takes.
struct DcAddress {
  uint32_t dctn;
  uint64_t dc_key;
  uint16_t rlid;
  uint32_t av_ds;  // DC_AV_DS (full, extended bit set) or DC_AV_COMPACT_DS
};

DISSECT_HD inline DcAddress read_dc_address(const mlx5::send_ring& ring, uint64_t start) {
  using namespace mlx5;
  const auto* av = reinterpret_cast<const mlx5_wqe_av_compact*>(ring.segment(start, 1));
  const uint32_t dqp_dct = av->dqp_dct.value();
  return DcAddress{dqp_dct & 0xffffff, av->dc_key.value(), av->rlid.value(),
                   (dqp_dct & MLX5_EXTENDED_UD_AV) ? DC_AV_DS : DC_AV_COMPACT_DS};
}

// A DCI's last resolved destination (QpCopy::dc_route, the engine warp's copy of the DCI): the
// NIC its LID routes to, the DCT slot its number names there, and that NIC's key table. These are
// fixed for the lives of the NIC and the DCT slot (a slot is never reused while its NIC lives; a
// NIC leaves the fabric only with every DCI's engine stopped around it, which empties the warp's
// copies: SoftNic::leave_fabric_locked), so a WQE naming the same (rlid, dctn) needs neither the
// fabric entry, the DCT count nor the NIC's header again. What may change while the engine runs is
// read again with every WQE, beside its WQEBB (dct_fields): the DCT's `valid` (destroyed), its
// number, PD and key, so a destroyed DCT still gives REMOTE_INVAL_REQ_ERR and a key that is not
// the DCT's REMOTE_ACCESS_ERR.
struct DcRoute {
  NicTables* nic;   // null: nothing resolved yet
  DctContext* dct;
  MrTable mrs;      // mr_table(*nic)
  uint32_t dctn;
  uint16_t rlid;
};

// What a WQE re-reads of its route's DCT (the fields the control path may change while the engine
// runs, or that the checks compare): three loads (8, 4 and 8 B), in flight at once. Not one 16 B load: a
// DctContext is 40 bytes, so every other slot of NicTables::dcts is only 8-byte aligned (a 16 B
// load there faulted with cudaErrorMisalignedAddress on the H200).
struct DctFields {
  uint32_t dctn;
  uint32_t valid;
  uint32_t pd;
  uint64_t dc_key;
};
DISSECT_HD inline DctFields load_dct_fields(const DctContext* dct) {
  DctFields f{0, 0, 0, 0};
  if (dct == nullptr) return f;
#if defined(__CUDA_ARCH__)
  static_assert(offsetof(DctContext, valid) == 4 && offsetof(DctContext, pd) == 8 &&
                offsetof(DctContext, dc_key) == 16 && alignof(DctContext) == 8);
  uint32_t dctn, valid, pd;
  unsigned long long key;
  asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];" : "=r"(dctn), "=r"(valid) : "l"(&dct->dctn) : "memory");
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(pd) : "l"(&dct->pd) : "memory");
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(key) : "l"(&dct->dc_key) : "memory");
  f.dctn = dctn;
  f.valid = valid;
  f.pd = pd;
  f.dc_key = key;
#else
  f.valid = load_acquire<TABLE_SCOPE>(const_cast<uint32_t*>(&dct->valid));
  f.dctn = dct->dctn;
  f.pd = dct->pd;
  f.dc_key = dct->dc_key;
#endif
  return f;
}

// Whether `address` names the DCT `route` holds (no load: the route is the engine's copy).
DISSECT_HD inline bool route_matches(const DcRoute& route, const DcAddress& address) {
  return route.nic != nullptr && route.rlid == address.rlid && route.dctn == address.dctn;
}

// The DCT a DC WQE's address vector names, resolved: through the DCI's route (`fields`: its DCT as
// read beside the WQE) when the AV names it, else through the fabric (fabric_nic, find_dct: the
// chain of dependent loads the route spares). `dct` null: the NIC (if any) has no valid DCT by that
// number; `key_matches`: the DCT's key is the AV's.
struct DcResolution {
  NicTables* nic;
  DctContext* dct;
  uint32_t pd;
  bool key_matches;
  bool through_route;
};
DISSECT_HD inline DcResolution resolve_dc(const NicTables& local, const DcRoute& route, const DctFields& fields,
                                          const DcAddress& address) {
  DcResolution r{nullptr, nullptr, 0, false, false};
  if (route_matches(route, address)) {
    r.nic = route.nic;
    r.through_route = true;
    if (fields.valid != 0 && fields.dctn == address.dctn) {
      r.dct = route.dct;
      r.pd = fields.pd;
      r.key_matches = fields.dc_key == address.dc_key;
    }
    return r;
  }
  r.nic = fabric_nic(local, address.rlid);
  r.dct = r.nic != nullptr ? find_dct(*r.nic, address.dctn) : nullptr;
  if (r.dct != nullptr) {
    r.pd = r.dct->pd;
    r.key_matches = r.dct->dc_key == address.dc_key;
  }
  return r;
}

// The route a WQE that resolved `r` for `address` leaves (unchanged when it went through it).
DISSECT_HD inline void note_dc_route(DcRoute& route, const DcResolution& r, const DcAddress& address) {
  if (r.through_route || r.dct == nullptr) return;
  if (route.nic != r.nic) route.mrs = mr_table(*r.nic);
  route.nic = r.nic;
  route.dct = r.dct;
  route.dctn = address.dctn;
  route.rlid = address.rlid;
}

// The syndrome of a DC WRITE whose RC-write checks gave `syndrome` against the resolved target:
// "nobody answers" refined by what did answer (the list above).
DISSECT_HD inline uint8_t refine_dc_syndrome(uint8_t syndrome, const DcResolution& r) {
  if (syndrome == mlx5::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR && r.nic != nullptr) {
    return r.dct == nullptr ? mlx5::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR
                            : mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
  }
  return syndrome;
}

// check_write_to's checks of a DC WRITE of one data segment or an inline payload (every WQE the DC
// batch and the DC lone window take: dc_batch.h), from its segments' fields, with the key entries
// read by the caller (beside its other loads): the same syndromes in the same order.
// `count`: the payload segment's byte count word; `lkey_entry`: read for a pointer payload only.
DISSECT_HD inline uint8_t check_dc_one_segment(const QpContext& v, uint32_t ds, uint32_t payload_at,
                                               uint64_t remote_address, uint32_t rkey, uint32_t count,
                                               uint64_t address, uint32_t lkey, const MrEntry& lkey_entry,
                                               const MrEntry& rkey_entry, const DcResolution& r,
                                               WritePlan* plan) {
  using namespace mlx5;
  *plan = WritePlan{};
  const bool is_inline = (count & MLX5_INLINE_SEG) != 0;
  uint64_t length = count;
  if (is_inline) {
    length = count & ~MLX5_INLINE_SEG;
    if (payload_at + inline_ds(static_cast<uint32_t>(length)) > ds) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  } else if (!entry_allows(mr_holds(lkey_entry, lkey), lkey_entry, v.pd, address, count, 0)) {
    return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
  }
  const WriteTarget target{r.key_matches ? r.nic : nullptr, r.key_matches ? r.pd : 0, RemoteWindow{}};
  const bool rkey_found = target.nic != nullptr && mr_holds(rkey_entry, rkey);
  const uint8_t* source = is_inline ? nullptr : reinterpret_cast<const uint8_t*>(address);
  const uint8_t syndrome =
      check_write_target(target, remote_address, rkey_found, rkey_entry, source, length, payload_at, plan);
  if (syndrome != 0) *plan = WritePlan{};
  return refine_dc_syndrome(syndrome, r);
}

// The checks of the DC WRITE at `start` of `ring` (the DCI's send queue, or a stage holding its
// WQEBBs: dc_batch.h), in the order of the syndrome list above; fills `plan`, `segments` and the
// DCT that answers (`*target_nic`, `*target_dct`) when they pass. Moves nothing, paces nothing.
DISSECT_HD inline uint8_t check_dc_write(QpContext& qp, const mlx5::send_ring& ring, const NicTables& local,
                                         uint64_t start, const mlx5::mlx5_wqe_ctrl_seg& ctrl, uint32_t ds,
                                         WritePlan* plan, uint32_t* segments, NicTables** target_nic,
                                         DctContext** target_dct) {
  using namespace mlx5;
  if (ctrl_opcode(ctrl) != MLX5_OPCODE_RDMA_WRITE) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  if (ds < 1 + DC_AV_COMPACT_DS + 2) return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  const DcAddress address = read_dc_address(ring, start);
  const DcResolution r = resolve_dc(local, DcRoute{}, DctFields{}, address);  // through the fabric
  // The target is named only when the DCT accepts the request; otherwise the local checks still
  // come first, and the "nobody answers" result is refined by what did answer.
  const WriteTarget target{r.key_matches ? r.nic : nullptr, r.key_matches ? r.pd : 0, RemoteWindow{}};
  *plan = WritePlan{};
  *segments = 0;
  const uint8_t syndrome =
      refine_dc_syndrome(check_write_to(qp, ring, local, target, start, ds, 1 + address.av_ds, plan, segments), r);
  *target_nic = r.nic;
  *target_dct = r.dct;
  return syndrome;
}

// One DC WRITE executed alone. Under a timing profile this is the one-at-a-time reference
// (service_qp, and a WQE the DC batch does not take: a gather, a NOP first): it waits the
// modelled latency in the caller. The parallel engines run DC WRITEs under a profile in batches
// (dc_batch.h), one modelled wait per batch.
DISSECT_HD inline uint8_t execute_dc_write(QpContext& qp, const NicTables& local, uint64_t start,
                                           const mlx5::mlx5_wqe_ctrl_seg& ctrl, uint32_t ds,
                                           uint64_t* bytes) {
  WritePlan plan{};
  uint32_t segments = 0;
  NicTables* nic = nullptr;
  DctContext* dct = nullptr;
  const uint8_t syndrome = check_dc_write(qp, qp.sq, local, start, ctrl, ds, &plan, &segments, &nic, &dct);
  if (syndrome != 0) return syndrome;
  const bool paced = local.profile.enabled != 0;
  uint64_t data_ready = 0;
  if (paced) {
    // The profile's latency, the DC connect and the pipe claims (dc_timing.h); `local` is this
    // engine's own table, written only through the counters and the pipe (atomics).
    const DcPaceTarget target{nic, dct, dct->dctn, dc_connection_tag(nic->nic_id, dct->dctn)};
    data_ready = pace_dc_write(local.profile, pipe_rates(local.profile), const_cast<NicTables&>(local), qp,
                               start, mlx5::wqebbs_for_ds(ds), target, plan.source != nullptr, plan.length);
    wait_until(data_ready);
  }
  perform_gather_write(qp, start, ds, plan, segments);
  if (paced) wait_until(cqe_release_ns(local.profile, data_ready));  // the CQE after the ack
  // Atomic: DCIs served by different engine warps or threads may write through one DCT.
  add_relaxed<TABLE_SCOPE>(&dct->rx_bytes, plan.length);
  add_relaxed<TABLE_SCOPE>(&dct->rx_packets, uint64_t{1});
  *bytes = plan.length;
  return 0;
}

DISSECT_HD inline WqeOutcome execute_wqe(QpContext& qp, const NicTables& local) {
  using namespace mlx5;
  const uint64_t start = qp.sq_consumer;
  const mlx5_wqe_ctrl_seg ctrl = *reinterpret_cast<const mlx5_wqe_ctrl_seg*>(qp.sq.wqebb(start));
  WqeOutcome outcome{0, ctrl_opcode(ctrl), ctrl_signaled(ctrl), 1, 0};
  const uint32_t ds = ctrl_ds(ctrl);
  // A ctrl segment is usable only when it names this WQE and every WQEBB its ds spans was
  // announced: WQEBBs beyond the doorbell may not be written yet, and consuming them would skip
  // the WQEs the next doorbell announces there.
  const bool usable = ctrl_wqe_index(ctrl) == static_cast<uint16_t>(start) &&
                      ctrl_qpn(ctrl) == qp.qpn && ds != 0 &&
                      start + wqebbs_for_ds(ds) <= qp.sq_target;
  if (usable) outcome.wqebbs = wqebbs_for_ds(ds);
  // The state first: a QP in error flushes every WQE, whatever its ctrl segment holds.
  if (qp.state == QP_STATE_ERROR) {
    outcome.syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
    return outcome;
  }
  if (!usable) {
    outcome.syndrome = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    return outcome;
  }
  if (qp.transport == QP_TRANSPORT_DCI && outcome.opcode != MLX5_OPCODE_NOP) {
    outcome.syndrome = execute_dc_write(qp, local, start, ctrl, ds, &outcome.bytes);
    return outcome;
  }
  switch (outcome.opcode) {
    case MLX5_OPCODE_NOP:
      break;
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
      outcome.syndrome = execute_write(qp, local, start, ctrl, ds, &outcome.bytes);
      break;
    case MLX5_OPCODE_ATOMIC_FA:
      outcome.syndrome = execute_fetch_add(qp, local, start, ds, &outcome.bytes);
      break;
    default:
      outcome.syndrome = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
  }
  return outcome;
}

// Reads the doorbell register and raises `qp.sq_target` to the WQEBB index it announces, widened
// against the consumer. A doorbell naming another QP, or an index more than a ring ahead, is
// counted and ignored. `S`: the scope of the submitters that ring it (the GPU for a doorbell in GPU
// memory rung by kernels on the engine's GPU; the system for mapped host memory).
DISSECT_HD inline void note_doorbell(QpContext& qp, uint64_t doorbell) {
  if (doorbell == qp.last_doorbell) return;
  qp.last_doorbell = doorbell;
  ++qp.counters.doorbells;
  const uint16_t distance = static_cast<uint16_t>(mlx5::doorbell_wqe_index(doorbell) -
                                                  static_cast<uint16_t>(qp.sq_consumer));
  if (mlx5::doorbell_qpn(doorbell) != qp.qpn || distance > qp.sq.wqebb_count) {
    ++qp.counters.bad_doorbells;
    return;
  }
  const uint64_t announced = qp.sq_consumer + distance;
  if (announced > qp.sq_target) qp.sq_target = announced;
}

template <Scope S = Scope::system>
DISSECT_HD inline void read_doorbell(QpContext& qp) {
  note_doorbell(qp, load_acquire<S>(qp.doorbell));
}

// Executes the WQE at the consumer index and retires it: consumer index, counters, the CQE when it
// is signalled or failed, and the error state after a failure. Returns the WQE's syndrome (0: it
// succeeded).
DISSECT_HD inline uint8_t execute_and_retire(QpContext& qp, const NicTables& local) {
  const uint64_t start = qp.sq_consumer;
  const WqeOutcome outcome = execute_wqe(qp, local);
  qp.sq_consumer += outcome.wqebbs;
  ++qp.counters.wqes_executed;
  if (outcome.syndrome == 0) {
    qp.counters.tx_bytes += outcome.bytes;
    ++qp.counters.tx_packets;
    if (outcome.signaled) complete_requester(qp, start, outcome);
  } else {
    qp.state = QP_STATE_ERROR;
    complete_requester(qp, start, outcome);
  }
  return outcome.syndrome;
}

// Consumes up to `budget` WQEs rung on `qp`, one at a time; returns how many it executed. The
// parallel engines execute windows of WQEs instead (src/softnic/engine/window.h), with the same
// outcome.
DISSECT_HD inline uint32_t service_qp(QpContext& qp, const NicTables& local, uint32_t budget) {
  if (load_acquire<Scope::system>(&qp.state) == QP_STATE_RESET) return 0;
  read_doorbell(qp);
  uint32_t executed = 0;
  while (qp.sq_consumer < qp.sq_target && executed < budget) {
    execute_and_retire(qp, local);
    ++executed;
  }
  return executed;
}

}  // namespace dissect::softnic
