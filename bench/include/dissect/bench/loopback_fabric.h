// Experiments' loopback: one softnic, `qps` RC pairs (sender i connected to receiver i), and one
// registered source and destination buffer shared by all senders.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {

struct LoopbackFabric {
  std::unique_ptr<softnic::SoftNic> nic = std::make_unique<softnic::SoftNic>();
  std::unique_ptr<nic::ProtectionDomain> pd = nic->create_pd();
  std::vector<std::unique_ptr<nic::QueuePair>> senders, receivers;
  std::vector<uint64_t> source, destination;
  nic::MemoryRegion source_region, destination_region;

  LoopbackFabric(uint64_t qps, uint64_t buffer_words, uint32_t sq_wqebbs = 1024)
      : source(buffer_words), destination(buffer_words) {
    nic::QpAttributes attributes;
    attributes.sq_wqebbs = sq_wqebbs;
    for (uint64_t i = 0; i < qps; ++i) {
      senders.push_back(pd->create_qp(attributes));
      receivers.push_back(pd->create_qp(attributes));
      senders.back()->connect(receivers.back()->endpoint());
      receivers.back()->connect(senders.back()->endpoint());
    }
    source_region = pd->register_memory(source.data(), source.size() * 8, nic::ACCESS_ALL);
    destination_region =
        pd->register_memory(destination.data(), destination.size() * 8, nic::ACCESS_ALL);
  }
  // The engine stops before the QPs and buffers it reads go away.
  ~LoopbackFabric() { nic->stop(); }
};

}  // namespace dissect::bench
