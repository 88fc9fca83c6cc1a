// Test support: raw WQE builders for driving the NIC model directly (no mini-gda handle), on the
// host or the device. Each writes whole segments through the ring (send_ring::segment), so a WQE
// that straddles the ring end wraps as the hardware reads it. Every field is a parameter, valid or
// not: the fuzzer (nic_model_fuzz.h) and the regression tests build hostile WQEs with them.
#pragma once

#include <cstdint>

#include "dissect/mlx5/ring.h"
#include "dissect/mlx5/wqe.h"

namespace dissect::testing {

struct CtrlFields {
  uint16_t wqe_index;
  uint8_t opcode;
  uint32_t qpn;
  uint8_t ds;
  bool signaled;
  uint32_t immediate_be;  // raw big-endian immediate (WRITE WITH IMM)
};

DISSECT_HD inline void put_ctrl(const mlx5::send_ring& ring, uint64_t start, const CtrlFields& c) {
  auto* seg = reinterpret_cast<mlx5::mlx5_wqe_ctrl_seg*>(ring.segment(start, 0));
  mlx5::set_ctrl_seg(seg, c.wqe_index, c.opcode, 0, c.qpn,
                     c.signaled ? mlx5::MLX5_WQE_CTRL_CQ_UPDATE : 0, c.ds, 0,
                     mlx5::be32::from_raw(c.immediate_be));
}

DISSECT_HD inline void put_raddr(const mlx5::send_ring& ring, uint64_t start, uint32_t ds_offset,
                                 uint64_t remote_address, uint32_t rkey) {
  mlx5::set_raddr_seg(reinterpret_cast<mlx5::mlx5_wqe_raddr_seg*>(ring.segment(start, ds_offset)),
                      remote_address, rkey);
}

// `byte_count` raw: bit 31 set makes it (wrongly, for a gather) an inline header.
DISSECT_HD inline void put_data(const mlx5::send_ring& ring, uint64_t start, uint32_t ds_offset,
                                uint32_t byte_count, uint32_t lkey, uint64_t address) {
  mlx5::set_data_seg(reinterpret_cast<mlx5::mlx5_wqe_data_seg*>(ring.segment(start, ds_offset)),
                     byte_count, lkey, address);
}

DISSECT_HD inline void put_atomic(const mlx5::send_ring& ring, uint64_t start, uint32_t ds_offset,
                                  uint64_t addend) {
  mlx5::set_atomic_fetch_add_seg(
      reinterpret_cast<mlx5::mlx5_wqe_atomic_seg*>(ring.segment(start, ds_offset)), addend);
}

// Inline header `header` (raw byte_count, normally length | MLX5_INLINE_SEG) at segment 2, then
// `length` payload bytes after it.
DISSECT_HD inline void put_inline(const mlx5::send_ring& ring, uint64_t start, uint32_t header,
                                  const uint8_t* payload, uint32_t length) {
  const mlx5::be32 h = mlx5::be32::from_host(header);
  mlx5::copy_into_wqe(ring, start, 2 * mlx5::MLX5_SEND_WQE_DS, &h, 4);
  mlx5::copy_into_wqe(ring, start, 2 * mlx5::MLX5_SEND_WQE_DS + 4, payload, length);
}

// A valid RDMA WRITE of one gather segment (ds 3).
DISSECT_HD inline void put_write(const mlx5::send_ring& ring, uint64_t start, uint32_t qpn,
                                 uint64_t local_address, uint32_t lkey, uint32_t length,
                                 uint64_t remote_address, uint32_t rkey, bool signaled = true) {
  put_ctrl(ring, start, {static_cast<uint16_t>(start), mlx5::MLX5_OPCODE_RDMA_WRITE, qpn,
                         mlx5::RC_WRITE_DS, signaled, 0});
  put_raddr(ring, start, 1, remote_address, rkey);
  put_data(ring, start, 2, length, lkey, local_address);
}

// A valid 8-byte FETCH_ADD (ds 4): ctrl, raddr, atomic, result data segment.
DISSECT_HD inline void put_fetch_add(const mlx5::send_ring& ring, uint64_t start, uint32_t qpn,
                                     uint64_t remote_address, uint32_t rkey, uint64_t addend,
                                     uint64_t result_address, uint32_t lkey, bool signaled = true) {
  put_ctrl(ring, start, {static_cast<uint16_t>(start), mlx5::MLX5_OPCODE_ATOMIC_FA, qpn,
                         mlx5::RC_FETCH_ADD_DS, signaled, 0});
  put_raddr(ring, start, 1, remote_address, rkey);
  put_atomic(ring, start, 2, addend);
  put_data(ring, start, 3, 8, lkey, result_address);
}

DISSECT_HD inline void put_nop(const mlx5::send_ring& ring, uint64_t start, uint32_t qpn, uint8_t ds,
                               bool signaled = true) {
  put_ctrl(ring, start, {static_cast<uint16_t>(start), mlx5::MLX5_OPCODE_NOP, qpn, ds, signaled, 0});
}

}  // namespace dissect::testing
