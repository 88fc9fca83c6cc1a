// mini-gda: the whole GPU submission path, for a thread that drives one QP.
//
//   put*()        reserve -> build the WQE -> publish -> ring             (issue)
//   put_dc(), put_value_dc()
//                 the same on a DCI: each WQE carries its DCT's address vector (DC transport)
//   put*() + wait_completion() / quiet()                                  (put+completion)
//   post_writes(), post_inline_writes(), post_values()
//                 N WQEs, one doorbell; only the last may be signalled    (doorbell batching)
//   gda/warp.h    a warp reserves, builds and publishes together          (cooperative publication)
//   gda/scope.h   completion of a set of QPs: one peer's, or all of them  (completion scope)
//   own(qp)       the counters in registers for a thread that alone drives the QP; disown() or a
//                 wait writes them back (gda/owned.h)
//
// Compiled for the device (GPU threads, sm_90) and for the host (host threads standing in for GPU
// threads; the CPU tests drive the softnic this way). `Ordering` is a policy of gda/ordering.h,
// `S` says whether other threads share the QP. Returned indices are free-running WQEBB indices:
// wait_completion(qp, index) waits until every WQEBB below `index` is retired.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/gda/completion.h"
#include "dissect/gda/ordering.h"
#include "dissect/gda/owned.h"
#include "dissect/gda/scope.h"
#include "dissect/gda/status.h"
#include "dissect/gda/submit.h"
#include "dissect/gda/warp.h"
#include "dissect/gda/dc_wqe.h"
#include "dissect/gda/wqe.h"

namespace dissect::gda {

namespace detail {
// reserve -> build -> publish and ring, for a handle (state in memory) or an OwnedQp (registers).
// `build` writes the WQE(s) at `base` and returns the one WQE's PostNote, or, when it counts its
// WQEs itself (post_batch), nothing.
template <typename Ordering, Sharing S, typename Queue, typename Build>
DISSECT_HD inline Status submit(Queue& queue, uint32_t wqebbs, uint64_t* end, Build&& build) {
  uint64_t base;
  const Status room = reserve<Ordering, S>(queue, wqebbs, &base);
  if (room != Status::ok) return room;
  const nic::QpHandle& qp = handle_of(queue);
  if constexpr (std::is_void_v<decltype(build(qp, base))>) {
    build(qp, base);
  } else {
    note_post<Ordering>(qp, base, build(qp, base));
  }
  *end = base + wqebbs;
  return publish_and_ring<Ordering, S>(queue, base, wqebbs);
}
}  // namespace detail

// `Queue` is a const nic::QpHandle (counters in SendQueueState) or an OwnedQp (gda/owned.h).

// Posts one RDMA WRITE with a pointer payload; *end receives the WQEBB index after it.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status put(Queue&& queue, const WriteRequest& request, Completion completion,
                             uint64_t* end) {
  return detail::submit<Ordering, S>(queue, write_wqebbs(), end,
                                     [&](const nic::QpHandle& qp, uint64_t base) {
                                       return write_rdma_write_wqe(qp, base, request, completion);
                                     });
}

template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status put_inline(Queue&& queue, const InlineWriteRequest& request,
                                    Completion completion, uint64_t* end) {
  return detail::submit<Ordering, S>(queue, inline_write_wqebbs(request.length), end,
                                     [&](const nic::QpHandle& qp, uint64_t base) {
                                       return write_rdma_write_inline_wqe(qp, base, request, completion);
                                     });
}

// An inline put of up to 8 bytes taken from a register (`value`'s first `length` bytes in memory
// order), as nvshmem_p does: no payload is read from memory while the WQE is built.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status put_value(Queue&& queue, uint64_t value, uint32_t length,
                                   uint64_t remote_address, uint32_t rkey, Completion completion,
                                   uint64_t* end) {
  if (length == 0 || length > 8) return Status::invalid_request;
  return detail::submit<Ordering, S>(
      queue, inline_write_wqebbs(length), end, [&](const nic::QpHandle& qp, uint64_t base) {
        return write_rdma_write_value_wqe(qp, base, value, length, remote_address, rkey, completion);
      });
}

// DC: one RDMA WRITE with a pointer payload from a DCI to `destination` (gda/dc_wqe.h
// dc_destination), with the full (two WQEBBs) or compact (one) address vector.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status put_dc(Queue&& queue, const DcDestination& destination, AvForm form,
                                const WriteRequest& request, Completion completion, uint64_t* end) {
  return detail::submit<Ordering, S>(
      queue, dc_write_wqebbs(form), end, [&](const nic::QpHandle& qp, uint64_t base) {
        return write_dc_write_wqe(qp, base, destination, form, request, completion);
      });
}

// DC: put_value to `destination`.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status put_value_dc(Queue&& queue, const DcDestination& destination, AvForm form,
                                      uint64_t value, uint32_t length, uint64_t remote_address,
                                      uint32_t rkey, Completion completion, uint64_t* end) {
  if (length == 0 || length > 8) return Status::invalid_request;
  return detail::submit<Ordering, S>(
      queue, dc_value_wqebbs(form, length), end, [&](const nic::QpHandle& qp, uint64_t base) {
        return write_dc_write_value_wqe(qp, base, destination, form, value, length, remote_address, rkey,
                                 completion);
      });
}

template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status put_with_immediate(Queue&& queue, const WriteRequest& request,
                                            mlx5::be32 immediate, Completion completion,
                                            uint64_t* end) {
  return detail::submit<Ordering, S>(
      queue, write_wqebbs(), end, [&](const nic::QpHandle& qp, uint64_t base) {
        return write_rdma_write_imm_wqe(qp, base, request, immediate, completion);
      });
}

// 8-byte FETCH_ADD, always signalled: its result is valid once wait_completion(*end) returns.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status fetch_add(Queue&& queue, const FetchAddRequest& request, uint64_t* end) {
  return detail::submit<Ordering, S>(queue, fetch_add_wqebbs(), end,
                                     [&](const nic::QpHandle& qp, uint64_t base) {
                                       return write_fetch_add_wqe(qp, base, request, Completion::signaled);
                                     });
}

// `count` WQEs of `wqebbs_each` WQEBBs, one reservation, one doorbell: build_one(qp, index, i,
// completion) writes the i-th at WQEBB `index` and returns its PostNote. Only the last may be
// signalled (`last`), and its CQE retires the others (send queues complete in order).
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue, typename BuildOne>
DISSECT_HD inline Status post_batch(Queue&& queue, uint32_t count, uint32_t wqebbs_each,
                                    Completion last, uint64_t* end, BuildOne&& build_one) {
  if (count == 0) return Status::invalid_request;
  return detail::submit<Ordering, S>(queue, count * wqebbs_each, end,
                             [&](const nic::QpHandle& qp, uint64_t base) {
                               for (uint32_t i = 0; i < count; ++i) {
                                 const Completion c = i + 1 == count ? last : Completion::unsignaled;
                                 const uint64_t index = base + uint64_t{i} * wqebbs_each;
                                 note_post<Ordering>(qp, index, build_one(qp, index, i, c));
                               }
                             });
}

// N RDMA WRITEs announced by one doorbell; the last is signalled (`last`) and retires the others.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status post_writes(Queue&& queue, const WriteRequest* requests, uint32_t count,
                                     uint64_t* end, Completion last = Completion::signaled) {
  return post_batch<Ordering, S>(
      queue, count, write_wqebbs(), last, end,
      [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, Completion c) {
        return write_rdma_write_wqe(qp, index, requests[i], c);
      });
}

// N inline RDMA WRITEs of one payload length (1..max_inline) announced by one doorbell.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue>
DISSECT_HD inline Status post_inline_writes(Queue&& queue, const InlineWriteRequest* requests,
                                            uint32_t count, uint64_t* end,
                                            Completion last = Completion::signaled) {
  for (uint32_t i = 1; i < count; ++i) {
    if (requests[i].length != requests[0].length) return Status::invalid_request;
  }
  return post_batch<Ordering, S>(
      queue, count, count ? inline_write_wqebbs(requests[0].length) : 1, last, end,
      [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, Completion c) {
        return write_rdma_write_inline_wqe(qp, index, requests[i], c);
      });
}

// N inline WRITEs of `length` (1..8) bytes taken from registers (`value_of(i)`, the i-th WQE's
// payload, to `address_of(i)`), announced by one doorbell: nvshmem_p batched, with no request
// array in memory.
template <typename Ordering, Sharing S = Sharing::exclusive, typename Queue, typename ValueOf,
          typename AddressOf>
DISSECT_HD inline Status post_values(Queue&& queue, uint32_t count, uint32_t length, uint32_t rkey,
                                     ValueOf&& value_of, AddressOf&& address_of, uint64_t* end,
                                     Completion last = Completion::signaled) {
  if (length == 0 || length > 8) return Status::invalid_request;
  return post_batch<Ordering, S>(
      queue, count, inline_write_wqebbs(length), last, end,
      [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, Completion c) {
        return write_rdma_write_value_wqe(qp, index, value_of(i), length, address_of(i), rkey, c);
      });
}

}  // namespace dissect::gda
