// The memory of R rings, allocated through the config's allocators and released on destruction.
#pragma once

#include <cstdint>
#include <vector>

#include "dissect/proxy/config.h"
#include "dissect/proxy/ring.h"

namespace dissect::proxy {

class RingStorage {
 public:
  explicit RingStorage(const ProxyConfig& config);
  ~RingStorage();
  RingStorage(const RingStorage&) = delete;
  RingStorage& operator=(const RingStorage&) = delete;

  const RingHandle& host_view(uint32_t r) const { return host_views_[r]; }
  const RingHandle& producer_view(uint32_t r) const { return producer_views_[r]; }
  bool producer_state_host_readable() const { return memory_.producer.host_readable; }

 private:
  void* take(Allocator& allocator, size_t bytes);

  RingMemory memory_;
  std::vector<RingHandle> host_views_;
  std::vector<RingHandle> producer_views_;
  std::vector<std::pair<Allocator*, void*>> owned_;
};

}  // namespace dissect::proxy
