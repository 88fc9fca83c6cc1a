// Building mini-gda's WQEs in the send ring: RDMA WRITE with a pointer or an inline payload, WRITE
// WITH IMMEDIATE, 8-byte FETCH_ADD and NOP (a DCI's DC WRITE: gda/dc_wqe.h). Each builder writes
// whole 16-byte segments addressed through the ring, so a WQE that straddles the end of the ring
// wraps to slot 0 segment by segment.
//
// Caller: the thread that reserved `index` (gda/submit.h). Nothing here orders, publishes or
// counts: each builder returns what it wrote (PostNote), which a submit path whose policy counts
// telemetry hands to note_post (nic/telemetry_policy.h), so each WQE is counted once whichever path
// built it: mini-gda's put*() or a proxy worker.
#pragma once

#include <cstdint>
#include <cstring>

#include "dissect/gda/ordering.h"
#include "dissect/mlx5/ring.h"
#include "dissect/mlx5/wqe.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

struct WriteRequest {
  uint64_t local_address;
  uint32_t lkey;
  uint32_t length;
  uint64_t remote_address;
  uint32_t rkey;
};

struct InlineWriteRequest {
  const void* payload;
  uint32_t length;  // at most QpHandle::max_inline
  uint64_t remote_address;
  uint32_t rkey;
};

struct FetchAddRequest {
  uint64_t remote_address;  // 8-byte aligned
  uint32_t rkey;
  uint64_t addend;
  uint64_t result_address;  // receives the value before the add
  uint32_t result_lkey;
};

// Whether the NIC writes a CQE for this WQE. An unsignalled WQE is retired by the next CQE.
enum class Completion : uint8_t { unsignaled = 0, signaled = mlx5::MLX5_WQE_CTRL_CQ_UPDATE };

// Sixteen payload bytes as four 32-bit words in memory order (a uint4 that exists on the host too).
struct PayloadBlock {
  uint32_t w[4];
};

// One 16-byte segment, built in registers and stored at once (st.v4 on the device).
struct alignas(16) Segment {
  uint8_t bytes[16];
};

DISSECT_HD inline void store_segment(uint8_t* destination, const Segment& segment) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<int4*>(destination) = *reinterpret_cast<const int4*>(&segment);
#else
  std::memcpy(destination, &segment, sizeof segment);
#endif
}

template <typename T>
DISSECT_HD inline Segment as_segment(const T& value) {
  static_assert(sizeof(T) == 16, "a WQE segment is 16 bytes");
  Segment s;
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<int4*>(&s) = *reinterpret_cast<const int4*>(&value);
#else
  std::memcpy(&s, &value, sizeof s);
#endif
  return s;
}

DISSECT_HD inline void write_ctrl(const nic::QpHandle& qp, uint64_t index, uint8_t opcode,
                                  uint32_t ds, Completion completion, mlx5::be32 immediate) {
  mlx5::mlx5_wqe_ctrl_seg ctrl;
  mlx5::set_ctrl_seg(&ctrl, static_cast<uint16_t>(index), opcode, 0, qp.qpn,
                     static_cast<uint8_t>(completion), static_cast<uint8_t>(ds), 0, immediate);
  store_segment(qp.sq.segment(index, 0), as_segment(ctrl));
}

DISSECT_HD inline void write_raddr(const nic::QpHandle& qp, uint64_t index, uint64_t address,
                                   uint32_t rkey) {
  mlx5::mlx5_wqe_raddr_seg raddr;
  mlx5::set_raddr_seg(&raddr, address, rkey);
  store_segment(qp.sq.segment(index, 1), as_segment(raddr));
}

DISSECT_HD inline void write_data(const nic::QpHandle& qp, uint64_t index, uint32_t ds_offset,
                                  uint32_t length, uint32_t lkey, uint64_t address) {
  mlx5::mlx5_wqe_data_seg data;
  mlx5::set_data_seg(&data, length, lkey, address);
  store_segment(qp.sq.segment(index, ds_offset), as_segment(data));
}

// WQEBBs each kind of WQE takes.
DISSECT_HD constexpr uint32_t write_wqebbs() { return 1; }
DISSECT_HD constexpr uint32_t inline_write_wqebbs(uint32_t length) {
  return mlx5::wqebbs_for_ds(mlx5::rc_write_inline_ds(length));
}
DISSECT_HD constexpr uint32_t fetch_add_wqebbs() { return 1; }

DISSECT_HD inline PostNote write_rdma_write_wqe(const nic::QpHandle& qp, uint64_t index,
                                            const WriteRequest& r, Completion completion) {
  write_raddr(qp, index, r.remote_address, r.rkey);
  write_data(qp, index, 2, r.length, r.lkey, r.local_address);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_RDMA_WRITE, mlx5::RC_WRITE_DS, completion,
             mlx5::be32{0});
  return PostNote{r.length, mlx5::MLX5_OPCODE_RDMA_WRITE, mlx5::RC_WRITE_DS};
}

// `immediate` is delivered to the responder's receive CQE as given (big-endian, as verbs defines
// imm_data).
DISSECT_HD inline PostNote write_rdma_write_imm_wqe(const nic::QpHandle& qp, uint64_t index,
                                                const WriteRequest& r, mlx5::be32 immediate,
                                                Completion completion) {
  write_raddr(qp, index, r.remote_address, r.rkey);
  write_data(qp, index, 2, r.length, r.lkey, r.local_address);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_RDMA_WRITE_IMM, mlx5::RC_WRITE_DS, completion, immediate);
  return PostNote{r.length, mlx5::MLX5_OPCODE_RDMA_WRITE_IMM, mlx5::RC_WRITE_DS};
}

// Four payload bytes starting at `at` (zero past `length`), in memory order. A 4-byte-aligned
// payload is read a word at a time: building an inline WQE then costs one load per 4 bytes.
DISSECT_HD inline uint32_t payload_word(const uint8_t* in, uint32_t at, uint32_t length,
                                        bool aligned) {
  if (aligned && at + 4 <= length) {
#if defined(__CUDA_ARCH__)
    return *reinterpret_cast<const uint32_t*>(in + at);
#else
    uint32_t word;  // memcpy: the payload may be any type, and one 4-byte load is what it compiles to
    std::memcpy(&word, in + at, sizeof word);
    return word;
#endif
  }
  uint32_t word = 0;
  for (uint32_t k = 0; k < 4 && at + k < length; ++k) word |= uint32_t{in[at + k]} << (8 * k);
  return word;
}

// Payload bytes [16 block, 16 block + 16) as four words in memory order, zero past `length`:
// padding the NIC ignores, zeroed so that a WQE is deterministic.
DISSECT_HD inline PayloadBlock load_payload_block(const uint8_t* in, uint32_t block, uint32_t length,
                                                  bool aligned4) {
  PayloadBlock out{};
  const uint32_t first = 16 * block;
  for (uint32_t k = 0; k < 4; ++k) out.w[k] = payload_word(in, first + 4 * k, length, aligned4);
  return out;
}

// The inline segment: a BE32 header (length | MLX5_INLINE_SEG) and the payload, padded to 16 B.
// Chunk 0 holds the header and payload bytes 0..11; chunk c > 0 the last word of payload block
// c - 1 and the first three of block c.
//
// The general path loads a group of 16 blocks (256 B) before storing their chunks. A 16-byte-
// aligned payload of up to 223 B (13 whole blocks and a partial one: Figure 3a's 220 B, the
// default max_inline) is held in registers whole: 13 blocks, not 15, because at 15 the gpu-rate
// kernels with telemetry counted took up to 35 registers more (ptxas -v, sm_90).
inline constexpr uint32_t INLINE_LOAD_GROUP = 16;
inline constexpr uint32_t INLINE_REGISTER_BLOCKS = 13;
inline constexpr uint32_t INLINE_REGISTER_MAX = 16 * INLINE_REGISTER_BLOCKS + 15;

// Four words in memory order as one segment (built in registers: st.v4 on the device).
DISSECT_HD inline Segment chunk_of(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  Segment s;
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<int4*>(&s) = make_int4(static_cast<int>(w0), static_cast<int>(w1),
                                           static_cast<int>(w2), static_cast<int>(w3));
#else
  const uint32_t words[4] = {w0, w1, w2, w3};
  std::memcpy(&s, words, sizeof s);
#endif
  return s;
}

// Chunk `c` of the segment, addressed through the ring (it may wrap to slot 0).
DISSECT_HD inline void store_inline_chunk(const nic::QpHandle& qp, uint64_t index, uint32_t c,
                                          const uint32_t (&words)[4]) {
  store_segment(qp.sq.segment(index, 2 + c), chunk_of(words[0], words[1], words[2], words[3]));
}

// Payload block `block` of a 16-byte-aligned payload: one 16-byte load (ld.v4 on the device).
DISSECT_HD inline PayloadBlock load_aligned_block(const uint8_t* in, uint32_t block) {
  PayloadBlock b;
#if defined(__CUDA_ARCH__)
  const uint4 v = reinterpret_cast<const uint4*>(in)[block];
  b = PayloadBlock{{v.x, v.y, v.z, v.w}};
#else
  std::memcpy(&b, in + 16 * size_t{block}, sizeof b);
#endif
  return b;
}

// The 4 and 2 bytes at `p`, aligned to their size, in memory order.
DISSECT_HD inline uint32_t load_word(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}
DISSECT_HD inline uint32_t load_half(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const uint16_t*>(p);
#else
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

// Payload block `block` of a 4-byte-aligned payload: four independent 4-byte loads.
DISSECT_HD inline PayloadBlock load_word_block(const uint8_t* in, uint32_t block) {
  const uint8_t* p = in + 16 * size_t{block};
  return PayloadBlock{{load_word(p), load_word(p + 4), load_word(p + 8), load_word(p + 12)}};
}

// The last `rest` (0..15) bytes of a payload, at `p` (4-byte aligned at least), as a block
// zero past them: whole words by 4-byte loads, the bytes after them by a 2- and a 1-byte load, no
// byte past the payload read (a 16 B load reads up to 15: ASan in the CPU tier checks). Each load
// is predicated, none behind a branch, all independent of each other.
DISSECT_HD inline PayloadBlock load_tail_block(const uint8_t* p, uint32_t rest) {
  const uint32_t words = rest / 4, bytes = rest % 4;
  uint32_t w[4] = {0, 0, 0, 0};
  DISSECT_UNROLL
  for (uint32_t k = 0; k < 3; ++k) w[k] = k < words ? load_word(p + 4 * k) : 0u;
  const uint8_t* q = p + 4 * words;
  const uint32_t half = bytes >= 2 ? load_half(q) : 0u;
  const uint32_t byte = (bytes & 1) != 0 ? uint32_t{q[bytes & 2]} << (8 * (bytes & 2)) : 0u;
  PayloadBlock t;
  DISSECT_UNROLL
  for (uint32_t k = 0; k < 4; ++k) t.w[k] = k < words ? w[k] : k == words ? (half | byte) : 0u;
  return t;
}

// The segment of a payload aligned to `Alignment` (16, or 4: each block then four word loads) of
// at most INLINE_REGISTER_MAX bytes at `out`,
// contiguous (it does not wrap the ring). Every load is issued, predicated, before any store: one
// round trip for the whole payload (a chunk needs the last word of the block before it; loads
// behind a branch each waited: 0.19 us per 16 B on the H200). Then each chunk below the partial
// block is one predicated 16 B store at a constant offset from `out`: no ring address and no
// branch per chunk (24daf5c: 16 SASS instructions a chunk, each addressed through the ring behind
// its own branch). The chunk holding the partial block (and the one after it when that block has
// 13-15 bytes) is stored at its run-time index from the tail's loads and a word load of the word
// before it, so no register is picked by a run-time index.
template <uint32_t Alignment>
DISSECT_HD inline void write_inline_contiguous(uint8_t* out, const uint8_t* in, uint32_t length) {
  static_assert(Alignment == 16 || Alignment == 4, "a block is one 16 B load or four word loads");
  constexpr uint32_t BLOCKS = INLINE_REGISTER_BLOCKS;
  const uint32_t full = length / 16, rest = length % 16;
  const uint32_t header = mlx5::be32::from_host(length | mlx5::MLX5_INLINE_SEG).raw;
  PayloadBlock raw[BLOCKS];
  DISSECT_UNROLL
  for (uint32_t k = 0; k < BLOCKS; ++k) {
    if (k < full) raw[k] = Alignment == 16 ? load_aligned_block(in, k) : load_word_block(in, k);
  }
  const uint8_t* last = in + 16 * full;
  const PayloadBlock tail = load_tail_block(last, rest);
  const uint32_t before = full == 0 ? header : load_word(last - 4);
  DISSECT_UNROLL
  for (uint32_t c = 0; c < BLOCKS; ++c) {
    if (c < full) {
      store_segment(out + 16 * c, chunk_of(c == 0 ? header : raw[c - 1].w[3], raw[c].w[0],
                                           raw[c].w[1], raw[c].w[2]));
    }
  }
  store_segment(out + 16 * full, chunk_of(before, tail.w[0], tail.w[1], tail.w[2]));
  if (rest > 12) store_segment(out + 16 * (full + 1), chunk_of(tail.w[3], 0, 0, 0));
}

// Any payload, any length, wrapping the ring or not: `load_block(b)` returns payload block b zero
// past the payload. A group's blocks are loaded before any is stored; not unrolled (the group in
// local memory), so kernels that post inline stay their size: the path of unaligned payloads and
// of a WQE that straddles the end of the ring.
template <typename LoadBlock>
DISSECT_HD inline void write_inline_blocks(const nic::QpHandle& qp, uint64_t index, uint32_t length,
                                           LoadBlock load_block) {
  const uint32_t chunks = mlx5::inline_ds(length);
  const uint32_t blocks = (length + 15) / 16;
  uint32_t carry = mlx5::be32::from_host(length | mlx5::MLX5_INLINE_SEG).raw;
  for (uint32_t group = 0; group < chunks; group += INLINE_LOAD_GROUP) {
    PayloadBlock raw[INLINE_LOAD_GROUP];
    DISSECT_UNROLL_BY(1)
    for (uint32_t k = 0; k < INLINE_LOAD_GROUP; ++k) {
      raw[k] = group + k < blocks ? load_block(group + k) : PayloadBlock{};
    }
    DISSECT_UNROLL_BY(1)
    for (uint32_t k = 0; k < INLINE_LOAD_GROUP && group + k < chunks; ++k) {
      const uint32_t w[4] = {carry, raw[k].w[0], raw[k].w[1], raw[k].w[2]};
      store_inline_chunk(qp, index, group + k, w);
      carry = raw[k].w[3];
    }
  }
}

// A 16- or 4-byte-aligned payload of at most INLINE_REGISTER_MAX bytes whose segment does not wrap
// the ring (its last chunk, segment 1 + chunks, lies in WQEBB slot + (1 + chunks) / 4) takes
// write_inline_contiguous: one ring address for the segment, every load issued before any store
// (from a 4-byte-aligned source the general path's word loads each waited: 0.18 us per 16 B on the
// H200, against 0.003 for the register copy). Any other payload goes chunk by chunk through the
// ring, loaded by words where 4-byte aligned, else bytes.
DISSECT_HD inline void write_inline_payload(const nic::QpHandle& qp, uint64_t index,
                                            const void* payload, uint32_t length) {
  const uint8_t* in = static_cast<const uint8_t*>(payload);
  const uintptr_t address = reinterpret_cast<uintptr_t>(in);
  const uint32_t chunks = mlx5::inline_ds(length);
  const uint64_t slot = index & qp.sq.mask();
  const bool aligned4 = (address & 3) == 0;
  if (aligned4 && length <= INLINE_REGISTER_MAX &&
      slot + (1 + chunks) / mlx5::MLX5_DS_PER_WQEBB < qp.sq.wqebb_count) {
    if ((address & 15) == 0) {
      write_inline_contiguous<16>(qp.sq.segment(index, 2), in, length);
    } else {
      write_inline_contiguous<4>(qp.sq.segment(index, 2), in, length);
    }
    return;
  }
  write_inline_blocks(qp, index, length,
                      [=](uint32_t b) { return load_payload_block(in, b, length, aligned4); });
}

DISSECT_HD inline PostNote write_rdma_write_inline_wqe(const nic::QpHandle& qp, uint64_t index,
                                                   const InlineWriteRequest& r,
                                                   Completion completion) {
  write_raddr(qp, index, r.remote_address, r.rkey);
  write_inline_payload(qp, index, r.payload, r.length);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_RDMA_WRITE, mlx5::rc_write_inline_ds(r.length),
             completion, mlx5::be32{0});
  return PostNote{r.length, mlx5::MLX5_OPCODE_RDMA_WRITE, mlx5::rc_write_inline_ds(r.length)};
}

// The inline segment of `length` (1..8) bytes held in `value` (memory order): the header and the
// payload fit one 16 B chunk. Bytes past `length` are padding the NIC ignores; zeroing them keeps
// the WQE deterministic.
DISSECT_HD inline Segment inline_value_segment(uint64_t value, uint32_t length) {
  const uint64_t kept = length >= 8 ? value : value & ((uint64_t{1} << (8 * length)) - 1);
  const uint32_t header = mlx5::be32::from_host(length | mlx5::MLX5_INLINE_SEG).raw;
  Segment s;
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<int4*>(&s) = make_int4(static_cast<int>(header), static_cast<int>(kept),
                                           static_cast<int>(kept >> 32), 0);
#else
  const uint32_t words[4] = {header, static_cast<uint32_t>(kept),
                             static_cast<uint32_t>(kept >> 32), 0};
  std::memcpy(&s, words, sizeof s);
#endif
  return s;
}

// An inline WRITE of `length` (1..8) bytes held in a register, in memory order of `value` (both
// the GPU and x86 are little-endian): the header and the payload fit the first inline chunk.
DISSECT_HD inline PostNote write_rdma_write_value_wqe(const nic::QpHandle& qp, uint64_t index,
                                                  uint64_t value, uint32_t length,
                                                  uint64_t remote_address, uint32_t rkey,
                                                  Completion completion) {
  write_raddr(qp, index, remote_address, rkey);
  const Segment s = inline_value_segment(value, length);
  store_segment(qp.sq.segment(index, 2), s);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_RDMA_WRITE, mlx5::rc_write_inline_ds(length), completion,
             mlx5::be32{0});
  return PostNote{length, mlx5::MLX5_OPCODE_RDMA_WRITE, mlx5::rc_write_inline_ds(length)};
}

DISSECT_HD inline PostNote write_fetch_add_wqe(const nic::QpHandle& qp, uint64_t index,
                                           const FetchAddRequest& r, Completion completion) {
  write_raddr(qp, index, r.remote_address, r.rkey);
  mlx5::mlx5_wqe_atomic_seg atomic;
  mlx5::set_atomic_fetch_add_seg(&atomic, r.addend);
  store_segment(qp.sq.segment(index, 2), as_segment(atomic));
  write_data(qp, index, 3, 8, r.result_lkey, r.result_address);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_ATOMIC_FA, mlx5::RC_FETCH_ADD_DS, completion,
             mlx5::be32{0});
  return PostNote{8, mlx5::MLX5_OPCODE_ATOMIC_FA, mlx5::RC_FETCH_ADD_DS};
}

DISSECT_HD inline PostNote write_nop_wqe(const nic::QpHandle& qp, uint64_t index,
                                     Completion completion) {
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_NOP, 1, completion, mlx5::be32{0});
  return PostNote{0, mlx5::MLX5_OPCODE_NOP, 1};
}

}  // namespace dissect::gda
