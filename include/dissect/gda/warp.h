// Cooperative publication (paper §2.4 and Table 5 ‡, NVSHMEM's and DOCA's warp pattern): a warp
// posts a group of WQEs together. One lane reserves the group's WQEBBs with one atomic (from the
// counters, on a QP the warp drives alone), every lane builds its WQEs in lockstep, and after a
// warp barrier the same lane publishes the group in reservation order and rings once. The
// reservation, the ordered publication and the doorbell are paid once per group, not per WQE.
//
// Memory ordering: __syncwarp is a memory barrier among the lanes that take part, so every lane's
// WQE stores happen before the leader's later operations; the ordering policy's fence in the
// leader is cumulative, so those stores reach the NIC before the doorbell (requirement (1) of
// gda/ordering.h), and on a shared QP the leader's acquire-release CAS on ready_head carries them
// to whichever thread rings next (requirement (2)).
//
// `Lanes` is Warp on the device (all 32 lanes of a warp call, converged) or HostWarp on the host
// (one host thread standing in for the 32 lanes, building every WQE itself).
#pragma once

#include <cstdint>

#include "dissect/gda/submit.h"
#include "dissect/gda/wqe.h"

namespace dissect::gda {

#if defined(__CUDACC__)
struct Warp {
  static constexpr uint32_t step = 32;  // lane i builds WQEs i, i + 32, ...
  __device__ uint32_t first() const { return threadIdx.x & 31; }
  __device__ bool leader() const { return (threadIdx.x & 31) == 0; }
  template <typename T>
  __device__ T broadcast(T v) const {
    if constexpr (sizeof(T) == 8) {
      return static_cast<T>(__shfl_sync(0xffffffffu, static_cast<unsigned long long>(v), 0));
    } else {
      return static_cast<T>(__shfl_sync(0xffffffffu, static_cast<unsigned>(v), 0));
    }
  }
  __device__ uint32_t max(uint32_t v) const { return __reduce_max_sync(0xffffffffu, v); }
  __device__ void sync() const { __syncwarp(); }
};
#endif

struct HostWarp {
  static constexpr uint32_t step = 1;
  DISSECT_HD uint32_t first() const { return 0; }
  DISSECT_HD bool leader() const { return true; }
  template <typename T>
  DISSECT_HD T broadcast(T v) const {
    return v;
  }
  DISSECT_HD uint32_t max(uint32_t v) const { return v; }
  DISSECT_HD void sync() const {}
};

// `count` WQEs of `wqebbs_each` WQEBBs: build_one(qp, index, i, completion) builds the i-th (and
// returns its PostNote), on
// lane i % 32. Only the last may be signalled (`last`). Every lane returns the same status; *end
// receives the WQEBB index after the group.
template <typename Ordering, Sharing S, typename Lanes, typename BuildOne>
DISSECT_HD inline Status post_cooperative(const Lanes& lanes, const nic::QpHandle& qp,
                                          uint32_t count, uint32_t wqebbs_each, Completion last,
                                          uint64_t* end, BuildOne&& build_one) {
  if (count == 0) return Status::invalid_request;
  const uint32_t wqebbs = count * wqebbs_each;
  uint64_t base = 0;
  Status status = Status::ok;
  if (lanes.leader()) status = reserve<Ordering, S>(qp, wqebbs, &base);
  status = lanes.broadcast(status);
  if (status != Status::ok) return status;
  base = lanes.broadcast(base);
  for (uint32_t i = lanes.first(); i < count; i += lanes.step) {
    const uint64_t index = base + uint64_t{i} * wqebbs_each;
    note_post<Ordering>(qp, index,
                        build_one(qp, index, i, i + 1 == count ? last : Completion::unsignaled));
  }
  lanes.sync();
  if (lanes.leader()) status = publish_and_ring<Ordering, S>(qp, base, wqebbs);
  *end = base + wqebbs;
  return lanes.broadcast(status);
}

// post_values (gda.h) by a warp: `count` inline writes of `length` (1..8) bytes from registers,
// value_of(i) to address_of(i), one reservation and one doorbell for the warp.
template <typename Ordering, Sharing S, typename Lanes, typename ValueOf, typename AddressOf>
DISSECT_HD inline Status post_values_cooperative(const Lanes& lanes, const nic::QpHandle& qp,
                                                 uint32_t count, uint32_t length, uint32_t rkey,
                                                 ValueOf&& value_of, AddressOf&& address_of,
                                                 uint64_t* end,
                                                 Completion last = Completion::signaled) {
  if (length == 0 || length > 8) return Status::invalid_request;
  return post_cooperative<Ordering, S>(
      lanes, qp, count, inline_write_wqebbs(length), last, end,
      [&](const nic::QpHandle& q, uint64_t index, uint32_t i, Completion c) {
        return write_rdma_write_value_wqe(q, index, value_of(i), length, address_of(i), rkey, c);
      });
}

}  // namespace dissect::gda
