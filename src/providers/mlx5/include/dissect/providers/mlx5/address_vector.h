// DC address vectors (mlx5_wqe_av in dissect/mlx5/wqe.h) built from a plain description of the
// target, byte for byte as rdma-core builds them: mlx5_create_ah (verbs.c) fills the AV and
// mlx5_send_wr_set_dc_addr (qp.c) adds the DCT number, the extended-AV bit and the DC key.
// The compact 16-byte form is the first 16 bytes with the extended bit clear; NVSHMEM uses it only
// for InfiniBand without a GRH and when hca_cap.compact_address_vector is set (gda.md §1.9).
#pragma once

#include <cstring>
#include <stdexcept>

#include "dissect/mlx5/wqe.h"
#include "dissect/providers/mlx5/rc_connect.h"

namespace dissect::mlx5provider {

// RoCE v2 UDP source ports (verbs.h IB_ROCE_UDP_ENCAP_VALID_PORT_MIN/MAX).
inline constexpr uint16_t ROCE_UDP_SPORT_MIN = 0xC000;
inline constexpr uint32_t GRH_FLOW_LABEL_MASK = 0xFFFFF;

struct DcTarget {
  uint32_t dct_number = 0;  // 24 bits
  uint64_t dc_key = 0;
  LinkLayer link_layer = LinkLayer::infiniband;
  uint16_t lid = 0;          // InfiniBand
  uint8_t src_path_bits = 0; // InfiniBand, 7 bits
  bool use_grh = false;      // InfiniBand: route through a GRH; always true on Ethernet
  uint8_t gid[16] = {};
  uint8_t sgid_index = 0;
  uint8_t sl = 0;
  uint8_t static_rate = 0;   // mlx5 rate code (0 = port rate)
  uint8_t hop_limit = 255;
  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;
  uint8_t rmac[6] = {};      // Ethernet: the next hop's MAC (resolved by the kernel for an AH)
  uint16_t udp_sport = ROCE_UDP_SPORT_MIN;  // RoCE v2, used when flow_label is 0
};

// rdma-core verbs.h ibv_flow_label_to_udp_sport: fold the 20-bit flow label into 14 bits above the
// RoCE v2 port base, so one flow keeps one UDP source port (ECMP path).
constexpr uint16_t flow_label_to_udp_sport(uint32_t flow_label) {
  const uint32_t low = flow_label & 0x03FFF;
  const uint32_t high = flow_label & 0xFC000;
  return static_cast<uint16_t>((low ^ (high >> 14)) | ROCE_UDP_SPORT_MIN);
}

inline mlx5::mlx5_wqe_av build_full_av(const DcTarget& t) {
  using mlx5::be16;
  using mlx5::be32;
  mlx5::mlx5_wqe_av av;
  std::memset(&av, 0, sizeof(av));
  const bool ethernet = t.link_layer == LinkLayer::ethernet;
  uint32_t grh_bit = 0;
  if (ethernet) {
    // RoCE carries the UDP source port in rlid; grh stays 0 ("reserved for RoCE").
    const uint32_t fl = t.flow_label & GRH_FLOW_LABEL_MASK;
    av.rlid = be16::from_host(fl ? flow_label_to_udp_sport(fl) : t.udp_sport);
    av.stat_rate_sl = static_cast<uint8_t>((t.static_rate << 4) | ((t.sl & 0x7) << 1));
    std::memcpy(av.rmac, t.rmac, sizeof(av.rmac));
  } else {
    av.fl_mlid = t.src_path_bits & 0x7f;
    av.rlid = be16::from_host(t.lid);
    av.stat_rate_sl = static_cast<uint8_t>((t.static_rate << 4) | (t.sl & 0xf));
    grh_bit = 1;
  }
  if (ethernet || t.use_grh) {
    av.tclass = t.traffic_class;
    av.hop_limit = t.hop_limit;
    av.grh_gid_fl = be32::from_host((grh_bit << 30) | (static_cast<uint32_t>(t.sgid_index) << 20) |
                                    (t.flow_label & GRH_FLOW_LABEL_MASK));
    std::memcpy(av.rgid, t.gid, sizeof(av.rgid));
  }
  av.dqp_dct = be32::from_host((t.dct_number & 0xffffff) | mlx5::MLX5_EXTENDED_UD_AV);
  av.dc_key = mlx5::be64::from_host(t.dc_key);
  return av;
}

inline bool compact_av_possible(const DcTarget& t) {
  return t.link_layer == LinkLayer::infiniband && !t.use_grh;
}

// Throws std::invalid_argument when the target needs a GRH (the compact form has no room for it).
inline mlx5::mlx5_wqe_av_compact build_compact_av(const DcTarget& t) {
  if (!compact_av_possible(t)) {
    throw std::invalid_argument("compact DC address vector: target needs a GRH (RoCE or routed IB)");
  }
  const mlx5::mlx5_wqe_av full = build_full_av(t);
  mlx5::mlx5_wqe_av_compact av;
  std::memcpy(&av, &full, sizeof(av));
  av.dqp_dct = mlx5::be32::from_host(t.dct_number & 0xffffff);  // extended bit clear
  return av;
}

}  // namespace dissect::mlx5provider
