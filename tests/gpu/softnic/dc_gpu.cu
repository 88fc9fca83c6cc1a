// DC transport on the GPU softnic (docs/dc.md): the GPU engine executes DCI WQEs through its own
// fabric (SoftNic::open_gpu_fabric), GPU threads submit through a DCI pool (gda/dci_pool.h) with
// each policy, every DCI switching destination between two DCTs of another NIC on every WQE, with
// the full and the compact address vector; a wrong dc_key gives its error CQE and flushes the rest;
// the timing profile's DC connect is counted at the DCT (never timed).
//
//   dc_gpu_test <case>...   exit 0 pass, 1 fail, 77 skipped without a CUDA device (reason on stderr)
//
// `stepped_pool` runs the engine between kernels (SoftNic::drain): the case compute-sanitizer
// checks (scripts/device_run.sh), which serialises a persistent engine and a submitter.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/gda/dci_pool.h"
#include "dissect/gda/gda.h"
#include "dissect/mlx5/cqe.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_cases.h"

namespace gda = dissect::gda;
namespace mlx5 = dissect::mlx5;
namespace nic = dissect::nic;
namespace softnic = dissect::softnic;
using dissect::gputest::SKIP;
// GPU-resident queues rung by kernels on the engine's GPU: GPU-scope ordering suffices.
using Policy = gda::ordering::gpu_fence;
constexpr auto kShared = gda::Sharing::shared;

#define GT_CUDA(call)                                                                   \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    GT_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));               \
  } while (0)

namespace {

constexpr uint32_t kCtas = 4, kThreads = 64, kWarps = kCtas * kThreads / 32;
constexpr uint32_t kPuts = 24;  // per warp, alternating between the two DCTs
constexpr uint32_t kDcis = 3;   // fewer than warps and CTAs: every policy shares DCIs
constexpr size_t kWords = size_t{kWarps} * kPuts;

// How a case lays out its AVs: all full, all compact, or every third full.
enum class Forms : uint32_t { full, compact, mixed };

DISSECT_HD inline gda::AvForm form_of(Forms f, uint32_t i) {
  if (f == Forms::full) return gda::AvForm::full;
  if (f == Forms::compact) return gda::AvForm::compact;
  return i % 3 == 0 ? gda::AvForm::full : gda::AvForm::compact;
}
DISSECT_HD inline uint64_t value_of(uint32_t warp, uint32_t i) { return 0xdc00000000ull | (warp << 16) | i; }

struct Targets {
  gda::DcDestination to[2];
  uint64_t* words[2];  // kWords words each, slot warp * kPuts + i
  uint32_t rkey[2];
};

// Lane 0 of every warp: kPuts register-payload puts on its pool DCI, WQE i to DCT i % 2, every
// one signalled; waits for its last unless the engine is stepped. `sm`: each warp's %smid.
__global__ void pool_puts(gda::DciPool pool, Targets t, Forms forms, bool wait, uint32_t* sm,
                          uint32_t* result) {
  if (threadIdx.x % 32 != 0) return;
  const gda::SubmitterPlace at = gda::this_submitter();
  const nic::QpHandle& dci = gda::pool_dci(pool, at);
  sm[at.warp] = at.sm;
  uint64_t end = 0;
  uint32_t status = 0;
  for (uint32_t i = 0; i < kPuts && status == 0; ++i) {
    const uint32_t d = i % 2;
    status = static_cast<uint32_t>(gda::put_value_dc<Policy, kShared>(
        dci, t.to[d], form_of(forms, i), value_of(at.warp, i), 8,
        reinterpret_cast<uint64_t>(t.words[d] + size_t{at.warp} * kPuts + i), t.rkey[d],
        gda::Completion::signaled, &end));
  }
  if (status == 0 && wait) status = static_cast<uint32_t>(gda::wait_completion<Policy, kShared>(dci, end));
  result[at.warp] = status;
}

// One thread per DCI: everything it has published, complete (the stepped case's poller).
__global__ void quiet_pool(gda::DciPool pool, uint32_t* result) {
  const uint32_t k = threadIdx.x;
  if (k < pool.count) result[k] = static_cast<uint32_t>(gda::quiet<Policy, kShared>(pool.dcis[k]));
}

bool wait_stream(cudaStream_t s, double seconds) {
  const auto began = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return true;
    GT_CHECK(q == cudaErrorNotReady, "kernel failed: %s", cudaGetErrorString(q));
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// An initiator NIC (GPU engine, small: it serves kDcis DCIs) with the pool's DCIs, and a target
// NIC whose engine never runs (the initiator's engine writes into its memory) with two DCTs on
// two PDs, each with its own registered buffer.
struct DcGpuRig {
  explicit DcGpuRig(const softnic::TimingProfile& profile, uint32_t dcis = kDcis) {
    softnic::SoftNicOptions o = softnic::gpu_engine_options();
    o.engine_ctas = 1;
    o.engine_warps_per_cta = 4;
    o.profile = profile;
    o.start_engine = false;  // everything allocated first
    initiator = std::make_unique<softnic::SoftNic>(o);
    target = std::make_unique<softnic::SoftNic>(o);
    initiator_pd = initiator->create_pd();
    for (int d = 0; d < 2; ++d) {
      target_pd[d] = target->create_pd();
      nic::DctAttributes a;
      a.dc_key = 0xdc70 + d;
      dct[d] = target_pd[d]->create_dct(a);
      words[d] = static_cast<uint64_t*>(target->allocate(kWords * 8, nic::Placement::gpu));
      mr[d] = target_pd[d]->register_memory(words[d], kWords * 8, nic::ACCESS_ALL);
      const nic::DctEndpoint e = dct[d]->endpoint();
      targets.to[d] = gda::dc_destination(e.dctn, e.dc_key, e.lid);
      targets.words[d] = words[d];
      targets.rkey[d] = mr[d].rkey;
    }
    nic::QpAttributes a;
    a.sq_wqebbs = 1024;  // a stepped run posts every WQE before the engine runs
    a.placement = nic::Placement::gpu;
    for (uint32_t k = 0; k < dcis; ++k) {
      dci.push_back(initiator_pd->create_dci(a));
      handles.push_back(dci.back()->handle());
    }
    handle_array = static_cast<nic::QpHandle*>(initiator->allocate(sizeof(nic::QpHandle) * dcis, nic::Placement::gpu));
    results = static_cast<uint32_t*>(initiator->allocate(4096, nic::Placement::host));
    cudaSetDevice(0);
    GT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GT_CUDA(cudaMemcpyAsync(handle_array, handles.data(), sizeof(nic::QpHandle) * dcis, cudaMemcpyDefault, stream));
    GT_CUDA(cudaStreamSynchronize(stream));
  }
  ~DcGpuRig() {
    initiator->stop();
    cudaStreamDestroy(stream);
  }
  std::vector<uint64_t> read(int d) {
    std::vector<uint64_t> out(kWords);
    GT_CUDA(cudaMemcpyAsync(out.data(), words[d], kWords * 8, cudaMemcpyDefault, stream));
    GT_CUDA(cudaStreamSynchronize(stream));
    return out;
  }
  gda::DciPool pool(gda::DciPolicy policy) const {
    return gda::dci_pool(handle_array, static_cast<uint32_t>(handles.size()), policy);
  }
  softnic::DctContext dct_context(int d) const { return target->dct_context(dct[d]->endpoint().dctn); }

  std::unique_ptr<softnic::SoftNic> initiator, target;
  std::unique_ptr<nic::ProtectionDomain> initiator_pd, target_pd[2];
  std::unique_ptr<nic::DcTarget> dct[2];
  uint64_t* words[2] = {};
  nic::MemoryRegion mr[2];
  Targets targets{};
  std::vector<std::unique_ptr<nic::QueuePair>> dci;
  std::vector<nic::QpHandle> handles;
  nic::QpHandle* handle_array = nullptr;
  uint32_t* results = nullptr;  // mapped host memory: [0, kWarps) per warp, then kWarps SM numbers
  cudaStream_t stream = nullptr;
};

int skip_without_device() {
  if (softnic::gpu_runtime_init() != 0) return 0;
  std::fprintf(stderr, "no CUDA device: skipped\n");
  return SKIP;
}

// Every warp's words on the DCT it named, nothing on the other; each DCI executed the WQEs of the
// warps the policy gave it; each DCT received exactly its half.
void check_pool_run(DcGpuRig& rig, gda::DciPolicy policy) {
  const uint32_t* sm = rig.results + kWarps;
  const std::vector<uint64_t> got[2] = {rig.read(0), rig.read(1)};
  for (uint32_t w = 0; w < kWarps; ++w) {
    for (uint32_t i = 0; i < kPuts; ++i) {
      const size_t slot = size_t{w} * kPuts + i;
      const int d = static_cast<int>(i % 2);
      GT_CHECK(got[d][slot] == value_of(w, i), "warp %u put %u on DCT %d: %llx", w, i, d,
               static_cast<unsigned long long>(got[d][slot]));
      GT_CHECK(got[1 - d][slot] == 0, "warp %u put %u also reached DCT %d", w, i, 1 - d);
    }
  }
  std::vector<uint64_t> expected(rig.handles.size(), 0);
  for (uint32_t w = 0; w < kWarps; ++w) {
    const gda::SubmitterPlace at{w, w / (kThreads / 32), sm[w]};
    expected[gda::dci_index(policy, at, static_cast<uint32_t>(rig.handles.size()))] += kPuts;
  }
  for (size_t k = 0; k < rig.handles.size(); ++k) {
    const softnic::ModelCounters c = rig.initiator->counters(rig.handles[k].qpn);
    GT_CHECK(c.wqes_executed == expected[k], "%s: DCI %zu executed %llu WQEs, the policy gave it %llu",
             gda::to_string(policy), k, static_cast<unsigned long long>(c.wqes_executed),
             static_cast<unsigned long long>(expected[k]));
    GT_CHECK(c.error_cqes == 0, "DCI %zu: %llu error CQEs", k, static_cast<unsigned long long>(c.error_cqes));
  }
  for (int d = 0; d < 2; ++d) {
    GT_CHECK(rig.dct_context(d).rx_packets == kWords / 2, "DCT %d received %llu writes", d,
             static_cast<unsigned long long>(rig.dct_context(d).rx_packets));
  }
}

int run_pool(gda::DciPolicy policy, Forms forms) {
  if (skip_without_device() == SKIP) return SKIP;
  DcGpuRig rig(softnic::timing_profile("fast"));
  rig.initiator->start();
  pool_puts<<<kCtas, kThreads, 0, rig.stream>>>(rig.pool(policy), rig.targets, forms, true,
                                                 rig.results + kWarps, rig.results);
  GT_CUDA(cudaGetLastError());
  GT_CHECK(wait_stream(rig.stream, 20), "the pool kernel did not finish: %s", rig.initiator->describe_status().c_str());
  for (uint32_t w = 0; w < kWarps; ++w) {
    GT_CHECK(rig.results[w] == 0, "warp %u: gda status %u: %s", w, rig.results[w], rig.initiator->describe_status().c_str());
  }
  check_pool_run(rig, policy);
  GT_CHECK(rig.dct_context(0).connects + rig.dct_context(1).connects == 0, "fast counted DC connects");
  std::printf("ok: %u warps on %u DCIs %s, %u puts each switching between 2 DCTs\n", kWarps, kDcis,
              gda::to_string(policy), kPuts);
  return 0;
}

// The engine stopped while the kernel posts, drain(), then a kernel quiets every DCI.
int run_stepped_pool() {
  if (skip_without_device() == SKIP) return SKIP;
  DcGpuRig rig(softnic::timing_profile("fast"));
  const gda::DciPool pool = rig.pool(gda::DciPolicy::per_warp);
  pool_puts<<<kCtas, kThreads, 0, rig.stream>>>(pool, rig.targets, Forms::mixed, false, rig.results + kWarps,
                                                 rig.results);
  GT_CUDA(cudaGetLastError());
  GT_CHECK(wait_stream(rig.stream, 20), "the posting kernel did not finish");
  for (uint32_t w = 0; w < kWarps; ++w) GT_CHECK(rig.results[w] == 0, "warp %u: gda status %u", w, rig.results[w]);
  rig.initiator->drain();
  quiet_pool<<<1, 32, 0, rig.stream>>>(pool, rig.results);
  GT_CUDA(cudaGetLastError());
  GT_CHECK(wait_stream(rig.stream, 20), "the quiet kernel did not finish");
  for (uint32_t k = 0; k < kDcis; ++k) GT_CHECK(rig.results[k] == 0, "DCI %u: quiet status %u", k, rig.results[k]);
  check_pool_run(rig, gda::DciPolicy::per_warp);
  std::printf("ok: %u warps posted on %u DCIs, drained by the engine kernel, quieted by a third kernel\n",
              kWarps, kDcis);
  return 0;
}

// One thread: a good put to DCT 0, one with DCT 0's key off by one, a good put to DCT 1; waits for
// the last. result[0]: the wait's status, result[1]: the DCI's error word.
__global__ void wrong_key_puts(nic::QpHandle dci, Targets t, gda::DcDestination wrong, gda::AvForm form,
                               uint32_t* result) {
  const gda::DcDestination to[3] = {t.to[0], wrong, t.to[1]};
  uint64_t end = 0;
  uint32_t status = 0;
  for (uint32_t i = 0; i < 3 && status == 0; ++i) {
    const int d = i == 2 ? 1 : 0;
    status = static_cast<uint32_t>(gda::put_value_dc<Policy>(
        dci, to[i], form, 0x5100 + i, 8, reinterpret_cast<uint64_t>(t.words[d] + i), t.rkey[d],
        gda::Completion::signaled, &end));
  }
  if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(dci, end));
  result[0] = status;
  result[1] = dci.state->error;
}

int run_wrong_key(gda::AvForm form) {
  if (skip_without_device() == SKIP) return SKIP;
  DcGpuRig rig(softnic::timing_profile("fast"), 1);
  rig.initiator->start();
  const nic::DctEndpoint e = rig.dct[0]->endpoint();
  const gda::DcDestination wrong = gda::dc_destination(e.dctn, e.dc_key ^ 1, e.lid);
  wrong_key_puts<<<1, 1, 0, rig.stream>>>(rig.handles[0], rig.targets, wrong, form, rig.results);
  GT_CUDA(cudaGetLastError());
  GT_CHECK(wait_stream(rig.stream, 20), "the kernel did not finish: %s", rig.initiator->describe_status().c_str());
  GT_CHECK(rig.results[0] == static_cast<uint32_t>(gda::Status::cq_error), "wait status %u, expected cq_error",
           rig.results[0]);
  const uint8_t syndrome = nic::send_queue_error_syndrome(rig.results[1]);
  GT_CHECK(syndrome == mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "syndrome 0x%x, expected 0x%x (REMOTE_ACCESS_ERR)",
           syndrome, mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  // The flush of the third WQE may follow the error CQE the wait returned on: bounded wait for it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (rig.initiator->counters(rig.handles[0].qpn).error_cqes < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::vector<uint64_t> a = rig.read(0), b = rig.read(1);
  GT_CHECK(a[0] == 0x5100, "the good put before the error did not land: %llx", static_cast<unsigned long long>(a[0]));
  GT_CHECK(a[1] == 0, "the wrong-key put wrote %llx", static_cast<unsigned long long>(a[1]));
  GT_CHECK(b[2] == 0, "the put after the error was not flushed: %llx", static_cast<unsigned long long>(b[2]));
  const softnic::ModelCounters c = rig.initiator->counters(rig.handles[0].qpn);
  GT_CHECK(c.error_cqes == 2, "%llu error CQEs (the key error and the flush)", static_cast<unsigned long long>(c.error_cqes));
  std::printf("ok: wrong dc_key -> REMOTE_ACCESS_ERR, the next WQE flushed, %s AV\n",
              form == gda::AvForm::full ? "full" : "compact");
  return 0;
}

// One thread, one DCI: `n` puts one at a time to DCT 0 (each finds the DCI idle: a connect each),
// then one doorbell of 0, 0, 1, 1 (a connect at each change).
__global__ void connect_puts(nic::QpHandle dci, Targets t, uint32_t n, uint32_t* result) {
  gda::OwnedQp q = gda::own(dci);
  uint32_t status = 0;
  for (uint32_t i = 0; i < n && status == 0; ++i) {
    uint64_t end = 0;
    status = static_cast<uint32_t>(gda::put_value_dc<Policy>(q, t.to[0], gda::AvForm::compact, i + 1, 8,
                                                             reinterpret_cast<uint64_t>(t.words[0] + i), t.rkey[0],
                                                             gda::Completion::signaled, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(q, end));
  }
  uint64_t end = 0;
  if (status == 0) {
    status = static_cast<uint32_t>(gda::post_batch<Policy>(
        q, 4, gda::dc_value_wqebbs(gda::AvForm::full, 8), gda::Completion::signaled, &end,
        [&](const nic::QpHandle& qp, uint64_t index, uint32_t i, gda::Completion c) {
          const uint32_t d = i / 2;
          return gda::write_dc_write_value_wqe(qp, index, t.to[d], gda::AvForm::full, 0x700 + i, 8,
                                               reinterpret_cast<uint64_t>(t.words[d] + 100 + i), t.rkey[d], c);
        }));
  }
  if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(q, end));
  result[0] = status;
}

int run_connect_cx7() {
  if (skip_without_device() == SKIP) return SKIP;
  constexpr uint32_t n = 8;
  DcGpuRig rig(softnic::timing_profile("cx7-ib"), 1);
  rig.initiator->start();
  connect_puts<<<1, 1, 0, rig.stream>>>(rig.handles[0], rig.targets, n, rig.results);
  GT_CUDA(cudaGetLastError());
  GT_CHECK(wait_stream(rig.stream, 20), "the kernel did not finish: %s", rig.initiator->describe_status().c_str());
  GT_CHECK(rig.results[0] == 0, "gda status %u", rig.results[0]);
  const std::vector<uint64_t> a = rig.read(0), b = rig.read(1);
  for (uint32_t i = 0; i < n; ++i) GT_CHECK(a[i] == i + 1, "put %u: %llx", i, static_cast<unsigned long long>(a[i]));
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t v = (i < 2 ? a : b)[100 + i];
    GT_CHECK(v == 0x700 + i, "batch WQE %u: %llx", i, static_cast<unsigned long long>(v));
  }
  GT_CHECK(rig.dct_context(0).connects == n + 1, "DCT 0 accepted %u connects, the rule gives %u",
           rig.dct_context(0).connects, n + 1);
  GT_CHECK(rig.dct_context(1).connects == 1, "DCT 1 accepted %u connects, the rule gives 1",
           rig.dct_context(1).connects);
  std::printf("ok: cx7-ib: %u idle puts and a 2 + 2 burst made %u + 1 DC connects\n", n, n + 1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return dissect::gputest::run_cases(
      argc, argv,
      {
          {"switch_full_per_warp", [] { return run_pool(gda::DciPolicy::per_warp, Forms::full); }},
          {"switch_compact_per_cta", [] { return run_pool(gda::DciPolicy::per_cta, Forms::compact); }},
          {"switch_mixed_per_sm", [] { return run_pool(gda::DciPolicy::per_sm, Forms::mixed); }},
          {"stepped_pool", [] { return run_stepped_pool(); }},
          {"wrong_key_full", [] { return run_wrong_key(gda::AvForm::full); }},
          {"wrong_key_compact", [] { return run_wrong_key(gda::AvForm::compact); }},
          {"connect_cx7", [] { return run_connect_cx7(); }},
      });
}
