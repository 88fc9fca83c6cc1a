// The CPU-assisted doorbell on the GPU softnic (nic::DoorbellPath::cpu_assisted): a GPU thread
// builds WQEs and writes the dbrec, stores its doorbell into the QP's mailbox in mapped host memory,
// and the softnic's forwarder thread forwards it to the engine's register; the engine (kernel or
// host thread) executes, the GPU thread waits for the CQE, the host validates every payload byte.
//
//   cpu_doorbell_gpu_test <case>     exit 0 pass, 1 fail, 77 skipped (reason on stderr)
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/gda/gda.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_cases.h"

namespace gda = dissect::gda;
namespace nic = dissect::nic;
namespace softnic = dissect::softnic;
using dissect::gputest::SKIP;

namespace {

// The mailbox's observer is a host thread: the submitter needs a system-scope policy (nic.h);
// the one gpu-rate's cpu-assisted rows use (one system-scope release fence a doorbell).
using Policy = gda::ordering::system_release_fence;
constexpr uint32_t kWrites = 512;
constexpr uint32_t kSlot = 64;
constexpr uint32_t kSignalEvery = 16;  // signalled WQEs retire the ring's slots for reuse

DISSECT_HD inline uint8_t pattern(uint32_t i, uint32_t b) {
  return static_cast<uint8_t>(((i * 2654435761u) ^ (b * 40503u + 0x9e37u)) >> 7) | 1;
}

#define CHECK_CUDA(call)                                                                \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    GT_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));               \
  } while (0)

// One thread posts `n` pointer writes (every kSignalEvery-th and the last signalled), then waits
// for the last completion. `result`: the first non-ok gda::Status, 0 when all went well.
__global__ void post_through_mailbox(nic::QpHandle qp, uint8_t* src, uint32_t lkey, uint8_t* dst,
                                     uint32_t rkey, uint32_t n, uint32_t* result) {
  uint32_t status = 0;
  uint64_t end = 0;
  for (uint32_t i = 0; i < n && status == 0; ++i) {
    uint8_t* s = src + size_t{i} * kSlot;
    for (uint32_t b = 0; b < kSlot; ++b) s[b] = pattern(i, b);
    const bool signaled = i + 1 == n || i % kSignalEvery == kSignalEvery - 1;
    const gda::WriteRequest r{reinterpret_cast<uint64_t>(s), lkey, kSlot,
                              reinterpret_cast<uint64_t>(dst + size_t{i} * kSlot), rkey};
    status = static_cast<uint32_t>(gda::put<Policy>(
        qp, r, signaled ? gda::Completion::signaled : gda::Completion::unsignaled, &end));
  }
  if (status == 0) {
    status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  *result = status;
}

bool wait_stream(cudaStream_t s, double seconds) {
  const auto began = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return true;
    GT_CHECK(q == cudaErrorNotReady, "kernel failed: %s", cudaGetErrorString(q));
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > seconds)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

int run_case(softnic::EngineKind engine, nic::Placement placement) {
  if (softnic::gpu_runtime_init() == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return SKIP;
  }
  softnic::SoftNicOptions o = softnic::gpu_engine_options();
  o.engine = engine;
  o.start_engine = false;  // set everything up first: allocation calls never race the engine
  auto softnic_nic = std::make_unique<softnic::SoftNic>(o);
  softnic::SoftNic& n = *softnic_nic;
  auto pd = n.create_pd();
  const size_t bytes = size_t{kWrites} * kSlot;
  auto* src = static_cast<uint8_t*>(n.allocate(bytes, placement));
  auto* dst = static_cast<uint8_t*>(n.allocate(bytes, placement));
  const nic::MemoryRegion src_mr = pd->register_memory(src, bytes, nic::ACCESS_ALL);
  const nic::MemoryRegion dst_mr = pd->register_memory(dst, bytes, nic::ACCESS_ALL);
  auto* result = static_cast<uint32_t*>(n.allocate(64, nic::Placement::host));
  *result = 0xffffffffu;
  nic::QpAttributes a;
  a.placement = placement;
  a.doorbell = nic::DoorbellPath::cpu_assisted;
  auto requester = pd->create_qp(a);
  a.doorbell = nic::DoorbellPath::direct;
  auto responder = pd->create_qp(a);
  requester->connect(responder->endpoint());
  responder->connect(requester->endpoint());
  n.start();

  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  post_through_mailbox<<<1, 1, 0, stream>>>(requester->handle(), src, src_mr.lkey, dst,
                                            dst_mr.rkey, kWrites, result);
  CHECK_CUDA(cudaGetLastError());
  GT_CHECK(wait_stream(stream, 20), "the submitter kernel did not finish in 20 s: %s",
           n.describe_status().c_str());
  GT_CHECK(*result == 0, "device status %u (gda::Status): %s", *result, n.describe_status().c_str());
  std::vector<uint8_t> out(bytes);
  CHECK_CUDA(cudaMemcpyAsync(out.data(), dst, bytes, cudaMemcpyDefault, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
  for (uint32_t i = 0; i < kWrites; ++i) {
    for (uint32_t b = 0; b < kSlot; ++b) {
      GT_CHECK(out[size_t{i} * kSlot + b] == pattern(i, b), "write %u byte %u: 0x%02x", i, b,
               out[size_t{i} * kSlot + b]);
    }
  }
  const uint32_t qpn = requester->qpn();
  const softnic::ModelCounters c = n.counters(qpn);
  GT_CHECK(c.wqes_executed == kWrites, "engine executed %llu WQEs of %u",
           static_cast<unsigned long long>(c.wqes_executed), kWrites);
  GT_CHECK(c.error_cqes == 0 && c.bad_doorbells == 0, "%llu error CQEs, %llu bad doorbells",
           static_cast<unsigned long long>(c.error_cqes),
           static_cast<unsigned long long>(c.bad_doorbells));
  const softnic::ForwarderCounters f = n.forwarder_counters(qpn);
  GT_CHECK(f.doorbells_forwarded >= 1 && f.doorbells_forwarded <= f.mailbox_updates &&
               f.mailbox_updates <= kWrites,
           "forwarder counters: %llu mailbox updates, %llu forwarded, %u doorbells rung",
           static_cast<unsigned long long>(f.mailbox_updates),
           static_cast<unsigned long long>(f.doorbells_forwarded), kWrites);
  std::printf("ok: %s engine, %s queues, cpu-assisted: %u writes, %llu mailbox updates seen, "
              "%llu doorbells forwarded, %llu seen by the engine\n",
              softnic::to_string(engine), nic::to_string(placement), kWrites,
              static_cast<unsigned long long>(f.mailbox_updates),
              static_cast<unsigned long long>(f.doorbells_forwarded),
              static_cast<unsigned long long>(c.doorbells));
  n.stop();
  requester.reset();
  responder.reset();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using softnic::EngineKind;
  return dissect::gputest::run_cases(
      argc, argv,
      {{"gpu_engine_gpu_queues", [] { return run_case(EngineKind::gpu_kernel, nic::Placement::gpu); }},
       {"gpu_engine_host_queues", [] { return run_case(EngineKind::gpu_kernel, nic::Placement::host); }},
       {"host_engine_host_queues",
        [] { return run_case(EngineKind::host_thread, nic::Placement::host); }}});
}
