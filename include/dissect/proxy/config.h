// The proxy's knobs: T workers, R rings, B requests per post, the handoff, and placement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dissect/common/clock.h"
#include "dissect/proxy/memory.h"

namespace dissect::proxy {

// How a producer hands a descriptor to its worker (proxy/handoff.h): a flag per slot after the
// descriptor (baseline) or the lap's phase in both halves of one 16 B store (tuned).
enum class Handoff : uint8_t { baseline, tuned };
const char* to_string(Handoff handoff);
Handoff handoff_from_string(const char* name);  // throws InvalidArgument naming it

struct ProxyConfig {
  uint32_t workers = 1;          // T: CPU worker threads, each with its own QP
  uint32_t rings = 1;            // R: ring r is served by worker r % T
  uint32_t ring_entries = 1024;  // descriptors per ring: a power of two, 2..2^20
  uint32_t batch = 16;           // B: most requests one worker chains into one post (1..64)
  Handoff handoff = Handoff::tuned;

  // Pinning: worker w runs on cores[w % cores.size()]. When `cores` is empty, the cores of the NIC's
  // NUMA node (/sys/class/infiniband/<nic_device>/device/numa_node) or of `numa_node` (e.g. the
  // GPU's) are dealt out round robin; with neither, workers are not pinned.
  bool pin = true;
  std::vector<int> cores;
  std::string nic_device;
  int numa_node = -1;

  uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS;        // every producer and worker wait
  uint64_t drain_timeout_ns = DEFAULT_WAIT_TIMEOUT_NS;  // stop(drain) gives up after this
  uint32_t idle_spins_before_yield = 64;  // a worker with nothing to do yields after this many passes

  RingMemory memory;
  // Optional: R completion counters the worker writes (e.g. GPU memory mapped through GDRCopy) and
  // the address producers read them at. Null: host-resident counters from memory.shared.
  uint64_t* completion_counters = nullptr;
  uint64_t* completion_counters_for_producer = nullptr;
};

// Throws InvalidArgument naming the field and its value.
void validate(const ProxyConfig& config);

}  // namespace dissect::proxy
