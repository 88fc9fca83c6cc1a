// Owning handles for verbs, mlx5dv and DEVX objects: each destroys its object once, in the
// reverse order of creation when members are declared in creation order.
#pragma once

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <memory>

namespace dissect::mlx5provider {

struct ContextDeleter { void operator()(ibv_context* p) const { ibv_close_device(p); } };
struct PdDeleter { void operator()(ibv_pd* p) const { ibv_dealloc_pd(p); } };
struct CqDeleter { void operator()(ibv_cq* p) const { ibv_destroy_cq(p); } };
struct QpDeleter { void operator()(ibv_qp* p) const { ibv_destroy_qp(p); } };
struct SrqDeleter { void operator()(ibv_srq* p) const { ibv_destroy_srq(p); } };
struct MrDeleter { void operator()(ibv_mr* p) const { ibv_dereg_mr(p); } };
struct AhDeleter { void operator()(ibv_ah* p) const { ibv_destroy_ah(p); } };
struct UarDeleter { void operator()(mlx5dv_devx_uar* p) const { mlx5dv_devx_free_uar(p); } };
struct UmemDeleter { void operator()(mlx5dv_devx_umem* p) const { mlx5dv_devx_umem_dereg(p); } };
struct DevxObjDeleter { void operator()(mlx5dv_devx_obj* p) const { mlx5dv_devx_obj_destroy(p); } };

using ContextPtr = std::unique_ptr<ibv_context, ContextDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using QpPtr = std::unique_ptr<ibv_qp, QpDeleter>;
using SrqPtr = std::unique_ptr<ibv_srq, SrqDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using AhPtr = std::unique_ptr<ibv_ah, AhDeleter>;
using UarPtr = std::unique_ptr<mlx5dv_devx_uar, UarDeleter>;
using UmemPtr = std::unique_ptr<mlx5dv_devx_umem, UmemDeleter>;
using DevxObjPtr = std::unique_ptr<mlx5dv_devx_obj, DevxObjDeleter>;

}  // namespace dissect::mlx5provider
