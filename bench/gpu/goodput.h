// gpu-goodput (Figure 8 with GPU producers): the mini-proxy path's run of one size
// (goodput_proxy.cu). The mini-gda path runs gpu-rate's posting loop with pointer writes
// (rate_run.h); the subcommand (goodput.cu) puts both beside the link reference.
#pragma once

#include <cstdint>
#include <string>

namespace dissect::bench::gpu {

struct ProxyGoodputConfig {
  uint32_t workers = 4;       // T, and R = T rings, one GPU producer each (the tuned handoff's
  uint32_t batch = 16;        // sole producer); B
  uint32_t ring_entries = 1024;
  uint64_t bytes = 256ull << 20;     // payload per point, all producers (capped by max_messages)
  uint64_t max_messages = 1u << 21;  // per point, all producers
  int device = 0;
  std::string nic_profile = "fast";
};

struct ProxyGoodputRun {
  double gbps = 0;     // payload bytes / (last completion - first enqueue), 10^9 B/s
  uint64_t messages = 0;  // all producers
  bool valid = false;
  std::string failure;
  std::string placement;
};

ProxyGoodputRun run_proxy_goodput(const ProxyGoodputConfig& config, uint64_t size, uint32_t run);

}  // namespace dissect::bench::gpu
