// mini-gda: the whole GPU submission path, for a thread that drives one QP.
//
//   put*()        reserve -> build the WQE -> publish -> ring             (issue)
//   put*() + wait_completion() / quiet()                                  (put+completion)
//   post_writes() N WQEs, one doorbell; only the last is signalled        (doorbell batching)
//
// Compiled for the device (GPU threads, sm_90) and for the host (host threads standing in for GPU
// threads; the CPU tests drive the softnic this way). `Ordering` is a policy of gda/ordering.h,
// `S` says whether other threads share the QP. Returned indices are free-running WQEBB indices:
// wait_completion(qp, index) waits until every WQEBB below `index` is retired.
#pragma once

#include <cstdint>

#include "dissect/gda/completion.h"
#include "dissect/gda/ordering.h"
#include "dissect/gda/status.h"
#include "dissect/gda/submit.h"
#include "dissect/gda/wqe.h"

namespace dissect::gda {

// Posts one RDMA WRITE with a pointer payload; *end receives the WQEBB index after it.
template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status put(const nic::QpHandle& qp, const WriteRequest& request,
                             Completion completion, uint64_t* end) {
  uint64_t base;
  const Status room = reserve<Ordering, S>(qp, write_wqebbs(), &base);
  if (room != Status::ok) return room;
  write_rdma_write_wqe(qp, base, request, completion);
  *end = base + write_wqebbs();
  return publish_and_ring<Ordering, S>(qp, base, write_wqebbs());
}

template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status put_inline(const nic::QpHandle& qp, const InlineWriteRequest& request,
                                    Completion completion, uint64_t* end) {
  const uint32_t wqebbs = inline_write_wqebbs(request.length);
  uint64_t base;
  const Status room = reserve<Ordering, S>(qp, wqebbs, &base);
  if (room != Status::ok) return room;
  write_rdma_write_inline_wqe(qp, base, request, completion);
  *end = base + wqebbs;
  return publish_and_ring<Ordering, S>(qp, base, wqebbs);
}

template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status put_with_immediate(const nic::QpHandle& qp, const WriteRequest& request,
                                            mlx5::be32 immediate, Completion completion,
                                            uint64_t* end) {
  uint64_t base;
  const Status room = reserve<Ordering, S>(qp, write_wqebbs(), &base);
  if (room != Status::ok) return room;
  write_rdma_write_imm_wqe(qp, base, request, immediate, completion);
  *end = base + write_wqebbs();
  return publish_and_ring<Ordering, S>(qp, base, write_wqebbs());
}

// 8-byte FETCH_ADD, always signalled: its result is valid once wait_completion(*end) returns.
template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status fetch_add(const nic::QpHandle& qp, const FetchAddRequest& request,
                                   uint64_t* end) {
  uint64_t base;
  const Status room = reserve<Ordering, S>(qp, fetch_add_wqebbs(), &base);
  if (room != Status::ok) return room;
  write_fetch_add_wqe(qp, base, request, Completion::signaled);
  *end = base + fetch_add_wqebbs();
  return publish_and_ring<Ordering, S>(qp, base, fetch_add_wqebbs());
}

// N RDMA WRITEs announced by one doorbell; the last is signalled and retires the others.
template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status post_writes(const nic::QpHandle& qp, const WriteRequest* requests,
                                     uint32_t count, uint64_t* end) {
  uint64_t base;
  const Status room = reserve<Ordering, S>(qp, count * write_wqebbs(), &base);
  if (room != Status::ok) return room;
  for (uint32_t i = 0; i < count; ++i) {
    const Completion c = i + 1 == count ? Completion::signaled : Completion::unsignaled;
    write_rdma_write_wqe(qp, base + i * write_wqebbs(), requests[i], c);
  }
  *end = base + count * write_wqebbs();
  return publish_and_ring<Ordering, S>(qp, base, count * write_wqebbs());
}

}  // namespace dissect::gda
