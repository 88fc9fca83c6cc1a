// Put kernels for telemetry_policy_ptx_test: the same submit paths under a bare ordering
// ("bare_*") and under gda::counted ("counted_*"). Compiled to PTX only, never run.
#include "dissect/gda/gda.h"

namespace {
using Bare = dissect::gda::ordering::gpu_fence;
using Counted = dissect::gda::counted<Bare>;
namespace gda = dissect::gda;
}  // namespace

#define POLICY_KERNELS(prefix, Policy)                                                          \
  __global__ void prefix##_put_value(dissect::nic::QpHandle qp, uint64_t v, uint64_t* out) {    \
    uint64_t end = 0;                                                                           \
    gda::Status s = gda::put_value<Policy>(qp, v, 8, 0x1000, 7, gda::Completion::signaled, &end); \
    if (s == gda::Status::ok) s = gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end); \
    *out = end + static_cast<uint64_t>(s);                                                      \
  }                                                                                             \
  __global__ void prefix##_post_writes(dissect::nic::QpHandle qp, const gda::WriteRequest* r,    \
                                       uint64_t* out) {                                         \
    uint64_t end = 0;                                                                           \
    gda::Status s = gda::post_writes<Policy, gda::Sharing::shared>(qp, r, 16, &end);            \
    if (s == gda::Status::ok) s = gda::quiet<Policy, gda::Sharing::shared>(qp);                 \
    *out = end + static_cast<uint64_t>(s);                                                      \
  }                                                                                             \
  __global__ void prefix##_owned_put(dissect::nic::QpHandle qp, gda::WriteRequest r,            \
                                     uint64_t* out) {                                           \
    gda::OwnedQp q = gda::own(qp);                                                              \
    uint64_t end = 0;                                                                           \
    gda::Status s = gda::put<Policy>(q, r, gda::Completion::signaled, &end);                    \
    if (s == gda::Status::ok) s = gda::wait_completion<Policy>(q, end);                         \
    *out = end + static_cast<uint64_t>(s);                                                      \
  }

POLICY_KERNELS(bare, Bare)
POLICY_KERNELS(counted, Counted)
