#include "ring_storage.h"

namespace dissect::proxy {

namespace {
template <typename T>
T* alias(const Allocator& allocator, T* address) {
  if (!allocator.producer_alias) return address;
  return static_cast<T*>(allocator.producer_alias(address));
}

uint32_t log2_of(uint32_t power_of_two) {
  uint32_t k = 0;
  while ((1u << k) < power_of_two) ++k;
  return k;
}
}  // namespace

void* RingStorage::take(Allocator& allocator, size_t bytes) {
  void* p = allocator.allocate(bytes);
  owned_.emplace_back(&allocator, p);
  return p;
}

RingStorage::RingStorage(const ProxyConfig& config) : memory_(config.memory) {
  const uint32_t entries = config.ring_entries;
  // One block of completion counters, each on its own cache line, unless the caller injected them.
  uint64_t* completions_host = config.completion_counters;
  uint64_t* completions_producer = config.completion_counters_for_producer;
  size_t completion_stride = 1;
  if (completions_host == nullptr) {
    completions_host = static_cast<uint64_t*>(take(memory_.shared, size_t{config.rings} * 64));
    completions_producer = alias(memory_.shared, completions_host);
    completion_stride = 8;
  }
  for (uint32_t r = 0; r < config.rings; ++r) {
    RingHandle host{};
    host.descriptors = static_cast<Descriptor*>(take(memory_.shared, size_t{entries} * sizeof(Descriptor)));
    host.ready = static_cast<uint64_t*>(take(memory_.shared, size_t{entries} * sizeof(uint64_t)));
    host.consumer = static_cast<ConsumerState*>(take(memory_.shared, sizeof(ConsumerState)));
    host.producer = static_cast<ProducerState*>(take(memory_.producer, sizeof(ProducerState)));
    host.completed = completions_host + r * completion_stride;
    host.entries = entries;
    host.entries_log2 = log2_of(entries);
    host.ring_id = r;
    host.timeout_ns = config.timeout_ns;

    RingHandle producer = host;
    producer.descriptors = alias(memory_.shared, host.descriptors);
    producer.ready = alias(memory_.shared, host.ready);
    producer.consumer = alias(memory_.shared, host.consumer);
    producer.producer = alias(memory_.producer, host.producer);
    producer.completed = completions_producer + r * completion_stride;
    host_views_.push_back(host);
    producer_views_.push_back(producer);
  }
}

RingStorage::~RingStorage() {
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) it->first->release(it->second);
}

}  // namespace dissect::proxy
