// Descriptions of the flags several experiments share, so that `--help` says the same thing for
// the same knob everywhere (Arguments' getters take them as `about`).
#pragma once

namespace dissect::bench::flag_help {

// The proxy experiments (bench/proxy, gpu-proxy-latency).
inline constexpr const char* CORES =
    "pin the proxy workers to these CPUs, a list such as 0-3,8 (default: unpinned)";
inline constexpr const char* RING_ENTRIES = "descriptor slots per proxy ring (16 B descriptors)";
inline constexpr const char* HANDOFF =
    "the proxy handoff: baseline reads the worker's tail on every enqueue, tuned trusts a cached "
    "tail (proxy/handoff.h)";

// The GPU experiments' softnic (softnic/gpu_engine.h, softnic/profile.h).
inline constexpr const char* DEVICE = "CUDA device to run on (with --layout two-gpus: PE 0's, PE 1 takes the next)";
inline constexpr const char* ENGINE_CTAS = "CTAs of the softnic's GPU engine kernel (one per SM)";
inline constexpr const char* ENGINE_WARPS = "warps per CTA of the softnic's GPU engine kernel; each serves a fixed set of QPs";
inline constexpr const char* NIC_PROFILE =
    "the NIC model's timing: fast (adds nothing), cx7-ib (the paper's ConnectX-7 200 Gb/s IB) or "
    "a profile file";

// Independent runs and what the table shows of them.
inline constexpr const char* RUNS =
    "independent runs; the table shows the median of their p50s and the spread (max - min)";

}  // namespace dissect::bench::flag_help
