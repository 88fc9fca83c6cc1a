// GPU test support: skip (77) without a device, CHECK that names what failed, PEs for the three
// layouts, and the payload pattern shared by device writers and host validators.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bench/gpu_pe.h"
#include "dissect/nic/nic.h"
#include "gpu_cases.h"
#include "dissect/softnic/gpu_engine.h"

namespace dissect::gputest {

#define GT_CUDA(call)                                                                 \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    GT_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));             \
  } while (0)

// 0 devices -> prints the skip line; callers return SKIP.
inline int device_count_or_skip() {
  const int n = softnic::gpu_runtime_init();
  if (n == 0) std::fprintf(stderr, "no CUDA device: skipped\n");
  return n;
}

// A non-blocking stream on `device` for a test's kernels, destroyed with the test's scope.
struct Stream {
  cudaStream_t s = nullptr;
  explicit Stream(int device) {
    cudaSetDevice(device);
    GT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  ~Stream() { cudaStreamDestroy(s); }
};

DISSECT_HD inline uint8_t pattern_byte(uint32_t seed, uint32_t i) {
  return static_cast<uint8_t>(((seed * 2654435761u) ^ (i * 40503u + 0x9e37u)) >> 7) | 1;
}

// The 8 B value whose bytes are pattern_byte(seed, 0..7), little-endian: an 8 B put's payload.
DISSECT_HD inline uint64_t pattern_value(uint32_t seed) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < 8; ++b) v |= uint64_t{pattern_byte(seed, b)} << (8 * b);
  return v;
}

// Waits for a stream with a bound (never cudaDeviceSynchronize: the engine runs).
inline bool wait_stream(cudaStream_t s, double seconds) {
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

inline std::vector<uint8_t> read_back(const void* p, size_t n, cudaStream_t s) {
  std::vector<uint8_t> out(n);
  GT_CUDA(cudaMemcpyAsync(out.data(), p, n, cudaMemcpyDefault, s));
  GT_CUDA(cudaStreamSynchronize(s));
  return out;
}

// One processing element: a QP towards its peer, a source and a destination buffer of `bytes`.
struct Pe : bench::GpuPe {
  size_t bytes = 0;
};

struct Layout {
  std::string name;
  std::vector<std::unique_ptr<softnic::SoftNic>> nics;
  Pe pe[2];
  uint32_t* result = nullptr;  // 16 words of mapped host memory for device statuses
};

// layout "one-gpu": both PEs on one engine (device 0); "two-gpus": PE i on device i.
// `profile`: the NICs' timing profile (softnic/profile.h).
inline std::unique_ptr<Layout> make_layout(const std::string& name, softnic::EngineKind engine,
                                           nic::Placement placement, size_t bytes,
                                           nic::QpAttributes attributes = {},
                                           const char* profile = "fast") {
  auto layout = std::make_unique<Layout>();
  layout->name = name;
  const int nics = name == "two-gpus" ? 2 : 1;
  for (int d = 0; d < nics; ++d) {
    softnic::SoftNicOptions o = softnic::gpu_engine_options();
    o.device = d;
    o.engine = engine;
    o.start_engine = false;  // set everything up first: allocation calls never race the engine
    o.profile = softnic::timing_profile(profile);
    layout->nics.push_back(std::make_unique<softnic::SoftNic>(o));
  }
  if (nics == 2) GT_CHECK(softnic::enable_peer_access(0, 1), "peer access 0<->1");
  attributes.placement = placement;
  for (int i = 0; i < 2; ++i) {
    bench::open_pe(layout->pe[i], layout->nics[nics == 2 ? i : 0].get(), attributes, bytes);
    layout->pe[i].bytes = bytes;
  }
  bench::connect_pes(layout->pe[0], layout->pe[1]);
  layout->result = static_cast<uint32_t*>(layout->nics[0]->allocate(64, nic::Placement::host));
  for (int i = 0; i < 16; ++i) layout->result[i] = 0xffffffffu;
  for (auto& n : layout->nics) n->start();
  return layout;
}

}  // namespace dissect::gputest
