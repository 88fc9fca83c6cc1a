// RC connection through verbs: the ibv_modify_qp attribute and mask of each transition, as pure
// functions of RcConnectParams. Masks are exactly the required set of the ibv_modify_qp(3) table
// for IBV_QPT_RC (docs/mlx5_sources.md §5.1); a port with IBV_QPF_GRH_REQUIRED (RoCE) gets
// ah_attr.is_global = 1 and a filled grh. Used by the mlx5 provider (verbs-created QPs) and the
// ibverbs provider alike.
#pragma once

#include <infiniband/verbs.h>

#include "dissect/providers/mlx5/rc_connect.h"

namespace dissect::mlx5provider {

struct QpTransition {
  ibv_qp_attr attr;
  int mask;
};

QpTransition rc_reset_to_init(const RcConnectParams& p);
QpTransition rc_init_to_rtr(const RcConnectParams& p);
QpTransition rc_rtr_to_rts(const RcConnectParams& p);

// The ah_attr of INIT->RTR, also what ibv_create_ah takes for a DC target.
ibv_ah_attr rc_ah_attr(const RcConnectParams& p);

}  // namespace dissect::mlx5provider
