// gpu-latency --transport dc (single_operation.cu): the issue and put+completion of one 8 B put
// from a DCI to a DCT of the peer PE, with the address vector full (48 B) or compact (16 B), on
// the same PE pair, buffers, keys, ordering and engine as the RC rows it is reported beside. PE 0's
// DCI writes into PE 1's destination slots through a DCT on PE 1's PD (the PE pair's one NIC in
// the one-gpu layout: a DCI reaches a DCT of its own NIC too). Only put+completion: the paper's
// DC figure is "0.45 us above RC through completion in mini-gda" (§4.3.3); a DC round trip would
// need a DCI on each side, and the RC round trip already times the peer's answer.
#pragma once

#include <memory>
#include <string>

#include "dissect/gda/gda.h"
#include "dissect/nic/nic.h"
#include "harness.cuh"

namespace dissect::bench::gpu {

// The AV a DC put carries: which DCT, in which form.
struct DcRoute {
  gda::DcDestination destination;
  gda::AvForm form;
};

// Op i's DC put, timed as timed_put times an RC one: a[] issue, from the request to the return.
template <typename Policy, Payload P, typename Queue>
__device__ inline uint32_t timed_dc_put(Queue& queue, const DcRoute& route, uint32_t i, const PutPath& path,
                                        uint64_t* end, long long* issued_at, long long* issued) {
  uint8_t* const target = path.dst + size_t{i % SLOTS} * SLOT;
  uint32_t status;
  if constexpr (P == Payload::inline_value) {
    const uint64_t value = payload_value(i, path.length);
    *issued_at = clock64();
    status = static_cast<uint32_t>(gda::put_value_dc<Policy>(queue, route.destination, route.form, value,
                                                             path.length, reinterpret_cast<uint64_t>(target),
                                                             path.rkey, gda::Completion::signaled, end));
  } else {
    static_assert(P == Payload::pointer, "DC puts: a register value or a source buffer");
    uint8_t* s = path.src + size_t{i % SLOTS} * SLOT;
    for (uint32_t b = 0; b < path.length; ++b) s[b] = payload_byte(i, b);
    gda::WriteRequest r{reinterpret_cast<uint64_t>(s), path.lkey, path.length,
                        reinterpret_cast<uint64_t>(target), path.rkey};
    *issued_at = clock64();
    status = static_cast<uint32_t>(gda::put_dc<Policy>(queue, route.destination, route.form, r,
                                                       gda::Completion::signaled, end));
  }
  *issued = clock64();
  return status;
}

// put_latency_kernel's loop on a DCI, its counters in registers (gda::OwnedQp) as the RC rows'.
template <typename Policy, Payload P>
__global__ void dc_put_latency_kernel(nic::QpHandle dci, DcRoute route, PutPath path, OpCount ops,
                                      SampleBuffers out) {
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = 0;
  gda::OwnedQp owned = gda::own(dci);
  for (uint32_t i = 0; i < ops.warmup + ops.iterations && status == 0; ++i) {
    uint64_t end = 0;
    long long ca, cb;
    status = timed_dc_put<Policy, P>(owned, route, i, path, &end, &ca, &cb);
    if (status == 0) {
      status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(owned, end));
    }
    record_op(out, i, ops.warmup, ca, cb, clock64());
  }
  finish_timing(out, c0, g0, kernel_status(status, status != 0 ? dci.state->error : 0));
}

// The DC key of the rig's DCT: any value; the DCI's AV must carry it.
inline constexpr uint64_t DC_LATENCY_KEY = 0xdc0000000000d15cull;

// A DCT on PE 1's PD and a DCI on PE 0's, made with the pair's engines stopped (allocation beside
// a running engine kernel can hang: gpu_engine.h), which restart before it returns. Destroyed
// before the pair (the caller's scope ends first).
struct DcRig {
  std::unique_ptr<nic::DcTarget> dct;
  std::unique_ptr<nic::QueuePair> dci;
  DcRoute route;
};

inline DcRig make_dc_rig(PePair& pair, const PePairConfig& config) {
  for (auto& n : pair.nics) n->stop();
  DcRig rig;
  nic::DctAttributes target;
  target.dc_key = DC_LATENCY_KEY;
  rig.dct = pair.pe[1].pd->create_dct(target);
  nic::QpAttributes attributes;  // the pair's QPs' (make_pair)
  attributes.sq_wqebbs = 256;
  attributes.max_inline = 220;
  attributes.placement = nic::placement_from_string(config.placement);
  rig.dci = pair.pe[0].pd->create_dci(attributes);
  const nic::DctEndpoint e = rig.dct->endpoint();
  rig.route = DcRoute{gda::dc_destination(e.dctn, e.dc_key, e.lid),
                      config.dc_av == "full" ? gda::AvForm::full : gda::AvForm::compact};
  for (auto& n : pair.nics) n->start();
  return rig;
}

// `config.runs` runs of dc_put_latency_kernel, each on a fresh PE pair; fills `result`.
template <typename Policy, Payload P>
void measure_dc_put_latency(const PePairConfig& config, gpu::Measurement& result) {
  gpu::TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}};
  gpu::TimedMetric late = cqe_lateness_metric();
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    const DcRig rig = make_dc_rig(pair, config);
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    cudaSetDevice(a.device);
    dc_put_latency_kernel<Policy, P><<<1, 1, 0, a.stream>>>(
        rig.dci->handle(), rig.route, PutPath{a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, 8},
        OpCount{config.warmup, config.iterations}, pair.samples);
    check_cuda(cudaGetLastError(), "launch dc_put_latency_kernel");
    record_latency_run(pair, run, t, config, 8, "DC put latency kernel", issue, total,
                       describe_kernel_status);
    // Each put finds its DCI idle (one outstanding): one connect (dc_timing.h's rule).
    record_cqe_lateness(*a.nic, rig.dci->qpn(), P == Payload::pointer, 1, a.stream, late);
  });
  finish_latency_result(tally, issue, total, result, std::move(late));
}

}  // namespace dissect::bench::gpu
