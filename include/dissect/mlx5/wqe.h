// mlx5 send WQE segments, named as rdma-core's mlx5dv.h names them.
//
// A send WQE is a run of 16-byte segments ("DS") starting with the control segment; it occupies
// ceil(ds / 4) 64-byte basic blocks (WQEBBs) of the send-queue ring. Every multi-byte field is
// big-endian; inline payload bytes are copied raw. Layouts: docs/mlx5_sources.md §1, PRM "Send WQE".
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "dissect/mlx5/endian.h"

namespace dissect::mlx5 {

inline constexpr uint32_t MLX5_SEND_WQE_BB = 64;    // bytes per basic block
inline constexpr uint32_t MLX5_SEND_WQE_SHIFT = 6;  // log2(MLX5_SEND_WQE_BB)
inline constexpr uint32_t MLX5_SEND_WQE_DS = 16;    // bytes per data segment unit
inline constexpr uint32_t MLX5_DS_PER_WQEBB = MLX5_SEND_WQE_BB / MLX5_SEND_WQE_DS;
inline constexpr uint32_t MLX5_MAX_DS = 0x3f;       // ds is a 6-bit field of qpn_ds
inline constexpr uint32_t MLX5_INLINE_SEG = 0x80000000u;  // inline flag in byte_count
inline constexpr uint32_t MLX5_INVALID_LKEY = 0x100;

// Opcodes: the low byte of opmod_idx_opcode (mlx5dv.h MLX5_OPCODE_*).
enum mlx5_opcode : uint8_t {
  MLX5_OPCODE_NOP = 0x00,
  MLX5_OPCODE_SEND_INVAL = 0x01,
  MLX5_OPCODE_RDMA_WRITE = 0x08,
  MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
  MLX5_OPCODE_SEND = 0x0a,
  MLX5_OPCODE_SEND_IMM = 0x0b,
  MLX5_OPCODE_RDMA_READ = 0x10,
  MLX5_OPCODE_ATOMIC_CS = 0x11,
  MLX5_OPCODE_ATOMIC_FA = 0x12,
};

// fm_ce_se byte (control segment offset 11): fence mode 7..5, completion mode 3..2, solicited 1.
enum mlx5_wqe_ctrl_flags : uint8_t {
  MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2,  // ce = 2: always write a CQE for this WQE
  MLX5_WQE_CTRL_SOLICITED = 1 << 1,
  MLX5_WQE_CTRL_FENCE = 4 << 5,
  MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5,
};
inline constexpr uint8_t MLX5_WQE_CTRL_CE_MASK = 3 << 2;

// 16 B. The first 8 bytes are also the doorbell value (doorbell.h).
struct __attribute__((packed, aligned(4))) mlx5_wqe_ctrl_seg {
  be32 opmod_idx_opcode;  // opmod 31..24 | wqe_index 23..8 (WQEBB counter, low 16) | opcode 7..0
  be32 qpn_ds;            // qpn 31..8 | ds 5..0 (WQE length in 16 B units, this segment included)
  uint8_t signature;
  be16 dci_stream_channel_id;
  uint8_t fm_ce_se;
  be32 imm;  // immediate for *_IMM opcodes, already big-endian as verbs defines imm_data
};

// 16 B, follows the control segment (or the address vector on DC).
struct mlx5_wqe_raddr_seg {
  be64 raddr;
  be32 rkey;
  be32 reserved;
};

// 16 B pointer (gather) segment. Bit 31 of byte_count must be clear: it is the inline flag.
struct mlx5_wqe_data_seg {
  be32 byte_count;
  be32 lkey;
  be64 addr;
};

// Inline header; the payload follows at +4, and header + payload pad to a multiple of 16 B.
struct mlx5_wqe_inl_data_seg {
  be32 byte_count;  // length | MLX5_INLINE_SEG
};

// 16 B, standard 8-byte atomics (opcodes ATOMIC_CS / ATOMIC_FA).
struct mlx5_wqe_atomic_seg {
  be64 swap_add;  // FA: the addend; CS: the swap value
  be64 compare;   // CS only
};

// DC address vector, full form (48 B). The compact form is its first 16 B with the extended bit
// clear in dqp_dct.
inline constexpr uint32_t MLX5_EXTENDED_UD_AV = 0x80000000u;
struct mlx5_wqe_av {
  be64 dc_key;
  be32 dqp_dct;  // MLX5_EXTENDED_UD_AV | DCT number (24 bits)
  uint8_t stat_rate_sl;
  uint8_t fl_mlid;
  be16 rlid;
  uint8_t reserved0[4];
  uint8_t rmac[6];
  uint8_t tclass;
  uint8_t hop_limit;
  be32 grh_gid_fl;
  uint8_t rgid[16];
};
struct mlx5_wqe_av_compact {
  be64 dc_key;
  be32 dqp_dct;
  uint8_t stat_rate_sl;
  uint8_t fl_mlid;
  be16 rlid;
};

static_assert(sizeof(mlx5_wqe_ctrl_seg) == 16);
static_assert(offsetof(mlx5_wqe_ctrl_seg, signature) == 8);
static_assert(offsetof(mlx5_wqe_ctrl_seg, dci_stream_channel_id) == 9);
static_assert(offsetof(mlx5_wqe_ctrl_seg, fm_ce_se) == 11);
static_assert(offsetof(mlx5_wqe_ctrl_seg, imm) == 12);
static_assert(sizeof(mlx5_wqe_raddr_seg) == 16);
static_assert(sizeof(mlx5_wqe_data_seg) == 16);
static_assert(sizeof(mlx5_wqe_inl_data_seg) == 4);
static_assert(sizeof(mlx5_wqe_atomic_seg) == 16);
static_assert(sizeof(mlx5_wqe_av) == 48);
static_assert(offsetof(mlx5_wqe_av, rmac) == 20);
static_assert(offsetof(mlx5_wqe_av, grh_gid_fl) == 28);
static_assert(offsetof(mlx5_wqe_av, rgid) == 32);
static_assert(sizeof(mlx5_wqe_av_compact) == 16);
static_assert(std::is_trivially_copyable_v<mlx5_wqe_ctrl_seg>);

// --- builders: same arguments and bytes as rdma-core's mlx5dv_set_ctrl_seg / _set_data_seg ---

// `wqe_index` is the WQEBB producer counter at this WQE's first basic block (low 16 bits kept).
DISSECT_HD inline void set_ctrl_seg(mlx5_wqe_ctrl_seg* seg, uint16_t wqe_index, uint8_t opcode,
                                    uint8_t opmod, uint32_t qpn, uint8_t fm_ce_se, uint8_t ds,
                                    uint8_t signature, be32 imm) {
  seg->opmod_idx_opcode = be32::from_host((static_cast<uint32_t>(opmod) << 24) |
                                          (static_cast<uint32_t>(wqe_index) << 8) | opcode);
  seg->qpn_ds = be32::from_host((qpn << 8) | ds);
  seg->signature = signature;
  seg->dci_stream_channel_id = be16{0};
  seg->fm_ce_se = fm_ce_se;
  seg->imm = imm;
}

DISSECT_HD inline void set_raddr_seg(mlx5_wqe_raddr_seg* seg, uint64_t remote_address,
                                     uint32_t rkey) {
  seg->raddr = be64::from_host(remote_address);
  seg->rkey = be32::from_host(rkey);
  seg->reserved = be32{0};
}

DISSECT_HD inline void set_data_seg(mlx5_wqe_data_seg* seg, uint32_t length, uint32_t lkey,
                                    uint64_t address) {
  seg->byte_count = be32::from_host(length);
  seg->lkey = be32::from_host(lkey);
  seg->addr = be64::from_host(address);
}

DISSECT_HD inline void set_atomic_fetch_add_seg(mlx5_wqe_atomic_seg* seg, uint64_t addend) {
  seg->swap_add = be64::from_host(addend);
  seg->compare = be64{0};
}

// DC address vector (DCI only; follows the control segment). Same bytes as rdma-core's
// mlx5_send_wr_set_dc_addr: the route (an address handle's AV, or one built on the host) copied
// whole, then the target DCT number with the extended-AV bit and the DCT's access key.
DISSECT_HD inline void set_dc_av_seg(mlx5_wqe_av* seg, const mlx5_wqe_av& route, uint32_t dctn,
                                     uint64_t dc_key) {
  *seg = route;
  seg->dqp_dct = be32::from_host((dctn & 0xffffff) | MLX5_EXTENDED_UD_AV);
  seg->dc_key = be64::from_host(dc_key);
}
// Compact form (16 B): the extended bit clear tells the NIC no GRH/MAC part follows; valid only
// for InfiniBand without a GRH and with hca_cap.compact_address_vector (docs/mlx5_sources.md §1.9).
DISSECT_HD inline void set_dc_av_compact_seg(mlx5_wqe_av_compact* seg,
                                             const mlx5_wqe_av_compact& route, uint32_t dctn,
                                             uint64_t dc_key) {
  *seg = route;
  seg->dqp_dct = be32::from_host(dctn & 0xffffff);
  seg->dc_key = be64::from_host(dc_key);
}

// --- field accessors ---
DISSECT_HD constexpr uint8_t ctrl_opcode(const mlx5_wqe_ctrl_seg& c) {
  return static_cast<uint8_t>(c.opmod_idx_opcode.value() & 0xff);
}
DISSECT_HD constexpr uint16_t ctrl_wqe_index(const mlx5_wqe_ctrl_seg& c) {
  return static_cast<uint16_t>((c.opmod_idx_opcode.value() >> 8) & 0xffff);
}
DISSECT_HD constexpr uint32_t ctrl_qpn(const mlx5_wqe_ctrl_seg& c) { return c.qpn_ds.value() >> 8; }
DISSECT_HD constexpr uint8_t ctrl_ds(const mlx5_wqe_ctrl_seg& c) {
  return static_cast<uint8_t>(c.qpn_ds.value() & MLX5_MAX_DS);
}
DISSECT_HD constexpr bool ctrl_signaled(const mlx5_wqe_ctrl_seg& c) {
  return (c.fm_ce_se & MLX5_WQE_CTRL_CE_MASK) == MLX5_WQE_CTRL_CQ_UPDATE;
}

// DS taken by an inline segment carrying `length` payload bytes (rdma-core set_data_inl_seg).
DISSECT_HD constexpr uint32_t inline_ds(uint32_t length) {
  return (static_cast<uint32_t>(sizeof(mlx5_wqe_inl_data_seg)) + length + MLX5_SEND_WQE_DS - 1) /
         MLX5_SEND_WQE_DS;
}
// WQEBBs taken by a WQE of `ds` data segments.
DISSECT_HD constexpr uint32_t wqebbs_for_ds(uint32_t ds) {
  return (ds + MLX5_DS_PER_WQEBB - 1) / MLX5_DS_PER_WQEBB;
}

// RC RDMA WRITE sizes in DS: ctrl + raddr + (data | inline).
inline constexpr uint32_t RC_WRITE_DS = 3;
DISSECT_HD constexpr uint32_t rc_write_inline_ds(uint32_t length) { return 2 + inline_ds(length); }
// RC fetch-add: ctrl + raddr + atomic + data = 4 DS = one WQEBB.
inline constexpr uint32_t RC_FETCH_ADD_DS = 4;
// Largest RC inline write payload that fits the 6-bit ds: 63 DS = 1008 B - 32 - 4.
inline constexpr uint32_t RC_MAX_INLINE_BY_DS = MLX5_MAX_DS * MLX5_SEND_WQE_DS - 32 - 4;

// DC RDMA WRITE sizes in DS: ctrl + AV (3 full, 1 compact) + raddr + data. The full form takes
// 96 B = two WQEBBs, the compact form one (docs/mlx5_sources.md §5.2).
inline constexpr uint32_t DC_AV_DS = sizeof(mlx5_wqe_av) / MLX5_SEND_WQE_DS;
inline constexpr uint32_t DC_AV_COMPACT_DS = sizeof(mlx5_wqe_av_compact) / MLX5_SEND_WQE_DS;
inline constexpr uint32_t DC_WRITE_DS = 1 + DC_AV_DS + 2;
inline constexpr uint32_t DC_WRITE_COMPACT_DS = 1 + DC_AV_COMPACT_DS + 2;
// A DC inline WRITE: ctrl + AV (`av_ds`) + raddr + inline segment.
DISSECT_HD constexpr uint32_t dc_write_inline_ds(uint32_t av_ds, uint32_t length) {
  return 2 + av_ds + inline_ds(length);
}
// Largest DC inline write payload that fits the 6-bit ds with the full AV: 63 DS - 80 - 4.
inline constexpr uint32_t DC_MAX_INLINE_BY_DS =
    MLX5_MAX_DS * MLX5_SEND_WQE_DS - (2 + DC_AV_DS) * MLX5_SEND_WQE_DS - 4;
static_assert(DC_WRITE_DS == 6 && wqebbs_for_ds(DC_WRITE_DS) == 2);
static_assert(dc_write_inline_ds(DC_AV_DS, DC_MAX_INLINE_BY_DS) == MLX5_MAX_DS);
static_assert(DC_WRITE_COMPACT_DS == 4 && wqebbs_for_ds(DC_WRITE_COMPACT_DS) == 1);

static_assert(rc_write_inline_ds(12) == 3 && rc_write_inline_ds(13) == 4 &&
              rc_write_inline_ds(28) == 4 && rc_write_inline_ds(29) == 5);
static_assert(wqebbs_for_ds(4) == 1 && wqebbs_for_ds(5) == 2);

}  // namespace dissect::mlx5
