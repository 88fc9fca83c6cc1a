// The machine a result was measured on: every result's environment names it (host, cpu_model,
// cpu_cores, usable_cores, gpu; note_machine in results.h), so that a results.json read later, or
// beside another machine's, says where its numbers come from; the report's summary shows it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dissect/bench/results.h"

namespace dissect::bench {

struct Machine {
  std::string host;       // gethostname
  std::string cpu_model;  // /proc/cpuinfo; "unknown" when it names none
  uint32_t cpu_cores = 0; // online logical CPUs
  uint32_t usable_cores = 0;  // in this process's affinity mask (what its spinning threads share)
  std::string gpus;       // "NVIDIA H200" or "8 x NVIDIA H200"; "none" without an NVIDIA driver
};

// This machine, read once per process.
const Machine& this_machine();

// The CPU's model in /proc/cpuinfo text: x86's "model name", else Arm's "Hardware" or "Model"
// lines; "unknown" when none is there.
std::string cpu_model_from(const std::string& cpuinfo);
// The GPU models in the texts of /proc/driver/nvidia/gpus/*/information ("Model: NVIDIA H200"):
// one name, or "N x name" when they are all alike, or the names joined by ", "; "none" for no GPU.
std::string gpu_models_from(const std::vector<std::string>& informations);

}  // namespace dissect::bench
