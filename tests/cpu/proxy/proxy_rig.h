// Test support: a softnic, one connected QP pair per proxy worker, a source and a destination
// buffer registered as window 0, and a Proxy over them. Host threads act as the GPU producers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dissect/proxy/proxy.h"
#include "dissect/softnic/softnic.h"

namespace dissect::testing {

struct ProxyRig {
  ProxyRig(const proxy::ProxyConfig& config, size_t buffer_bytes, uint32_t sq_wqebbs = 256)
      : softnic(std::make_unique<softnic::SoftNic>()),
        pd(softnic->create_pd()),
        source(buffer_bytes),
        destination(buffer_bytes) {
    nic::QpAttributes attributes;
    attributes.sq_wqebbs = sq_wqebbs;
    std::vector<nic::QpHandle> handles;
    for (uint32_t w = 0; w < config.workers; ++w) {
      attributes.telemetry_channel = static_cast<int>(w);  // a channel = a worker and its rings
      requesters.push_back(pd->create_qp(attributes));
      responders.push_back(pd->create_qp(attributes));
      requesters.back()->connect(responders.back()->endpoint());
      responders.back()->connect(requesters.back()->endpoint());
      handles.push_back(requesters.back()->handle());
    }
    source_mr = pd->register_memory(source.data(), source.size(), nic::ACCESS_ALL);
    destination_mr = pd->register_memory(destination.data(), destination.size(), nic::ACCESS_ALL);
    const proxy::Window window{reinterpret_cast<uintptr_t>(source.data()), source_mr.lkey,
                               reinterpret_cast<uintptr_t>(destination.data()), destination_mr.rkey};
    proxy = std::make_unique<proxy::Proxy>(config, handles, std::vector<proxy::Window>{window});
  }
  ~ProxyRig() {
    if (proxy) proxy->stop(proxy::StopMode::abandon);
    softnic->stop();  // nothing may still execute into the buffers destroyed next
  }

  uint64_t* destination_words() { return reinterpret_cast<uint64_t*>(destination.data()); }
  uint64_t executed_wqes() const {
    uint64_t n = 0;
    for (const auto& qp : requesters) n += softnic->counters(qp->qpn()).wqes_executed;
    return n;
  }

  std::unique_ptr<softnic::SoftNic> softnic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::vector<std::unique_ptr<nic::QueuePair>> requesters;
  std::vector<std::unique_ptr<nic::QueuePair>> responders;
  std::vector<uint8_t> source;
  std::vector<uint8_t> destination;
  nic::MemoryRegion source_mr;
  nic::MemoryRegion destination_mr;
  std::unique_ptr<proxy::Proxy> proxy;
};

// A fetch-add of 1 on 8-byte slot `slot` of the destination; the old value lands in the source
// at `scratch` (8-byte aligned).
inline proxy::Request count_request(uint64_t slot, uint32_t scratch) {
  return proxy::Request{proxy::Operation::fetch_add, 0, 1, scratch, slot * 8};
}

}  // namespace dissect::testing
