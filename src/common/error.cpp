#include "dissect/common/error.h"

#include <cstdio>

#include "dissect/mlx5/cqe.h"

namespace dissect {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace dissect

namespace dissect::mlx5 {

const char* syndrome_name(uint8_t syndrome) {
  switch (syndrome) {
    case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR: return "local length error";
    case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR: return "local QP operation error";
    case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR: return "local protection error";
    case MLX5_CQE_SYNDROME_WR_FLUSH_ERR: return "work request flushed";
    case MLX5_CQE_SYNDROME_MW_BIND_ERR: return "memory window bind error";
    case MLX5_CQE_SYNDROME_BAD_RESP_ERR: return "bad response";
    case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR: return "local access error";
    case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR: return "remote invalid request";
    case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR: return "remote access error";
    case MLX5_CQE_SYNDROME_REMOTE_OP_ERR: return "remote operation error";
    case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR: return "remote aborted";
    default: return "unknown syndrome";
  }
}

}  // namespace dissect::mlx5
