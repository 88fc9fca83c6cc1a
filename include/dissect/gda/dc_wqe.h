// Building DC WQEs in a DCI's send ring (nic::ProtectionDomain::create_dci): the DC RDMA WRITE,
// its address vector after the ctrl segment in the full or compact form, with a pointer or an
// inline payload. The segments and the rules of gda/wqe.h apply; DC only adds the AV.
#pragma once

#include <cstdint>

#include "dissect/gda/wqe.h"

namespace dissect::gda {

// --- DC (a DCI's send queue, nic::ProtectionDomain::create_dci) ---
//
// A DC WRITE is ctrl | AV | raddr | data (or inline): the AV, 48 B (AvForm::full: 3 DS, two
// WQEBBs for a pointer WRITE) or 16 B (AvForm::compact: 1 DS, one WQEBB), names the DCT this WQE
// alone goes to, so consecutive WQEs of one DCI may go to different DCTs. The compact form is
// valid on InfiniBand without a GRH with hca_cap.compact_address_vector (NVSHMEM's default);
// rdma-core always emits the full one (docs/mlx5_sources.md §1.9).

enum class AvForm : uint8_t { compact, full };

// Where DC WQEs go: the full AV, built once on the host from a nic::DctEndpoint (dc_destination)
// and passed by value to the device; the compact form is taken from its first 16 bytes.
// 16-byte aligned: write_av stores it as three 16-byte segments (st.v4 on the device).
struct alignas(16) DcDestination {
  mlx5::mlx5_wqe_av av;
};
static_assert(sizeof(DcDestination) == 48);

// The AV of DCT `dctn` with access key `dc_key` behind port `lid` (DctEndpoint's dctn, dc_key and
// lid): rlid set, no GRH, the extended bit set (set_dc_av_seg).
DISSECT_HD inline DcDestination dc_destination(uint32_t dctn, uint64_t dc_key, uint16_t lid) {
  mlx5::mlx5_wqe_av route{};
  route.rlid = mlx5::be16::from_host(lid);
  DcDestination d;
  mlx5::set_dc_av_seg(&d.av, route, dctn, dc_key);
  return d;
}

DISSECT_HD constexpr uint32_t av_ds(AvForm form) {
  return form == AvForm::full ? mlx5::DC_AV_DS : mlx5::DC_AV_COMPACT_DS;
}
DISSECT_HD constexpr uint32_t dc_write_ds(AvForm form) { return 3 + av_ds(form); }
DISSECT_HD constexpr uint32_t dc_write_wqebbs(AvForm form) {
  return mlx5::wqebbs_for_ds(dc_write_ds(form));
}
DISSECT_HD constexpr uint32_t dc_value_ds(AvForm form, uint32_t length) {
  return mlx5::dc_write_inline_ds(av_ds(form), length);
}
DISSECT_HD constexpr uint32_t dc_value_wqebbs(AvForm form, uint32_t length) {
  return mlx5::wqebbs_for_ds(dc_value_ds(form, length));
}
static_assert(dc_write_wqebbs(AvForm::full) == 2 && dc_write_wqebbs(AvForm::compact) == 1);
static_assert(dc_value_wqebbs(AvForm::compact, 8) == 1 && dc_value_wqebbs(AvForm::full, 8) == 2);

// The AV at DS 1..av_ds(form) of the WQE at `index`.
DISSECT_HD inline void write_av(const nic::QpHandle& qp, uint64_t index,
                                const DcDestination& destination, AvForm form) {
  if (form == AvForm::compact) {
    mlx5::mlx5_wqe_av_compact compact;
    mlx5::mlx5_wqe_av_compact route;
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<int4*>(&route) = *reinterpret_cast<const int4*>(&destination.av);
#else
    std::memcpy(&route, &destination.av, sizeof route);
#endif
    mlx5::set_dc_av_compact_seg(&compact, route, destination.av.dqp_dct.value() & 0xffffff,
                                destination.av.dc_key.value());
    store_segment(qp.sq.segment(index, 1), as_segment(compact));
    return;
  }
  const auto* parts = reinterpret_cast<const Segment*>(&destination.av);
  for (uint32_t k = 0; k < mlx5::DC_AV_DS; ++k) store_segment(qp.sq.segment(index, 1 + k), parts[k]);
}

DISSECT_HD inline void write_raddr_at(const nic::QpHandle& qp, uint64_t index, uint32_t ds_offset,
                                      uint64_t address, uint32_t rkey) {
  mlx5::mlx5_wqe_raddr_seg raddr;
  mlx5::set_raddr_seg(&raddr, address, rkey);
  store_segment(qp.sq.segment(index, ds_offset), as_segment(raddr));
}

// A DC RDMA WRITE with a pointer payload to `destination`.
DISSECT_HD inline PostNote write_dc_write_wqe(const nic::QpHandle& qp, uint64_t index,
                                          const DcDestination& destination, AvForm form,
                                          const WriteRequest& r, Completion completion) {
  const uint32_t at = 1 + av_ds(form);
  write_av(qp, index, destination, form);
  write_raddr_at(qp, index, at, r.remote_address, r.rkey);
  write_data(qp, index, at + 1, r.length, r.lkey, r.local_address);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_RDMA_WRITE, dc_write_ds(form), completion, mlx5::be32{0});
  return PostNote{r.length, mlx5::MLX5_OPCODE_RDMA_WRITE, dc_write_ds(form)};
}

// A DC inline WRITE of `length` (1..8) bytes held in a register (write_rdma_write_value_wqe's
// payload rule) to `destination`.
DISSECT_HD inline PostNote write_dc_write_value_wqe(const nic::QpHandle& qp, uint64_t index,
                                                const DcDestination& destination, AvForm form,
                                                uint64_t value, uint32_t length,
                                                uint64_t remote_address, uint32_t rkey,
                                                Completion completion) {
  const uint32_t at = 1 + av_ds(form);
  write_av(qp, index, destination, form);
  write_raddr_at(qp, index, at, remote_address, rkey);
  const Segment s = inline_value_segment(value, length);
  store_segment(qp.sq.segment(index, at + 1), s);
  write_ctrl(qp, index, mlx5::MLX5_OPCODE_RDMA_WRITE, dc_value_ds(form, length), completion,
             mlx5::be32{0});
  return PostNote{length, mlx5::MLX5_OPCODE_RDMA_WRITE, dc_value_ds(form, length)};
}

}  // namespace dissect::gda
