// The configuration of the GPU experiments on the harness's PE pair (bench/gpu/harness.cuh): the
// single-operation experiments of the paper's §4.1 on a GPU machine, with the softnic standing in
// for the NIC (results are labelled provider = "softnic": they measure the GPU side of the
// mechanism plus the model, not a ConnectX). Their flags are read in one place
// (bench/gpu/gpu_command.h) and their results are the suite's Result (results.h).
//
// Setup (paper §4.1): one GPU thread, 8 B puts, at most one outstanding. Each op is timed in-kernel
// with clock64() and converted to ns with the effective SM clock measured in the same run against
// %globaltimer (whose update step is measured and recorded too). The first `warmup` ops are
// discarded; each run reports p10/p50/p90; `runs` independent runs; the payload is validated after
// every run.
//
// Caller: a host thread, with no other engine of its own running. The functions create their own
// softnic (SoftNic) per configuration and never call cudaDeviceSynchronize.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dissect::bench {

// Progress of a GPU experiment, as the CLI prints it (bench/framework/progress.h): the runner
// says how many runs it will make before the first (`expect`, added to the total), each
// measurement (one result row) says what it measures as it starts (base_result), and each run
// reports its end. Host-side only, between kernels. Unset (the standalone CLI, the tests): nothing.
struct GpuProgress {
  std::function<void(size_t runs)> expect;
  std::function<void(const std::string& what)> begin;
  std::function<void(uint32_t run)> done;  // `run` counts from 0
  void plan(size_t runs) const {
    if (expect) expect(runs);
  }
  void measuring(const std::string& what) const {
    if (begin) begin(what);
  }
  void run_done(uint32_t run) const {
    if (done) done(run);
  }
};

// What the parse step (bench/gpu/gpu_command.cpp: parse_gpu_command) makes of an experiment's
// flags on the harness's PE pair, and all its runner reads: the run step takes this alone, so a
// test builds one by hand and runs without flags. Not a second Arguments: Arguments reads and
// validates the command line; this is the typed, checked settings that come out of it, as every
// experiment's parse step has its own (LatencyConfig, RateConfig, GoodputConfig, ...).
struct PePairConfig {
  int device = 0;                     // PE 0 (and PE 1 in the one-gpu layout)
  std::string engine = "gpu-kernel";  // "gpu-kernel" | "host-thread"
  std::string placement = "gpu";      // queue + buffer placement: "gpu" | "host"
  std::string pe_layout = "one-gpu";  // "one-gpu" (two PEs, one engine) | "two-gpus" (PE i on GPU i)
  uint32_t iterations = 1000;         // timed ops per run
  uint32_t warmup = 200;              // discarded ops per run (>= 100)
  uint32_t runs = 3;                  // independent runs
  std::string nic_profile = "fast";   // softnic timing profile: fast | cx7-ib | a profile file
  uint32_t engine_ctas = 4;           // the softnic engine kernel's size (SoftNicOptions)
  uint32_t engine_warps_per_cta = 8;
  // gpu-latency: whose device code posts and waits: "mini-gda" (gda/), or a peer library's own
  // (src/peers): "gdaki" (NCCL's DOCA GPUNetIO verbs), "nvshmem-ibgda" (NVSHMEM's IBGDA internals).
  std::string path = "mini-gda";
  // gpu-latency --transport: "rc" (the RC QP's rows), or "dc" (those, then the same puts from a DCI
  // to a DCT of the peer, in the same result); --av: the DC address vector, "full" (48 B) or
  // "compact" (16 B).
  std::string transport = "rc";
  std::string dc_av = "compact";
  GpuProgress progress;
};

// --raw: the harness keeps every run's samples in gpu::TimedMetric::samples_ns (process-wide, as the CPU
// experiments' set_keep_raw_samples; off by default: a run can hold millions of samples).
void set_keep_gpu_samples(bool keep);
bool keep_gpu_samples();

// CUDA's name of `device` ("NVIDIA H200"), or "" when CUDA cannot say.
std::string gpu_device_name(int device);

}  // namespace dissect::bench
