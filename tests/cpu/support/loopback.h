// Test support: one softnic, one protection domain, two RC QPs connected to each other, and
// registered source/destination buffers. Host threads act as the GPU submitters.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"

namespace dissect::testing {

struct Loopback {
  explicit Loopback(nic::QpAttributes attributes = {}, size_t buffer_bytes = 1 << 20)
      : softnic(std::make_unique<softnic::SoftNic>()),
        pd(softnic->create_pd()),
        source(buffer_bytes),
        destination(buffer_bytes) {
    requester = pd->create_qp(attributes);
    responder = pd->create_qp(attributes);
    requester->connect(responder->endpoint());
    responder->connect(requester->endpoint());
    source_mr = pd->register_memory(source.data(), source.size(), nic::ACCESS_ALL);
    destination_mr = pd->register_memory(destination.data(), destination.size(), nic::ACCESS_ALL);
  }

  nic::QpHandle qp() const { return requester->handle(); }
  uint64_t source_address(size_t offset = 0) const {
    return reinterpret_cast<uintptr_t>(source.data()) + offset;
  }
  uint64_t destination_address(size_t offset = 0) const {
    return reinterpret_cast<uintptr_t>(destination.data()) + offset;
  }

  std::unique_ptr<softnic::SoftNic> softnic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::unique_ptr<nic::QueuePair> requester;
  std::unique_ptr<nic::QueuePair> responder;
  std::vector<uint8_t> source;
  std::vector<uint8_t> destination;
  nic::MemoryRegion source_mr;
  nic::MemoryRegion destination_mr;
};

// Fills `bytes` with a pattern that differs per seed and per position (never all zero).
inline void fill_pattern(uint8_t* bytes, size_t length, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < length; ++i) {
    x = x * 1664525u + 1013904223u;
    bytes[i] = static_cast<uint8_t>(x >> 24) | 1;
  }
}

}  // namespace dissect::testing
