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
// c - 1 and the first three of block c. Blocks are loaded a group at a time: 256 B cover 220 B.
inline constexpr uint32_t INLINE_LOAD_GROUP = 16;

// Chunk `c` of the segment, four words in memory order, stored at once (st.v4 on the device).
DISSECT_HD inline void store_inline_chunk(const nic::QpHandle& qp, uint64_t index, uint32_t c,
                                          const uint32_t (&words)[4]) {
  Segment s;
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<int4*>(&s) = make_int4(words[0], words[1], words[2], words[3]);
#else
  std::memcpy(&s, words, sizeof s);
#endif
  store_segment(qp.sq.segment(index, 2 + c), s);
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

// The segment from payload blocks 0 .. full - 1, which `load_block(b)` returns, and `tail`, the
// block after them (zero past `length`: padding the NIC ignores, zeroed so a WQE is deterministic).
// A group's blocks are loaded, predicated, before any is used: one round trip (loads behind a
// branch each waited: 0.19 us per 16 B on the H200). Then each chunk is one 16-byte store with no
// per-word work (a mask on every chunk was 68 SASS instructions a chunk: 0.12 us per 16 B).
// Unroll: the group, keeping `raw` in registers; 1 for a long loader.
template <uint32_t Unroll, typename LoadBlock>
DISSECT_HD inline void write_inline_blocks(const nic::QpHandle& qp, uint64_t index, uint32_t length,
                                           LoadBlock load_block, uint32_t full,
                                           const PayloadBlock& tail) {
  const uint32_t chunks = mlx5::inline_ds(length);
  uint32_t carry = mlx5::be32::from_host(length | mlx5::MLX5_INLINE_SEG).raw;
  for (uint32_t group = 0; group < chunks; group += INLINE_LOAD_GROUP) {
    PayloadBlock raw[INLINE_LOAD_GROUP];
    DISSECT_UNROLL_BY(Unroll)
    for (uint32_t k = 0; k < INLINE_LOAD_GROUP; ++k) {
      raw[k] = group + k < full ? load_block(group + k) : PayloadBlock{};
    }
    DISSECT_UNROLL_BY(Unroll)
    for (uint32_t k = 0; k < INLINE_LOAD_GROUP; ++k) {
      const PayloadBlock block = group + k == full ? tail : raw[k];
      if (group + k < chunks) {
        const uint32_t w[4] = {carry, block.w[0], block.w[1], block.w[2]};
        store_inline_chunk(qp, index, group + k, w);
      }
      carry = block.w[3];
    }
  }
}

// A 16-byte-aligned payload 16 B at a time but for a partial last block, loaded by words and bytes
// first (a 16 B load would read past the payload); any other by words where 4-byte aligned, else
// bytes.
DISSECT_HD inline void write_inline_payload(const nic::QpHandle& qp, uint64_t index,
                                            const void* payload, uint32_t length) {
  const uint8_t* in = static_cast<const uint8_t*>(payload);
  const uintptr_t address = reinterpret_cast<uintptr_t>(in);
  if ((address & 15) == 0) {
    const uint32_t full = length / 16;
    write_inline_blocks<INLINE_LOAD_GROUP>(
        qp, index, length, [in](uint32_t b) { return load_aligned_block(in, b); }, full,
        load_payload_block(in, full, length, true));
    return;
  }
  const bool aligned4 = (address & 3) == 0;
  write_inline_blocks<1>(
      qp, index, length, [=](uint32_t b) { return load_payload_block(in, b, length, aligned4); },
      (length + 15) / 16, PayloadBlock{});
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
