// The proxy experiments' rig: one softnic (host engine, `engine_threads` threads), one connected QP
// pair per worker, two registered buffers A and B, window 0 = A -> B and window 1 = B -> A. The
// workers' sending QPs are created first, so QP w (worker w) is served by engine thread
// w % engine_threads and the receiving peers, which never send, take no thread's share of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/proxy_experiments.h"
#include "dissect/common/error.h"
#include "dissect/proxy/handoff.h"
#include "dissect/proxy/placement.h"
#include "dissect/proxy/proxy.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {

struct ProxyBenchRig {
  ProxyBenchRig(proxy::ProxyConfig config, const ProxyPlacement& placement, size_t buffer_words,
                uint32_t engine_threads = 1)
      : softnic(std::make_unique<softnic::SoftNic>(engine_options(engine_threads))),
        pd(softnic->create_pd()), a(buffer_words), b(buffer_words) {
    config.pin = placement.pin;
    config.cores = placement.cores;
    nic::QpAttributes attributes;
    attributes.sq_wqebbs = 256;
    std::vector<nic::QpHandle> handles;
    for (uint32_t w = 0; w < config.workers; ++w) {
      attributes.telemetry_channel = static_cast<int>(w);
      qps.push_back(pd->create_qp(attributes));
    }
    for (uint32_t w = 0; w < config.workers; ++w) {
      attributes.telemetry_channel = static_cast<int>(w);
      peers.push_back(pd->create_qp(attributes));
      qps[w]->connect(peers[w]->endpoint());
      peers[w]->connect(qps[w]->endpoint());
      handles.push_back(qps[w]->handle());
    }
    a_mr = pd->register_memory(a.data(), a.size() * 8, nic::ACCESS_ALL);
    b_mr = pd->register_memory(b.data(), b.size() * 8, nic::ACCESS_ALL);
    const uint64_t pa = reinterpret_cast<uintptr_t>(a.data()), pb = reinterpret_cast<uintptr_t>(b.data());
    proxy = std::make_unique<proxy::Proxy>(
        config, handles, std::vector<proxy::Window>{{pa, a_mr.lkey, pb, b_mr.rkey}, {pb, b_mr.lkey, pa, a_mr.rkey}});
  }
  ~ProxyBenchRig() {
    if (proxy) proxy->stop(proxy::StopMode::abandon);
    softnic->stop();  // nothing may still execute into the buffers destroyed next
  }

  std::vector<proxy::CpuClockState> worker_clocks() const {
    std::vector<proxy::CpuClockState> out;
    for (const auto& s : proxy->stats()) out.push_back(proxy::read_cpu_clock_state(s.core));
    return out;
  }
  std::string placement() const { return proxy->placement(); }
  static softnic::SoftNicOptions engine_options(uint32_t engine_threads) {
    softnic::SoftNicOptions o;
    o.engine_threads = engine_threads;
    return o;
  }

  std::unique_ptr<softnic::SoftNic> softnic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::vector<std::unique_ptr<nic::QueuePair>> qps, peers;
  std::vector<uint64_t> a, b;
  nic::MemoryRegion a_mr, b_mr;
  std::unique_ptr<proxy::Proxy> proxy;
};

// An 8-byte write of word `word` of the window's source into word `word` of its destination.
inline proxy::Request write_word(uint32_t window, uint64_t word) {
  return proxy::Request{proxy::Operation::write, window, 8, static_cast<uint32_t>(word * 8), word * 8};
}

// A result row labelled with what produced it: softnic host engine, host producers.
inline Result proxy_result(const std::string& experiment, const std::string& label) {
  Result r;
  r.experiment = experiment;
  r.label = label;
  r.engine = softnic::to_string(softnic::EngineKind::host_thread);
  r.placement = "host";
  r.submitter = PROXY_PRODUCER;
  r.pe_layout = "1 process, 1 softnic, loopback QP per worker";
  return r;
}

inline void check(proxy::Status status, const std::string& what) {
  if (status != proxy::Status::ok) throw Error("proxy experiment: " + what + ": " + proxy::to_string(status));
}

template <typename Handoff>
inline uint64_t enqueue_or_throw(const proxy::RingHandle& ring, const proxy::Request& request) {
  uint64_t index = 0;
  check(proxy::enqueue<Handoff, proxy::Sharing::exclusive>(ring, request, &index), "enqueue");
  return index;
}

// The flags every proxy experiment shares, declared where each reads them (the order --help lists).
// --cores: the CPUs the proxy's workers are pinned to, into `placement` (empty: not pinned);
// returns the list as given, for the rows' pinning knob.
inline std::string read_cores(const Arguments& arguments, ProxyPlacement& placement) {
  const std::string cores = arguments.text("cores", "", flag_help::CORES);
  placement.pin = !cores.empty();
  placement.cores = cores.empty() ? std::vector<int>{} : proxy::parse_cpu_list(cores);
  return cores;
}
inline uint32_t read_ring_entries(const Arguments& arguments) {
  return static_cast<uint32_t>(arguments.power_of_two("ring-entries", 1024, 1u << 20, flag_help::RING_ENTRIES));
}
inline proxy::Handoff read_handoff(const Arguments& arguments) {
  return proxy::handoff_from_string(
      arguments.choice("handoff", "tuned", {"baseline", "tuned"}, flag_help::HANDOFF).c_str());
}

}  // namespace dissect::bench
