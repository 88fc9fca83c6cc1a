// RC RESET->INIT->RTR->RTS through verbs: every attribute and every mask bit of each step.
#include <gtest/gtest.h>

#include "dissect/providers/mlx5/qp_attr.h"

namespace dissect::mlx5provider {
namespace {

RcConnectParams params() {
  RcConnectParams p;
  p.port_num = 2;
  p.pkey_index = 1;
  p.remote_qpn = 0x1a2b3c;
  p.rq_psn = 0x100;
  p.sq_psn = 0x200;
  p.remote_lid = 0x42;
  p.sl = 3;
  return p;
}

TEST(QpAttr, ResetToInit) {
  const QpTransition t = rc_reset_to_init(params());
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_INIT);
  EXPECT_EQ(t.attr.pkey_index, 1);
  EXPECT_EQ(t.attr.port_num, 2);
  EXPECT_EQ(t.attr.qp_access_flags, static_cast<unsigned>(IBV_ACCESS_LOCAL_WRITE |
                                                          IBV_ACCESS_REMOTE_WRITE |
                                                          IBV_ACCESS_REMOTE_READ |
                                                          IBV_ACCESS_REMOTE_ATOMIC));
}

TEST(QpAttr, InitToRtrInfiniband) {
  const QpTransition t = rc_init_to_rtr(params());
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                        IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(t.attr.path_mtu, IBV_MTU_4096);
  EXPECT_EQ(t.attr.dest_qp_num, 0x1a2b3cu);
  EXPECT_EQ(t.attr.rq_psn, 0x100u);
  EXPECT_EQ(t.attr.max_dest_rd_atomic, 16);
  EXPECT_EQ(t.attr.min_rnr_timer, 12);
  EXPECT_EQ(t.attr.ah_attr.dlid, 0x42);
  EXPECT_EQ(t.attr.ah_attr.sl, 3);
  EXPECT_EQ(t.attr.ah_attr.port_num, 2);
  EXPECT_EQ(t.attr.ah_attr.is_global, 0);
  EXPECT_EQ(t.attr.ah_attr.grh.hop_limit, 0);
  // Fields of other transitions stay zero.
  EXPECT_EQ(t.attr.sq_psn, 0u);
  EXPECT_EQ(t.attr.timeout, 0);
}

TEST(QpAttr, InitToRtrRoceIsGlobal) {
  RcConnectParams p = params();
  p.link_layer = LinkLayer::ethernet;
  p.sgid_index = 3;
  p.hop_limit = 64;
  p.traffic_class = 0x68;
  p.flow_label = 0x12345;
  for (int i = 0; i < 16; ++i) p.remote_gid[i] = static_cast<uint8_t>(i);
  const QpTransition t = rc_init_to_rtr(p);
  EXPECT_EQ(t.attr.ah_attr.is_global, 1);
  EXPECT_EQ(t.attr.ah_attr.dlid, 0);  // RoCE has no LID
  EXPECT_EQ(t.attr.ah_attr.grh.sgid_index, 3);
  EXPECT_EQ(t.attr.ah_attr.grh.hop_limit, 64);
  EXPECT_EQ(t.attr.ah_attr.grh.traffic_class, 0x68);
  EXPECT_EQ(t.attr.ah_attr.grh.flow_label, 0x12345u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(t.attr.ah_attr.grh.dgid.raw[i], i);
}

TEST(QpAttr, InitToRtrInfinibandWithGrh) {
  RcConnectParams p = params();
  p.use_grh = true;
  const QpTransition t = rc_init_to_rtr(p);
  EXPECT_EQ(t.attr.ah_attr.is_global, 1);
  EXPECT_EQ(t.attr.ah_attr.dlid, 0x42);
}

TEST(QpAttr, RtrToRts) {
  const QpTransition t = rc_rtr_to_rts(params());
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
                        IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(t.attr.sq_psn, 0x200u);
  EXPECT_EQ(t.attr.max_rd_atomic, 16);
  EXPECT_EQ(t.attr.retry_cnt, 7);
  EXPECT_EQ(t.attr.rnr_retry, 7);
  EXPECT_EQ(t.attr.timeout, 20);
  EXPECT_EQ(t.attr.dest_qp_num, 0u);
}

}  // namespace
}  // namespace dissect::mlx5provider
