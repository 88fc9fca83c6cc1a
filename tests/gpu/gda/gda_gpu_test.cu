// mini-gda device tests: GPU threads post, ring and poll; the softnic GPU engine (GPU-resident
// queues) or host-thread engine (host-resident queues) consumes. The device code is the same for
// both; only the provider's engine and the queue placement differ.
//
//   gda_gpu_test <case>     exit 0 pass, 1 fail, 77 skipped (reason on stderr)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "dissect/bootstrap/bootstrap.h"
#include "dissect/bootstrap/environment.h"
#include "dissect/bootstrap/mpi.h"
#include "dissect/gda/gda.h"
#include "dissect/mlx5/cqe.h"
#include "dissect/softnic/cqe_times.h"
#include "gpu_test_support.h"

namespace gda = dissect::gda;
namespace nic = dissect::nic;
namespace mlx5 = dissect::mlx5;
namespace softnic = dissect::softnic;
using namespace dissect::gputest;

namespace {

constexpr uint32_t SLOT = 256;  // bytes per write slot in the destination buffers

DISSECT_HD inline uint32_t pointer_length(uint32_t i) { return 1 + (i * 37) % 200; }
DISSECT_HD inline uint32_t inline_length(uint32_t i) { return 1 + (i * 53) % 220; }

// One thread: `n` pointer puts, `n` inline puts, then `batch` writes under one doorbell. Each lands
// in its own slot of `dst`: pointer i at slot i, inline i at slot n + i, batch k at slot 2n + k.
template <typename Policy>
__global__ void single_thread_puts(nic::QpHandle qp, uint8_t* src, uint32_t lkey, uint8_t* dst,
                                   uint32_t rkey, uint32_t n, uint32_t batch, uint32_t seed,
                                   uint32_t* result) {
  uint32_t status = 0;
  for (uint32_t i = 0; i < n && status == 0; ++i) {
    const uint32_t len = pointer_length(i);
    uint8_t* s = src + size_t{i} * SLOT;
    for (uint32_t b = 0; b < len; ++b) s[b] = pattern_byte(seed + i, b);
    uint64_t end = 0;
    gda::WriteRequest r{reinterpret_cast<uint64_t>(s), lkey, len,
                        reinterpret_cast<uint64_t>(dst + size_t{i} * SLOT), rkey};
    status = static_cast<uint32_t>(gda::put<Policy>(qp, r, gda::Completion::signaled, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  for (uint32_t i = 0; i < n && status == 0; ++i) {
    uint8_t payload[220];
    const uint32_t len = inline_length(i);
    for (uint32_t b = 0; b < len; ++b) payload[b] = pattern_byte(seed + 1000 + i, b);
    uint64_t end = 0;
    gda::InlineWriteRequest r{payload, len, reinterpret_cast<uint64_t>(dst + size_t{n + i} * SLOT),
                              rkey};
    status = static_cast<uint32_t>(gda::put_inline<Policy>(qp, r, gda::Completion::signaled, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  if (status == 0 && batch != 0) {
    gda::WriteRequest requests[8];
    for (uint32_t k = 0; k < batch; ++k) {
      uint8_t* s = src + size_t{2 * n + k} * SLOT;
      for (uint32_t b = 0; b < 64; ++b) s[b] = pattern_byte(seed + 2000 + k, b);
      requests[k] = gda::WriteRequest{reinterpret_cast<uint64_t>(s), lkey, 64,
                                      reinterpret_cast<uint64_t>(dst + size_t{2 * n + k} * SLOT),
                                      rkey};
    }
    uint64_t end = 0;
    status = static_cast<uint32_t>(gda::post_writes<Policy>(qp, requests, batch, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  *result = status;
}

void expect_single_thread_payloads(const std::vector<uint8_t>& dst, uint32_t n, uint32_t batch,
                                   uint32_t seed) {
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < pointer_length(i); ++b) {
      GT_CHECK(dst[size_t{i} * SLOT + b] == pattern_byte(seed + i, b), "pointer put %u byte %u", i, b);
    }
    GT_CHECK(dst[size_t{i} * SLOT + pointer_length(i)] == 0, "pointer put %u overran", i);
    for (uint32_t b = 0; b < inline_length(i); ++b) {
      GT_CHECK(dst[size_t{n + i} * SLOT + b] == pattern_byte(seed + 1000 + i, b),
               "inline put %u byte %u", i, b);
    }
    if (inline_length(i) < SLOT) {
      GT_CHECK(dst[size_t{n + i} * SLOT + inline_length(i)] == 0, "inline put %u overran", i);
    }
  }
  for (uint32_t k = 0; k < batch; ++k) {
    for (uint32_t b = 0; b < 64; ++b) {
      GT_CHECK(dst[size_t{2 * n + k} * SLOT + b] == pattern_byte(seed + 2000 + k, b),
               "batched write %u byte %u", k, b);
    }
  }
}


template <typename Policy>
int run_single_thread(softnic::EngineKind engine, nic::Placement placement) {
  if (device_count_or_skip() == 0) return SKIP;
  constexpr uint32_t n = 64, batch = 8;
  auto layout = make_layout("one-gpu", engine, placement, size_t{2 * n + batch} * SLOT);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  uint32_t* result = layout->result;
  Stream stream(0);
  single_thread_puts<Policy><<<1, 1, 0, stream.s>>>(pe.qp->handle(), pe.src, pe.src_mr.lkey,
                                                     peer.dst, peer.dst_mr.rkey, n, batch, 7, result);
  GT_CHECK(wait_stream(stream.s, 15), "kernel did not finish: %s", pe.nic->describe_status().c_str());
  GT_CHECK(*result == 0, "device status %u: %s", *result, pe.nic->describe_status().c_str());
  expect_single_thread_payloads(read_back(peer.dst, peer.bytes, stream.s), n, batch, 7);
  const auto c = pe.nic->counters(pe.qp->qpn());
  GT_CHECK(c.wqes_executed == 2 * n + batch, "engine executed %llu WQEs",
           static_cast<unsigned long long>(c.wqes_executed));
  GT_CHECK(c.error_cqes == 0, "error CQEs");
  std::printf("ok: %s engine, %s queues, %s: %u pointer + %u inline puts + %u batched writes\n",
              softnic::to_string(engine), nic::to_string(placement), Policy::key, n, n, batch);
  return 0;
}

// Posts `n` pointer puts and `n` register-payload puts (put_value) as the QP's owner, without
// waiting: gda_gpu_test's case for tools that serialise launches (compute-sanitizer), where the
// engine runs between this kernel and the poller below (SoftNic::drain).
__global__ void owner_posts(nic::QpHandle qp, uint8_t* src, uint32_t lkey, uint8_t* dst,
                            uint32_t rkey, uint32_t n, uint64_t* end, uint32_t* result) {
  gda::OwnedQp owned = gda::own(qp);
  uint32_t status = 0;
  for (uint32_t i = 0; i < n && status == 0; ++i) {
    uint8_t* s = src + size_t{i} * SLOT;
    for (uint32_t b = 0; b < 64; ++b) s[b] = pattern_byte(i, b);
    gda::WriteRequest r{reinterpret_cast<uint64_t>(s), lkey, 64,
                        reinterpret_cast<uint64_t>(dst + size_t{i} * SLOT), rkey};
    status = static_cast<uint32_t>(gda::put<gda::ordering::gpu_fence>(owned, r, gda::Completion::signaled, end));
    uint64_t value = 0;
    for (uint32_t b = 0; b < 8; ++b) value |= uint64_t{pattern_byte(1000 + i, b)} << (8 * b);
    if (status == 0) {
      status = static_cast<uint32_t>(gda::put_value<gda::ordering::gpu_fence>(
          owned, value, 1 + i % 8, reinterpret_cast<uint64_t>(dst + size_t{n + i} * SLOT), rkey,
          gda::Completion::signaled, end));
    }
  }
  gda::disown(owned);  // owner_polls waits through the plain handle
  *result = status;
}

__global__ void owner_polls(nic::QpHandle qp, uint64_t end, uint32_t* result) {
  *result = static_cast<uint32_t>(
      gda::wait_completion<gda::ordering::gpu_fence, gda::Sharing::exclusive>(qp, end));
}

// Both PEs on one GPU engine, stopped: a posting kernel, drain_then_poll, a polling kernel.
std::unique_ptr<Layout> stopped_one_gpu(size_t bytes, nic::QpAttributes attributes = {},
                                        const char* profile = "fast") {
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, bytes, attributes,
                            profile);
  layout->nics[0]->stop();
  return layout;
}

// The word a posting kernel leaves its last WQE's index in, for the polling kernel.
uint64_t* end_word(Layout& layout) { return reinterpret_cast<uint64_t*>(layout.result + 8); }

// The posting kernel on `stream` finished, then the stopped engine drained and the last CQE (`end`)
// polled by another kernel: the order compute-sanitizer keeps, which serialises kernels.
void drain_then_poll(Layout& layout, Pe& pe, const uint64_t* end, Stream& stream) {
  GT_CHECK(wait_stream(stream.s, 15), "posting kernel did not finish");
  GT_CHECK(layout.result[0] == 0, "posting status %u", layout.result[0]);
  layout.nics[0]->drain();
  owner_polls<<<1, 1, 0, stream.s>>>(pe.qp->handle(), *end, layout.result + 1);
  GT_CHECK(wait_stream(stream.s, 15), "polling kernel did not finish");
  GT_CHECK(layout.result[1] == 0, "completion status %u", layout.result[1]);
}

// Each 8 B slot of `dst` holds what executing the WQEs one at a time leaves (`want`).
void expect_slots(const std::vector<uint8_t>& dst, const uint64_t* want, uint32_t slots) {
  for (uint32_t slot = 0; slot < slots; ++slot) {
    uint64_t got;
    std::memcpy(&got, &dst[8 * slot], 8);
    GT_CHECK(got == want[slot], "slot %u holds %llx, one WQE at a time leaves %llx", slot,
             static_cast<unsigned long long>(got), static_cast<unsigned long long>(want[slot]));
  }
}

int run_stepped_engine() {
  if (device_count_or_skip() == 0) return SKIP;
  constexpr uint32_t n = 16;
  auto layout = stopped_one_gpu(size_t{2 * n} * SLOT);
  softnic::SoftNic& engine = *layout->nics[0];
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  uint64_t* end = end_word(*layout);
  Stream stream(0);
  owner_posts<<<1, 1, 0, stream.s>>>(pe.qp->handle(), pe.src, pe.src_mr.lkey, peer.dst,
                                     peer.dst_mr.rkey, n, end, layout->result);
  GT_CHECK(wait_stream(stream.s, 15), "posting kernel did not finish");
  GT_CHECK(layout->result[0] == 0, "posting status %u", layout->result[0]);
  GT_CHECK(engine.counters(pe.qp->qpn()).wqes_executed == 0, "the stopped engine executed WQEs");
  engine.drain();
  owner_polls<<<1, 1, 0, stream.s>>>(pe.qp->handle(), *end, layout->result + 1);
  GT_CHECK(wait_stream(stream.s, 15), "polling kernel did not finish");
  GT_CHECK(layout->result[1] == 0, "completion status %u", layout->result[1]);
  const auto dst = read_back(peer.dst, peer.bytes, stream.s);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < 64; ++b) {
      GT_CHECK(dst[size_t{i} * SLOT + b] == pattern_byte(i, b), "put %u byte %u", i, b);
    }
    const uint32_t length = 1 + i % 8;
    for (uint32_t b = 0; b < 8; ++b) {
      const uint8_t want = b < length ? pattern_byte(1000 + i, b) : 0;
      GT_CHECK(dst[size_t{n + i} * SLOT + b] == want, "put_value %u byte %u", i, b);
    }
  }
  GT_CHECK(engine.counters(pe.qp->qpn()).wqes_executed == 2 * n, "engine executed %llu WQEs",
           static_cast<unsigned long long>(engine.counters(pe.qp->qpn()).wqes_executed));
  std::printf("ok: %u puts + %u put_value posted by an owner kernel, drained by the engine kernel, "
              "polled by a third kernel\n", n, n);
  return 0;
}

// Slot of 8 B put k in run_window_order: descending and revisited, so that the engine's windows
// hold WQEs whose destinations neither ascend nor stay disjoint.
DISSECT_HD inline uint32_t revisited_slot(uint32_t k) { return (31 - k) % 12; }
constexpr uint32_t ORDER_PUTS = 32, ORDER_WRITES = 16, ORDER_WRITE_BYTES = 16;
constexpr size_t ORDER_WRITES_AT = 1024;  // the pointer writes' destinations, descending

// An owner posts, with the engine stopped: 32 put_values to revisited slots, then 16 pointer
// writes to descending disjoint slots, one doorbell each.
__global__ void order_posts(nic::QpHandle qp, uint8_t* src, uint32_t lkey, uint8_t* dst,
                            uint32_t rkey, uint64_t* end, uint32_t* result) {
  gda::OwnedQp owned = gda::own(qp);
  uint32_t status = 0;
  for (uint32_t k = 0; k < ORDER_PUTS && status == 0; ++k) {
    status = static_cast<uint32_t>(gda::put_value<gda::ordering::gpu_fence>(
        owned, 0x5000 + k, 8, reinterpret_cast<uint64_t>(dst + 8 * revisited_slot(k)), rkey,
        gda::Completion::signaled, end));
  }
  for (uint32_t k = 0; k < ORDER_WRITES && status == 0; ++k) {
    uint8_t* s = src + k * ORDER_WRITE_BYTES;
    for (uint32_t b = 0; b < ORDER_WRITE_BYTES; ++b) s[b] = pattern_byte(k, b);
    const size_t at = ORDER_WRITES_AT + (ORDER_WRITES - 1 - k) * ORDER_WRITE_BYTES;
    gda::WriteRequest r{reinterpret_cast<uint64_t>(s), lkey, ORDER_WRITE_BYTES,
                        reinterpret_cast<uint64_t>(dst + at), rkey};
    status = static_cast<uint32_t>(gda::put<gda::ordering::gpu_fence>(owned, r, gda::Completion::signaled, end));
  }
  gda::disown(owned);
  *result = status;
}

// The GPU engine's windows end before a WRITE to bytes an earlier WQE of the window writes, and
// copy descending disjoint destinations side by side (WarpLanes::disjoint_prefix): the bytes are
// those of the WQEs executed one at a time, every WQE executed once. Under cx7-ib, through the
// paced kernel's windows: the same bytes, and every CQE at or after its ring date plus the
// profile's latencies.
int run_window_order(const char* profile) {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = stopped_one_gpu(4096, nic::QpAttributes{}, profile);
  softnic::SoftNic& engine = *layout->nics[0];
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  uint64_t* end = end_word(*layout);
  Stream stream(0);
  order_posts<<<1, 1, 0, stream.s>>>(pe.qp->handle(), pe.src, pe.src_mr.lkey, peer.dst,
                                     peer.dst_mr.rkey, end, layout->result);
  drain_then_poll(*layout, pe, end, stream);
  const auto dst = read_back(peer.dst, peer.bytes, stream.s);
  uint64_t want[12] = {};
  for (uint32_t k = 0; k < ORDER_PUTS; ++k) want[revisited_slot(k)] = 0x5000 + k;  // the last wins
  expect_slots(dst, want, 12);
  for (uint32_t k = 0; k < ORDER_WRITES; ++k) {
    const size_t at = ORDER_WRITES_AT + (ORDER_WRITES - 1 - k) * ORDER_WRITE_BYTES;
    for (uint32_t b = 0; b < ORDER_WRITE_BYTES; ++b) {
      GT_CHECK(dst[at + b] == pattern_byte(k, b), "write %u byte %u", k, b);
    }
  }
  const auto c = engine.counters(pe.qp->qpn());
  GT_CHECK(c.wqes_executed == ORDER_PUTS + ORDER_WRITES, "engine executed %llu WQEs",
           static_cast<unsigned long long>(c.wqes_executed));
  GT_CHECK(c.cqes_written == ORDER_PUTS + ORDER_WRITES, "%llu CQEs",
           static_cast<unsigned long long>(c.cqes_written));
  const softnic::TimingProfile& p = engine.profile();
  if (p.enabled != 0) {
    const softnic::QpContext qp = engine.qp_context(pe.qp->qpn());
    const auto cqes = read_back(reinterpret_cast<const uint8_t*>(qp.send_cq.cqes),
                                size_t{qp.send_cq.cqe_count} * sizeof(mlx5::mlx5_cqe64), stream.s);
    const uint64_t latency = p.doorbell_to_data_ns + softnic::cqe_release_ns(p, 0);
    for (uint32_t n = 0; n < ORDER_PUTS + ORDER_WRITES; ++n) {
      mlx5::mlx5_cqe64 cqe;
      std::memcpy(&cqe, &cqes[(n % qp.send_cq.cqe_count) * sizeof cqe], sizeof cqe);
      const softnic::CqeTimes t = softnic::cqe_times(cqe);
      GT_CHECK(t.rung_to_stamp_ns != softnic::CQE_TIME_UNKNOWN && t.rung_to_stamp_ns >= latency,
               "CQE %u: %u ns after its ring date, the profile asks %llu", n, t.rung_to_stamp_ns,
               static_cast<unsigned long long>(latency));
    }
  }
  std::printf("ok: %s: %u puts to revisited slots and %u descending writes: the bytes of one WQE at a "
              "time\n", profile, ORDER_PUTS, ORDER_WRITES);
  return 0;
}

// Slot of 8 B put k in run_backlog_runs, 192 puts rung with the engine stopped, so that the engine
// finds them as one backlog and takes them in express passes of up to four windows (express.h,
// EXPRESS_RUN): puts 0-63 ascending; 64-127 with the second 32 below the first; 128-191 writing
// slots 128-159 twice, put 160 + j where put 129 + j did (a window of a run overwriting the one
// before it, a lane apart: the later put's value is the one left).
DISSECT_HD inline uint32_t run_slot(uint32_t k) {
  if (k < 64) return k;
  if (k < 128) return 64 + (k - 64 + 32) % 64;
  return 128 + (k < 160 ? k : k + 1) % 32;
}
constexpr uint32_t RUN_PUTS = 192, RUN_SLOTS = 160, RUN_SIGNAL_EVERY = 16;

__global__ void run_posts(nic::QpHandle qp, uint8_t* dst, uint32_t rkey, uint64_t* end, uint32_t* result) {
  gda::OwnedQp owned = gda::own(qp);
  uint32_t status = 0;
  for (uint32_t k = 0; k < RUN_PUTS && status == 0; ++k) {
    const gda::Completion c = (k + 1) % RUN_SIGNAL_EVERY == 0 ? gda::Completion::signaled
                                                                   : gda::Completion::unsignaled;
    status = static_cast<uint32_t>(gda::put_value<gda::ordering::gpu_fence>(
        owned, 0x7000 + k, 8, reinterpret_cast<uint64_t>(dst + 8 * run_slot(k)), rkey, c, end));
  }
  gda::disown(owned);
  *result = status;
}

// Express passes over a backlog on the GPU engine: the bytes, WQE count and CQEs of one WQE at a
// time.
int run_backlog_runs() {
  if (device_count_or_skip() == 0) return SKIP;
  nic::QpAttributes a;
  a.sq_wqebbs = 256;
  auto layout = stopped_one_gpu(8 * RUN_SLOTS, a);
  softnic::SoftNic& engine = *layout->nics[0];
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  uint64_t* end = end_word(*layout);
  Stream stream(0);
  run_posts<<<1, 1, 0, stream.s>>>(pe.qp->handle(), peer.dst, peer.dst_mr.rkey, end, layout->result);
  drain_then_poll(*layout, pe, end, stream);
  const auto dst = read_back(peer.dst, peer.bytes, stream.s);
  uint64_t want[RUN_SLOTS] = {};
  for (uint32_t k = 0; k < RUN_PUTS; ++k) want[run_slot(k)] = 0x7000 + k;  // the last wins
  expect_slots(dst, want, RUN_SLOTS);
  const auto c = engine.counters(pe.qp->qpn());
  GT_CHECK(c.wqes_executed == RUN_PUTS, "engine executed %llu WQEs", static_cast<unsigned long long>(c.wqes_executed));
  GT_CHECK(c.cqes_written == RUN_PUTS / RUN_SIGNAL_EVERY, "%llu CQEs",
           static_cast<unsigned long long>(c.cqes_written));
  const softnic::QpContext qp = engine.qp_context(pe.qp->qpn());
  const auto cqes = read_back(reinterpret_cast<const uint8_t*>(qp.send_cq.cqes),
                              size_t{qp.send_cq.cqe_count} * sizeof(mlx5::mlx5_cqe64), stream.s);
  for (uint32_t n = 0; n < RUN_PUTS / RUN_SIGNAL_EVERY; ++n) {
    mlx5::mlx5_cqe64 cqe;
    std::memcpy(&cqe, &cqes[(n % qp.send_cq.cqe_count) * sizeof cqe], sizeof cqe);
    const uint16_t wqe = static_cast<uint16_t>((n + 1) * RUN_SIGNAL_EVERY - 1);
    GT_CHECK(cqe.op_own >> 4 == mlx5::MLX5_CQE_REQ && cqe.wqe_counter.value() == wqe,
             "CQE %u: opcode %u, WQE %u (one WQE at a time: a requester CQE of WQE %u)", n, cqe.op_own >> 4,
             cqe.wqe_counter.value(), wqe);
  }
  std::printf("ok: %u puts in one backlog (ascending, wrapped, overwritten a window later): the "
              "bytes and CQEs of one WQE at a time\n", RUN_PUTS);
  return 0;
}

// Many threads share one QP (Sharing::shared): each posts `per_thread` 8-byte inline puts.
template <typename Policy>
__global__ void shared_puts(nic::QpHandle qp, uint8_t* dst, uint32_t rkey, uint32_t per_thread,
                            uint32_t* failures) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  for (uint32_t k = 0; k < per_thread; ++k) {
    const uint64_t value = (uint64_t{t} << 32) | (k + 1);
    uint64_t end = 0;
    gda::InlineWriteRequest r{&value, 8,
                              reinterpret_cast<uint64_t>(dst + (size_t{t} * per_thread + k) * 8), rkey};
    gda::Status s = gda::put_inline<Policy, gda::Sharing::shared>(qp, r, gda::Completion::signaled, &end);
    if (s == gda::Status::ok) s = gda::wait_completion<Policy, gda::Sharing::shared>(qp, end);
    if (s != gda::Status::ok) atomicAdd(failures, 1u);
  }
}

int run_shared(uint32_t threads) {
  if (device_count_or_skip() == 0) return SKIP;
  using Policy = gda::ordering::gpu_fence;
  constexpr uint32_t per_thread = 16;
  nic::QpAttributes a;
  a.sq_wqebbs = 256;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu,
                            size_t{threads} * per_thread * 8, a);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  uint32_t* failures = layout->result;
  *failures = 0;
  Stream stream(0);
  shared_puts<Policy><<<1, threads, 0, stream.s>>>(pe.qp->handle(), peer.dst, peer.dst_mr.rkey,
                                                   per_thread, failures);
  GT_CHECK(wait_stream(stream.s, 15), "kernel did not finish: %s", pe.nic->describe_status().c_str());
  GT_CHECK(*failures == 0, "%u puts failed", *failures);
  const auto dst = read_back(peer.dst, peer.bytes, stream.s);
  for (uint32_t t = 0; t < threads; ++t) {
    for (uint32_t k = 0; k < per_thread; ++k) {
      uint64_t v;
      std::memcpy(&v, &dst[(size_t{t} * per_thread + k) * 8], 8);
      GT_CHECK(v == ((uint64_t{t} << 32) | (k + 1)), "thread %u put %u landed %llx", t, k,
               static_cast<unsigned long long>(v));
    }
  }
  std::printf("ok: %u threads shared one QP: %u puts landed\n", threads, threads * per_thread);
  return 0;
}

// QPs served by the GPU engine at once, each connected to itself: thread q puts on QP q, then
// quiets it. Two sets (QpSet):
// - sharing one send CQ in GPU memory (nic.h CompletionQueue), each QP on its own engine warp
//   (QP q on warp q), every thread's quiet polling the one CQ for all of them (Sharing::shared:
//   several pollers);
// - more QPs than one engine warp watches (gpu_kernel.cu: WATCHED_SLOTS), on an engine of one warp,
//   each with its own CQ: slots 32 and on are found by the engine's sweep (has_news), and a QP it
//   passed over with work would leave its quiet waiting. Under cx7-ib the paced kernel sweeps
//   (its own copy of the engine loop, gpu_kernel.cu), its windows held to their dates.
constexpr uint32_t QP_SET_PUTS = 96;
// Shared CQ: one engine warp each with the default engine (4 x 8 warps); many QPs: slots 0-99 of
// one warp, three sweeps past the watched 32.
constexpr uint32_t SHARED_CQ_QPS = 16, MANY_QPS = 100;

DISSECT_HD inline uint64_t qp_set_value(uint32_t q, uint32_t i) { return (uint64_t{q + 1} << 32) | (i + 1); }

__global__ void qp_set_puts(const nic::QpHandle* qps, uint8_t* dst, uint32_t rkey, bool wait,
                            uint32_t* failures) {
  using Policy = gda::ordering::gpu_fence;
  const uint32_t q = threadIdx.x;
  gda::Status s = gda::Status::ok;
  for (uint32_t i = 0; i < QP_SET_PUTS && s == gda::Status::ok; ++i) {
    uint64_t end = 0;
    s = gda::put_value<Policy, gda::Sharing::shared>(
        qps[q], qp_set_value(q, i), 8,
        reinterpret_cast<uint64_t>(dst + (size_t{q} * QP_SET_PUTS + i) * 8), rkey,
        gda::Completion::signaled, &end);
    if (s == gda::Status::ok && wait && i % 8 == 7) s = gda::quiet<Policy, gda::Sharing::shared>(qps[q]);
  }
  if (s != gda::Status::ok) atomicAdd(failures, 1u);
}

__global__ void qp_set_quiet(const nic::QpHandle* qps, uint32_t* failures) {
  using Policy = gda::ordering::gpu_fence;
  if (gda::quiet<Policy, gda::Sharing::shared>(qps[threadIdx.x]) != gda::Status::ok) atomicAdd(failures, 1u);
}

struct QpSet {
  uint32_t qps;
  bool shared_cq;
  uint32_t engine_warps;  // one CTA of them; 0: gpu_engine_options' engine
  // The engine stopped while a kernel posts, drain(), then a kernel polls (the form
  // compute-sanitizer runs); otherwise the engine runs beside the putting kernel.
  bool stepped;
  const char* profile = "fast";  // the NIC's timing profile: "fast" runs the fast kernel
};

int run_qp_set(const QpSet& set) {
  if (device_count_or_skip() == 0) return SKIP;
  softnic::SoftNicOptions o = softnic::gpu_engine_options();
  o.start_engine = false;
  o.profile = softnic::timing_profile(set.profile);
  if (set.engine_warps != 0) {
    o.engine_ctas = 1;
    o.engine_warps_per_cta = set.engine_warps;
  }
  softnic::SoftNic nic(o);
  auto pd = nic.create_pd();
  std::unique_ptr<nic::CompletionQueue> cq;
  if (set.shared_cq) {
    nic::CqAttributes c;
    c.cqe_entries = set.qps * 128;  // 128 WQEBBs a QP
    c.max_members = set.qps;
    c.placement = nic::Placement::gpu;
    cq = nic.create_cq(c);
  }
  const size_t bytes = size_t{set.qps} * QP_SET_PUTS * 8;
  auto* dst = static_cast<uint8_t*>(nic.allocate(bytes, nic::Placement::gpu));
  const nic::MemoryRegion mr = pd->register_memory(dst, bytes, nic::ACCESS_ALL);
  std::vector<std::unique_ptr<nic::QueuePair>> qps;
  std::vector<nic::QpHandle> handles;
  for (uint32_t q = 0; q < set.qps; ++q) {
    nic::QpAttributes a;
    a.sq_wqebbs = 128;
    a.placement = nic::Placement::gpu;
    a.send_cq = cq.get();
    qps.push_back(pd->create_qp(a));
    qps.back()->connect(qps.back()->endpoint());
    handles.push_back(qps.back()->handle());
    GT_CHECK(!cq || handles.back().send_cq.shared == cq->handle().shared, "QP %u's handle names another CQ", q);
  }
  auto* device_handles = static_cast<nic::QpHandle*>(nic.allocate(sizeof(nic::QpHandle) * set.qps, nic::Placement::gpu));
  auto* failures = static_cast<uint32_t*>(nic.allocate(64, nic::Placement::host));
  Stream stream(0);
  GT_CHECK(cudaMemcpyAsync(device_handles, handles.data(), sizeof(nic::QpHandle) * set.qps,
                           cudaMemcpyHostToDevice, stream.s) == cudaSuccess && wait_stream(stream.s, 15),
           "copy of the handles");
  *failures = 0;
  softnic::preload_kernel(reinterpret_cast<const void*>(&qp_set_puts), "qp_set_puts");
  softnic::preload_kernel(reinterpret_cast<const void*>(&qp_set_quiet), "qp_set_quiet");
  if (!set.stepped) nic.start();
  qp_set_puts<<<1, set.qps, 0, stream.s>>>(device_handles, dst, mr.rkey, !set.stepped, failures);
  GT_CHECK(wait_stream(stream.s, 15), "putting kernel did not finish: %s", nic.describe_status().c_str());
  if (set.stepped) nic.drain();
  qp_set_quiet<<<1, set.qps, 0, stream.s>>>(device_handles, failures);
  GT_CHECK(wait_stream(stream.s, 15), "quiet kernel did not finish: %s", nic.describe_status().c_str());
  GT_CHECK(*failures == 0, "%u QPs failed", *failures);
  const auto landed = read_back(dst, bytes, stream.s);
  for (uint32_t q = 0; q < set.qps; ++q) {
    for (uint32_t i = 0; i < QP_SET_PUTS; ++i) {
      uint64_t v;
      std::memcpy(&v, &landed[(size_t{q} * QP_SET_PUTS + i) * 8], 8);
      GT_CHECK(v == qp_set_value(q, i), "QP %u put %u landed %llx", q, i, static_cast<unsigned long long>(v));
    }
    const uint64_t executed = nic.counters(qps[q]->qpn()).wqes_executed;
    GT_CHECK(executed == QP_SET_PUTS, "QP %u: the engine executed %llu WQEs", q,
             static_cast<unsigned long long>(executed));
  }
  if (cq) {
    nic::SharedCqState state;
    const auto raw = read_back(cq->handle().shared, sizeof state, stream.s);
    std::memcpy(&state, raw.data(), sizeof state);
    GT_CHECK(state.ci == uint64_t{set.qps} * QP_SET_PUTS, "the CQ's pollers consumed %llu CQEs",
             static_cast<unsigned long long>(state.ci));
    GT_CHECK(state.orphan_cqes == 0, "%llu orphan CQEs", static_cast<unsigned long long>(state.orphan_cqes));
  }
  nic.stop();
  qps.clear();
  cq.reset();
  pd->deregister_memory(mr);
  std::printf("ok: %u QPs%s on %u engine warps (%s, %s): %u puts landed\n", set.qps,
              set.shared_cq ? " sharing one CQ" : "", o.engine_ctas * o.engine_warps_per_cta,
              set.stepped ? "stepped" : "engine running", set.profile, set.qps * QP_SET_PUTS);
  return 0;
}

__global__ void never_launched_before(uint32_t* word, uint32_t value) { *word = value; }

int run_never_launched_kernel() {
  if (device_count_or_skip() == 0) return SKIP;
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  std::printf("CUDA_MODULE_LOADING=%s\n", loading ? loading : "(unset)");
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096);
  GT_CHECK(layout->nics[0]->running(), "engine not running");
  uint32_t* word = layout->result;
  Stream stream(0);
  never_launched_before<<<1, 1, 0, stream.s>>>(word, 0xabcd);
  GT_CHECK(wait_stream(stream.s, 10),
           "a never-launched kernel did not finish within 10 s while the engine runs "
           "(module-loading deadlock)");
  GT_CHECK(*word == 0xabcd, "kernel wrote %x", *word);
  std::printf("ok: a never-before-launched kernel ran while the engine ran\n");
  return 0;
}

int run_restart() {
  if (device_count_or_skip() == 0) return SKIP;
  using Policy = gda::ordering::gpu_fence;
  constexpr uint32_t n = 16;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu,
                            size_t{2 * n} * SLOT);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  softnic::SoftNic& nic0 = *layout->nics[0];
  uint32_t* result = layout->result;
  Stream stream(0);
  for (uint32_t round = 0; round < 3; ++round) {
    nic0.stop();
    GT_CHECK(!nic0.running(), "stopped");
    GT_CHECK(nic0.status().phase == softnic::ENGINE_EXITED, "phase after stop: %u", nic0.status().phase);
    nic0.start();
    *result = 0xffffffffu;
    single_thread_puts<Policy><<<1, 1, 0, stream.s>>>(pe.qp->handle(), pe.src, pe.src_mr.lkey,
                                                       peer.dst, peer.dst_mr.rkey, n, 0, 100 + round,
                                                       result);
    GT_CHECK(wait_stream(stream.s, 15), "round %u: %s", round, nic0.describe_status().c_str());
    GT_CHECK(*result == 0, "round %u: status %u", round, *result);
    expect_single_thread_payloads(read_back(peer.dst, peer.bytes, stream.s), n, 0, 100 + round);
  }
  GT_CHECK(nic0.status().generation == 4, "generation %u", nic0.status().generation);
  std::printf("ok: engine stopped and restarted 3 times, queues resumed: %s\n",
              nic0.describe_status().c_str());
  return 0;
}

template <typename Policy>
__global__ void bad_rkey_put(nic::QpHandle qp, uint8_t* dst, uint32_t rkey, uint32_t* result) {
  uint64_t value = 42, end = 0;
  gda::InlineWriteRequest r{&value, 8, reinterpret_cast<uint64_t>(dst), rkey};
  gda::Status s = gda::put_inline<Policy>(qp, r, gda::Completion::signaled, &end);
  if (s == gda::Status::ok) s = gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end);
  *result = static_cast<uint32_t>(s) | (qp.state->error << 8);
}

// What one inline put of PE 0 completed with (bad_rkey_put's result).
struct PutOutcome {
  uint32_t status, syndrome;
};

PutOutcome put_once(Layout& layout, uint8_t* dst, uint32_t rkey, Stream& stream) {
  bad_rkey_put<gda::ordering::gpu_fence><<<1, 1, 0, stream.s>>>(layout.pe[0].qp->handle(), dst, rkey,
                                                                 layout.result);
  if (!wait_stream(stream.s, 15)) return PutOutcome{~0u, 0};
  return PutOutcome{*layout.result & 0xff, (*layout.result >> 8) & 0xff};
}

int run_error_cqe() {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  const PutOutcome put = put_once(*layout, peer.dst, peer.dst_mr.rkey ^ 0x5500, stream);
  GT_CHECK(put.status == static_cast<uint32_t>(gda::Status::cq_error), "status %u", put.status);
  GT_CHECK(put.syndrome == dissect::mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "syndrome %x", put.syndrome);
  const auto st = pe.nic->status();
  GT_CHECK(st.last_syndrome == put.syndrome && st.last_error_qpn == pe.qp->qpn(),
           "engine status: %s", pe.nic->describe_status().c_str());
  const auto dst = read_back(peer.dst, 64, stream.s);
  for (int b = 0; b < 64; ++b) GT_CHECK(dst[b] == 0, "bad-rkey write touched byte %d", b);
  std::printf("ok: bad rkey -> error CQE 0x%x; engine status: %s\n", put.syndrome,
              pe.nic->describe_status().c_str());
  return 0;
}

// A put after the responder's region was deregistered fails with REMOTE_ACCESS_ERR and lands
// nothing, though the put before it, with the same key and QP, succeeded: the engine's copy of
// the QP holds no memory key.
int run_deregistered_key() {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096);
  Pe& peer = layout->pe[1];
  Stream stream(0);
  const PutOutcome first = put_once(*layout, peer.dst, peer.dst_mr.rkey, stream);
  GT_CHECK(first.status == static_cast<uint32_t>(gda::Status::ok), "first put: status %u", first.status);
  peer.pd->deregister_memory(peer.dst_mr);
  const PutOutcome second = put_once(*layout, peer.dst + 8, peer.dst_mr.rkey, stream);
  GT_CHECK(second.status == static_cast<uint32_t>(gda::Status::cq_error), "second put: status %u",
           second.status);
  GT_CHECK(second.syndrome == dissect::mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "syndrome %x",
           second.syndrome);
  const auto dst = read_back(peer.dst, 16, stream.s);
  for (int b = 8; b < 16; ++b) GT_CHECK(dst[b] == 0, "the write after deregistration landed byte %d", b);
  std::printf("ok: a put after deregister_memory -> error CQE 0x%x, nothing landed\n", second.syndrome);
  return 0;
}

// Two PEs exchange. Each round, PE `me` puts a pointer payload and an inline payload into its
// peer's buffer, then an 8-byte flag; the peer polls the flag (a data word) in its own buffer.
// `peer_dst` is only ever a raddr: in the two-process layout it is the peer process's address.
template <typename Policy>
__device__ uint32_t pe_rounds(uint32_t me, const nic::QpHandle& qp, uint8_t* src, uint32_t lkey,
                              uint8_t* peer_dst, uint32_t peer_rkey, uint64_t* my_flag,
                              uint32_t rounds) {
  uint32_t status = 0;
  for (uint32_t r = 0; r < rounds && status == 0; ++r) {
    const uint32_t seed = me * 10000 + r;
    uint8_t* s = src + SLOT * (1 + r % 8);
    for (uint32_t b = 0; b < 100; ++b) s[b] = pattern_byte(seed, b);
    uint64_t end = 0;
    gda::WriteRequest w{reinterpret_cast<uint64_t>(s), lkey, 100,
                        reinterpret_cast<uint64_t>(peer_dst + SLOT * (1 + 2 * r)), peer_rkey};
    status = static_cast<uint32_t>(gda::put<Policy>(qp, w, gda::Completion::unsignaled, &end));
    uint8_t payload[60];
    for (uint32_t b = 0; b < 60; ++b) payload[b] = pattern_byte(seed + 5000, b);
    gda::InlineWriteRequest iw{payload, 60, reinterpret_cast<uint64_t>(peer_dst + SLOT * (2 + 2 * r)),
                               peer_rkey};
    if (status == 0) status = static_cast<uint32_t>(gda::put_inline<Policy>(qp, iw, gda::Completion::unsignaled, &end));
    const uint64_t flag = r + 1;
    gda::InlineWriteRequest fw{&flag, 8, reinterpret_cast<uint64_t>(peer_dst), peer_rkey};
    if (status == 0) status = static_cast<uint32_t>(gda::put_inline<Policy>(qp, fw, gda::Completion::signaled, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
    // Wait for the peer's round r (the flag lands after its payloads: one QP executes in order).
    const uint64_t began = dissect::now_ns();
    while (status == 0 && dissect::load_acquire<dissect::Scope::system>(my_flag) < r + 1) {
      if (dissect::now_ns() - began > 5'000'000'000ull) status = 100 + r;
    }
  }
  return status;
}

// Both PEs in one launch: block b is PE b.
template <typename Policy>
__global__ void pe_exchange(nic::QpHandle qp0, nic::QpHandle qp1, uint8_t* src0, uint8_t* src1,
                            uint32_t lkey0, uint32_t lkey1, uint8_t* dst0, uint8_t* dst1,
                            uint32_t rkey0, uint32_t rkey1, uint32_t rounds, uint32_t* result) {
  if (threadIdx.x != 0) return;
  const uint32_t me = blockIdx.x;
  result[me] = pe_rounds<Policy>(me, me == 0 ? qp0 : qp1, me == 0 ? src0 : src1,
                                 me == 0 ? lkey0 : lkey1, me == 0 ? dst1 : dst0,
                                 me == 0 ? rkey1 : rkey0,
                                 reinterpret_cast<uint64_t*>(me == 0 ? dst0 : dst1), rounds);
}

// One PE per process (one thread).
template <typename Policy>
__global__ void pe_exchange_one(nic::QpHandle qp, uint32_t me, uint8_t* src, uint32_t lkey,
                                uint8_t* my_dst, uint8_t* peer_dst, uint32_t peer_rkey,
                                uint32_t rounds, uint32_t* result) {
  *result = pe_rounds<Policy>(me, qp, src, lkey, peer_dst, peer_rkey,
                              reinterpret_cast<uint64_t*>(my_dst), rounds);
}

// What PE `writer` put into its peer's buffer `dst` over `rounds` rounds, byte for byte.
void expect_pe_payloads(const std::vector<uint8_t>& dst, uint32_t writer, uint32_t rounds) {
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t seed = writer * 10000 + r;
    for (uint32_t x = 0; x < 100; ++x)
      GT_CHECK(dst[SLOT * (1 + 2 * r) + x] == pattern_byte(seed, x), "PE %u round %u byte %u", writer, r, x);
    for (uint32_t x = 0; x < 60; ++x)
      GT_CHECK(dst[SLOT * (2 + 2 * r) + x] == pattern_byte(seed + 5000, x), "PE %u inline round %u", writer, r);
  }
  uint64_t flag = 0;
  std::memcpy(&flag, dst.data(), 8);
  GT_CHECK(flag == rounds, "PE %u's last flag is %llu, expected %u", writer,
           static_cast<unsigned long long>(flag), rounds);
}

int run_pe_layout(const std::string& layout_name, softnic::EngineKind engine,
                  nic::Placement placement) {
  const int devices = device_count_or_skip();
  if (devices == 0) return SKIP;
  if (layout_name == "two-gpus" && devices < 2) {
    std::fprintf(stderr, "two-gpus layout needs 2 CUDA devices, found %d: skipped\n", devices);
    return SKIP;
  }
  using Policy = gda::ordering::system_release_store;  // correct for every engine and placement
  constexpr uint32_t rounds = 40;
  auto layout = make_layout(layout_name, engine, placement, size_t{2 + 2 * rounds} * SLOT);
  Pe& a = layout->pe[0];
  Pe& b = layout->pe[1];
  uint32_t* result = layout->result;
  result[0] = result[1] = 0xffffffffu;
  Stream stream(0);
  pe_exchange<Policy><<<2, 1, 0, stream.s>>>(a.qp->handle(), b.qp->handle(), a.src, b.src,
                                             a.src_mr.lkey, b.src_mr.lkey, a.dst, b.dst,
                                             a.dst_mr.rkey, b.dst_mr.rkey, rounds, result);
  GT_CHECK(wait_stream(stream.s, 15), "kernel did not finish: %s", a.nic->describe_status().c_str());
  GT_CHECK(result[0] == 0 && result[1] == 0, "PE statuses %u %u", result[0], result[1]);
  for (uint32_t me = 0; me < 2; ++me) {
    expect_pe_payloads(read_back(layout->pe[1 - me].dst, layout->pe[1 - me].bytes, stream.s), me,
                       rounds);
  }
  std::printf("ok: layout %s (%s engine, %s queues): 2 PEs x %u rounds exchanged byte-exact\n",
              layout_name.c_str(), softnic::to_string(engine), nic::to_string(placement), rounds);
  return 0;
}

// The third layout: one PE per process, one GPU each, launched by environment variables
// (two_process_launch.sh env) or mpirun (two_process_launch.sh mpirun). The same exchange as
// run_pe_layout; each process checks what its peer put into its buffer, and both report both.
int run_pe_two_processes() {
  namespace bs = dissect::bootstrap;
  if (!bs::launch_environment_present() && !(bs::have_mpi() && bs::launched_by_mpi())) {
    std::fprintf(stderr,
                 "pe_two_processes: not launched as 2 ranks (run tests/gpu/gda/two_process_launch.sh "
                 "env|mpirun, or set DISSECT_RANK, DISSECT_WORLD_SIZE=2, DISSECT_BOOTSTRAP): skipped\n");
    return SKIP;
  }
  const int devices = device_count_or_skip();
  if (devices == 0) return SKIP;
  auto boot = bs::create_bootstrap();
  if (boot->world_size() != 2) {
    std::fprintf(stderr, "pe_two_processes: launched as %d ranks, needs exactly 2: skipped\n",
                 boot->world_size());
    return SKIP;
  }
  const uint32_t me = static_cast<uint32_t>(boot->rank());
  const int device = boot->local_rank() % devices;
  GT_CUDA(cudaSetDevice(device));  // before any softnic call: no context on the peer's GPU
  struct Gpu { char pci[32]; };
  Gpu mine_gpu{};
  GT_CUDA(cudaDeviceGetPCIBusId(mine_gpu.pci, sizeof mine_gpu.pci, device));
  const auto gpus = bs::allgather_value(*boot, mine_gpu);
  if (std::strcmp(gpus[0].pci, gpus[1].pci) == 0) {
    std::fprintf(stderr, "pe_two_processes: both ranks got GPU %s (%d visible per process): the "
                 "layout needs 2 GPUs, one per process: skipped\n", gpus[0].pci, devices);
    return SKIP;
  }

  using Policy = gda::ordering::system_release_store;
  constexpr uint32_t rounds = 40;
  const size_t bytes = size_t{2 + 2 * rounds} * SLOT;
  softnic::SoftNicOptions o = softnic::gpu_engine_options();
  o.device = device;
  o.engine = softnic::EngineKind::gpu_kernel;
  o.start_engine = false;
  o.ipc_arena_bytes = 16u << 20;
  uint32_t status = 1;  // this rank's verdict: 0 pass
  {
    softnic::SoftNic nic(o);
    auto pd = nic.create_pd();
    nic::QpAttributes attributes;
    attributes.placement = nic::Placement::gpu;
    auto qp = pd->create_qp(attributes);
    auto* src = static_cast<uint8_t*>(nic.allocate(bytes, nic::Placement::gpu));
    auto* dst = static_cast<uint8_t*>(nic.allocate(bytes, nic::Placement::gpu));
    const auto src_mr = pd->register_memory(src, bytes, nic::ACCESS_ALL);
    const auto dst_mr = pd->register_memory(dst, bytes, nic::ACCESS_ALL);
    auto* result = static_cast<uint32_t*>(nic.allocate(64, nic::Placement::host));
    *result = 0xffffffffu;

    struct Offer {
      softnic::IpcExport nic;
      uint32_t qpn;
      uint32_t rkey;
      uint64_t dst;  // the owner's address: a raddr for the peer, never dereferenced there
    };
    const Offer mine{nic.ipc_export(), qp->qpn(), dst_mr.rkey, reinterpret_cast<uintptr_t>(dst)};
    const Offer peer = bs::allgather_value(*boot, mine)[1 - me];
    nic::QpEndpoint endpoint;
    endpoint.qpn = peer.qpn;
    endpoint.nic_id = nic.import_peer(peer.nic);
    qp->connect(endpoint);
    boot->barrier();  // every import is open before any engine of the pair starts
    nic.start();
    std::string failure;
    {
      Stream stream(device);
      pe_exchange_one<Policy><<<1, 1, 0, stream.s>>>(qp->handle(), me, src, src_mr.lkey, dst,
                                                     reinterpret_cast<uint8_t*>(peer.dst),
                                                     peer.rkey, rounds, result);
      try {
        GT_CHECK(wait_stream(stream.s, 30), "rank %u: kernel did not finish: %s", me,
                 nic.describe_status().c_str());
        GT_CHECK(*result == 0, "rank %u: device status %u: %s", me, *result,
                 nic.describe_status().c_str());
        expect_pe_payloads(read_back(dst, bytes, stream.s), 1 - me, rounds);
        const auto c = nic.counters(qp->qpn());
        GT_CHECK(c.error_cqes == 0 && c.wqes_executed == 3 * rounds,
                 "rank %u: engine executed %llu WQEs, %llu error CQEs", me,
                 static_cast<unsigned long long>(c.wqes_executed),
                 static_cast<unsigned long long>(c.error_cqes));
        status = 0;
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
    if (status != 0) std::fprintf(stderr, "rank %u: FAIL: %s\n", me, failure.c_str());
    // Teardown order of softnic/ipc.h: no engine runs when a mapping closes, and no arena is
    // freed while a peer still has it mapped.
    nic.stop();
    boot->barrier();
    nic.close_imports();
    boot->barrier();
    if (status == 0) {
      std::printf("rank %u (GPU %d, %s): the peer's 40 rounds landed byte-exact\n", me, device,
                  gpus[me].pci);
    }
  }
  const auto verdicts = bs::allgather_value(*boot, status);
  GT_CHECK(verdicts[0] == 0 && verdicts[1] == 0, "rank 0: %s, rank 1: %s",
           verdicts[0] == 0 ? "pass" : "FAIL", verdicts[1] == 0 ? "pass" : "FAIL");
  if (me == 0) {
    std::printf("ok: layout two-processes (%s, GPUs %s and %s, CUDA IPC arenas): 2 PEs x %u "
                "rounds exchanged byte-exact, both directions\n",
                boot->kind().c_str(), gpus[0].pci, gpus[1].pci, rounds);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using softnic::EngineKind;
  const Cases cases = {
      {"gpu_engine_gpu_queues",
       [] { return run_single_thread<gda::ordering::gpu_fence>(EngineKind::gpu_kernel, nic::Placement::gpu); }},
      {"host_engine_host_queues",
       [] { return run_single_thread<gda::ordering::system_release_store>(EngineKind::host_thread, nic::Placement::host); }},
      {"gpu_engine_host_queues",
       [] { return run_single_thread<gda::ordering::system_release_store>(EngineKind::gpu_kernel, nic::Placement::host); }},
      {"warp_shared", [] { return run_shared(32); }},
      {"cta_shared", [] { return run_shared(128); }},
      {"never_launched_kernel", [] { return run_never_launched_kernel(); }},
      {"restart", [] { return run_restart(); }},
      {"stepped_engine", [] { return run_stepped_engine(); }},
      {"window_order", [] { return run_window_order("fast"); }},
      {"window_order_cx7", [] { return run_window_order("cx7-ib"); }},
      {"backlog_runs", run_backlog_runs},
      {"shared_cq", [] { return run_qp_set({SHARED_CQ_QPS, true, 0, false}); }},
      {"shared_cq_stepped", [] { return run_qp_set({SHARED_CQ_QPS, true, 0, true}); }},
      {"many_qps_one_warp", [] { return run_qp_set({MANY_QPS, false, 1, false}); }},
      {"many_qps_one_warp_stepped", [] { return run_qp_set({MANY_QPS, false, 1, true}); }},
      {"many_qps_one_warp_cx7", [] { return run_qp_set({MANY_QPS, false, 1, false, "cx7-ib"}); }},
      {"many_qps_one_warp_cx7_stepped", [] { return run_qp_set({MANY_QPS, false, 1, true, "cx7-ib"}); }},
      {"error_cqe_reported", [] { return run_error_cqe(); }},
      {"deregistered_key", [] { return run_deregistered_key(); }},
      {"pe_one_gpu", [] { return run_pe_layout("one-gpu", EngineKind::gpu_kernel, nic::Placement::gpu); }},
      {"pe_one_gpu_host_engine", [] { return run_pe_layout("one-gpu", EngineKind::host_thread, nic::Placement::host); }},
      {"pe_two_gpus", [] { return run_pe_layout("two-gpus", EngineKind::gpu_kernel, nic::Placement::gpu); }},
      {"pe_two_processes", [] { return run_pe_two_processes(); }},
  };
  return run_cases(argc, argv, cases);
}
