#include "dissect/providers/mlx5/doorbell_forwarder.h"

#include <algorithm>

namespace dissect::mlx5provider {

void forward_doorbell(const ForwardedQueue& queue, uint64_t doorbell) {
  queue.dbrec_send[0] = mlx5::dbrec_value(mlx5::doorbell_wqe_index(doorbell));
  // rdma-core post_send_db: udma_to_device_barrier between the DBR and the doorbell MMIO store.
  std::atomic_thread_fence(std::memory_order_release);
  *queue.uar_register = doorbell;
}

DoorbellForwarder::DoorbellForwarder() : thread_([this] { run(); }) {}

DoorbellForwarder::~DoorbellForwarder() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

void DoorbellForwarder::add(const ForwardedQueue& queue) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(Entry{queue, *queue.shadow});
}

void DoorbellForwarder::remove(const volatile uint64_t* shadow) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [shadow](const Entry& e) { return e.queue.shadow == shadow; }),
                 entries_.end());
}

int DoorbellForwarder::poll_once() {
  std::lock_guard<std::mutex> lock(mutex_);
  int rung = 0;
  for (Entry& e : entries_) {
    const uint64_t value = *e.queue.shadow;
    std::atomic_thread_fence(std::memory_order_acquire);  // WQEs before the DBR we write
    if (value == e.last) continue;
    forward_doorbell(e.queue, value);
    e.last = value;
    ++rung;
  }
  return rung;
}

void DoorbellForwarder::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    if (poll_once() == 0) std::this_thread::yield();
  }
}

}  // namespace dissect::mlx5provider
