#include "dissect/providers/mlx5/qp_attr.h"

#include <cstring>

namespace dissect::mlx5provider {
namespace {

QpTransition zeroed() {
  QpTransition t;
  std::memset(&t.attr, 0, sizeof(t.attr));
  t.mask = 0;
  return t;
}

}  // namespace

QpTransition rc_reset_to_init(const RcConnectParams& p) {
  QpTransition t = zeroed();
  t.attr.qp_state = IBV_QPS_INIT;
  t.attr.pkey_index = p.pkey_index;
  t.attr.port_num = p.port_num;
  t.attr.qp_access_flags = static_cast<unsigned int>(p.access);
  t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  return t;
}

ibv_ah_attr rc_ah_attr(const RcConnectParams& p) {
  ibv_ah_attr ah;
  std::memset(&ah, 0, sizeof(ah));
  ah.port_num = p.port_num;
  ah.sl = p.sl;
  ah.src_path_bits = 0;
  // RoCE addresses by GID only; rdma-core's mlx5_create_ah refuses !is_global on Ethernet.
  const bool global = p.link_layer == LinkLayer::ethernet || p.use_grh;
  if (p.link_layer == LinkLayer::infiniband) ah.dlid = p.remote_lid;
  if (global) {
    ah.is_global = 1;
    std::memcpy(ah.grh.dgid.raw, p.remote_gid, sizeof(ah.grh.dgid.raw));
    ah.grh.sgid_index = p.sgid_index;
    ah.grh.hop_limit = p.hop_limit;
    ah.grh.traffic_class = p.traffic_class;
    ah.grh.flow_label = p.flow_label;
  }
  return ah;
}

QpTransition rc_init_to_rtr(const RcConnectParams& p) {
  QpTransition t = zeroed();
  t.attr.qp_state = IBV_QPS_RTR;
  t.attr.path_mtu = static_cast<ibv_mtu>(p.path_mtu);
  t.attr.dest_qp_num = p.remote_qpn;
  t.attr.rq_psn = p.rq_psn;
  t.attr.max_dest_rd_atomic = p.max_dest_rd_atomic;
  t.attr.min_rnr_timer = p.min_rnr_timer;
  t.attr.ah_attr = rc_ah_attr(p);
  t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return t;
}

QpTransition rc_rtr_to_rts(const RcConnectParams& p) {
  QpTransition t = zeroed();
  t.attr.qp_state = IBV_QPS_RTS;
  t.attr.sq_psn = p.sq_psn;
  t.attr.max_rd_atomic = p.max_rd_atomic;
  t.attr.retry_cnt = p.retry_cnt;
  t.attr.rnr_retry = p.rnr_retry;
  t.attr.timeout = p.timeout;
  t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
           IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT;
  return t;
}

}  // namespace dissect::mlx5provider
