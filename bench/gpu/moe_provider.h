// `dissect moe --provider softnic|mlx5`: the provider's flags, what each provider refuses, and the
// ConnectX each process of an mlx5 launch opens. Every refusal names the flag and its value, before
// any process connects or touches a GPU; no flag is read and then ignored.
#pragma once

#include "dissect/bench/experiment.h"
#include "moe_rig.h"

namespace dissect::bench::moe_provider {

// Reads --provider, --nic, --gid-index and --doorbell into `rig`, after the other flags (it reads
// rig.transport). mlx5: one rank per process only (`processes`), mini-gda only, and the softnic's
// knobs (--engine-ctas, --engine-warps, --nic-profile) refused; softnic: mlx5's knobs refused.
void parse(const Arguments& a, bool processes, gpu::GpuMoeOptions& rig);

// mlx5, before the bootstrap connects: this build has rdma-core, and the host has the device --nic
// names (or any mlx5 device when it names none). Nothing for the softnic.
void check_host(const gpu::GpuMoeOptions& rig);

// mlx5, once the process knows its local rank: --nic, else DISSECT_NIC or the NIC nearest the
// rank's GPU (bootstrap/devices.h); refused by name when none is found.
void choose_nic(gpu::GpuMoeOptions& rig, int local_rank, int devices);

}  // namespace dissect::bench::moe_provider
