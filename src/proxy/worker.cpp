#include "worker.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>

#include "dissect/common/error.h"
#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/common/wait.h"
#include "consumer.h"

namespace dissect::proxy {

Worker::Worker(uint32_t id, std::unique_ptr<Poster> poster, const ProxyConfig& config,
               const std::vector<Window>& windows, std::vector<RingHandle> rings,
               bool producer_state_host_readable)
    : id_(id), poster_(std::move(poster)), config_(config), windows_(windows),
      producer_state_host_readable_(producer_state_host_readable),
      chains_(std::max<uint32_t>(poster_->room(), 1)), batch_(config.batch), items_(config.batch) {
  if (config.batch > poster_->room()) {
    throw InvalidArgument("proxy worker " + std::to_string(id) + ": batch " + std::to_string(config.batch) +
                          " exceeds the send queue of " + poster_->describe() + " (room for " +
                          std::to_string(poster_->room()) + " requests)");
  }
  for (const RingHandle& r : rings) {
    Served s;
    s.ring = r;
    s.tail = load_acquire<Scope::system>(&r.consumer->tail);
    s.completed = load_acquire<Scope::system>(r.completed);
    served_.push_back(s);
  }
}

Worker::~Worker() {
  if (thread_.joinable()) {
    request_stop(StopMode::abandon);
    join();
  }
}

void Worker::start(int core, std::string placement) {
  core_ = core;
  placement_ = std::move(placement);
  stop_mode_.store(-1, std::memory_order_release);
  thread_ = std::thread([this] { run(); });
  if (core < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  const int rc = pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set);
  if (rc != 0) {
    request_stop(StopMode::abandon);
    join();
    throw Error("proxy worker " + std::to_string(id_) + ": pinning to core " + std::to_string(core) +
                " failed (pthread_setaffinity_np error " + std::to_string(rc) + ")");
  }
}

void Worker::request_stop(StopMode mode) { stop_mode_.store(static_cast<int>(mode), std::memory_order_release); }

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::run() {
  BoundedWait drain(config_.drain_timeout_ns);  // from the first pass that finds work left
  uint32_t idle_passes = 0;
  for (;;) {
    bool busy = retire_completions();
    busy |= service_round_robin();
    passes_.fetch_add(1, std::memory_order_relaxed);
    if (busy) busy_passes_.fetch_add(1, std::memory_order_relaxed);
    // A pass that ends without room waits for the NIC's completions, not for descriptors: the
    // count that tells a slow NIC from slow producers where chains cannot (at B = 1 every chain
    // is full).
    if (!can_post()) full_passes_.fetch_add(1, std::memory_order_relaxed);
    const int mode = stop_mode_.load(std::memory_order_acquire);
    if (mode == static_cast<int>(StopMode::abandon)) return;
    if (mode == static_cast<int>(StopMode::drain)) {
      if (!busy && idle()) return;
      if (drain.over()) return;  // the report names what is left
    }
    if (busy) {
      idle_passes = 0;
    } else if (++idle_passes >= config_.idle_spins_before_yield) {
      sched_yield();
      idle_passes = 0;
    } else {
      spin_pause();
    }
  }
}

// Consumes CQEs, then credits every chain the QP has retired to its ring's completion counter.
// A chain retires in full (its last WQE is signalled and the QP completes in order); after an error
// CQE the following WQEs retire with flush errors, and their rings record the error.
bool Worker::retire_completions() {
  if (chains_tail_ == chains_head_) return false;
  const uint64_t retired_token = poster_->poll();
  const uint32_t error = poster_->error();
  bool retired = false;
  while (chains_tail_ != chains_head_) {
    const PostedChain& chain = chains_[chains_tail_ % chains_.size()];
    if (retired_token < chain.end) break;
    Served& s = served_[chain.served];
    if (error != 0) record_error(s, s.completed, RING_ERROR_CQE | (error & 0xff) << 8);
    s.completed += chain.count;
    // Release: the error word (above) is visible to a producer that sees the new count.
    store_release<Scope::system>(s.ring.completed, s.completed);
    ++chains_tail_;
    retired = true;
  }
  return retired;
}

bool Worker::can_post() const {
  return chains_head_ - chains_tail_ < chains_.size() && poster_->room() != 0;
}

// One pass over the rings, starting where the last pass ran out of send-queue room: a pass that
// always started at ring 0 gave the rings with low indices the room first, and where their
// producers keep them full, the later rings never got a post (measured on the H200, gpu-load with
// 16 GPU producers per endpoint: endpoint B's rings waited 5 s at their first lap while A's moved
// millions of descriptors). Now every ring gets the room in turn.
bool Worker::service_round_robin() {
  const uint32_t n = static_cast<uint32_t>(served_.size());
  bool busy = false;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t i = (first_ + k) % n;
    if (!can_post()) {
      first_ = i;
      return busy;
    }
    busy |= service(i) != 0;
  }
  return busy;
}

// Chains up to B published descriptors of one ring into one post. Returns how many.
uint32_t Worker::service(uint32_t index) {
  Served& s = served_[index];
  const uint64_t limit = can_post() ? std::min<uint64_t>(config_.batch, poster_->room()) : 0;
  uint32_t count = 0;
  while (count < limit && peek(config_.handoff, s.ring, s.tail + count, &batch_[count])) ++count;
  if (count == 0) return 0;
  for (uint32_t i = 0; i < count; ++i) items_[i] = resolve(s, s.tail + i, batch_[i]);
  s.tail += count;
  // Release after the descriptor loads: a producer that reads this tail and reuses the slots
  // cannot overwrite a descriptor before we have read it.
  store_release<Scope::system>(&s.ring.consumer->tail, s.tail);
  const uint64_t end = poster_->post(items_.data(), count);
  chains_[chains_head_ % chains_.size()] = PostedChain{index, count, end};
  ++chains_head_;
  const uint64_t descriptors = descriptors_.fetch_add(count, std::memory_order_relaxed) + count;
  const uint64_t posts = posts_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (posts % POST_STAMP_PERIOD == 1) {  // the first post, then every POST_STAMP_PERIOD-th
    const uint64_t now = now_ns();
    if (posts == 1) {
      first_stamp_ns_.store(now, std::memory_order_relaxed);
      first_stamp_descriptors_.store(descriptors, std::memory_order_relaxed);
    }
    last_stamp_ns_.store(now, std::memory_order_relaxed);
    last_stamp_descriptors_.store(descriptors, std::memory_order_relaxed);
  }
  return count;
}

// Addresses from the window table. A bad descriptor becomes a no-op, so the chain's accounting
// holds, and its ring records the error (producers see Status::failed).
PostItem Worker::resolve(Served& s, uint64_t descriptor_index, const Request& r) {
  PostItem item{Operation::invalid, 0, 0, 0, 0, 0};
  if (r.window >= windows_.size()) {
    record_error(s, descriptor_index, RING_ERROR_BAD_WINDOW | (r.window & 0xffffff) << 8);
    return item;
  }
  if ((r.operation != Operation::write && r.operation != Operation::fetch_add) || !poster_->supports(r.operation)) {
    record_error(s, descriptor_index, RING_ERROR_BAD_OPERATION | uint32_t{static_cast<uint8_t>(r.operation)} << 8);
    return item;
  }
  const Window& w = windows_[r.window];
  return PostItem{r.operation, w.local_address + r.local_offset, w.lkey, r.length,
                  w.remote_address + r.remote_offset, w.rkey};
}

void Worker::record_error(Served& s, uint64_t descriptor_index, uint32_t code) {
  bad_.fetch_add((code & 0xff) == RING_ERROR_CQE ? 0 : 1, std::memory_order_relaxed);
  if (s.ring.consumer->error != 0) return;  // keep the first
  s.ring.consumer->error_index = descriptor_index;
  store_release<Scope::system>(&s.ring.consumer->error, code);
  std::fprintf(stderr, "dissect: proxy worker %u: ring %u descriptor %llu failed (error 0x%x)\n", id_,
               s.ring.ring_id, static_cast<unsigned long long>(descriptor_index), code);
}

// Whole descriptors published from the tail on, consecutive, at most `limit`.
uint64_t Worker::published_from(const Served& s, uint64_t limit) const {
  uint64_t n = 0;
  Request ignored;
  while (n < limit && peek(config_.handoff, s.ring, s.tail + n, &ignored)) ++n;
  return n;
}

bool Worker::idle() const {
  if (chains_tail_ != chains_head_) return false;
  for (const Served& s : served_) {
    if (published_from(s, 1) != 0) return false;
    if (producer_state_host_readable_ && load_relaxed<Scope::system>(&s.ring.producer->head) != s.tail) {
      return false;
    }
  }
  return true;
}

std::vector<PendingRing> Worker::pending() const {
  std::vector<PendingRing> out;
  for (const Served& s : served_) {
    PendingRing p;
    p.ring = s.ring.ring_id;
    p.worker = id_;
    p.first_unconsumed = s.tail;
    p.published = published_from(s, s.ring.entries);
    p.reserved = producer_state_host_readable_
                     ? load_relaxed<Scope::system>(&s.ring.producer->head) - s.tail
                     : p.published;
    p.first_in_flight = s.completed;
    p.in_flight = s.tail - s.completed;
    if (p.published != 0 || p.reserved != 0 || p.in_flight != 0) out.push_back(p);
  }
  return out;
}

WorkerStats Worker::stats() const {
  WorkerStats st;
  st.worker = id_;
  st.core = core_;
  st.placement = placement_;
  st.descriptors = descriptors_.load(std::memory_order_relaxed);
  st.posts = posts_.load(std::memory_order_relaxed);
  st.passes = passes_.load(std::memory_order_relaxed);
  st.busy_passes = busy_passes_.load(std::memory_order_relaxed);
  st.full_passes = full_passes_.load(std::memory_order_relaxed);
  st.bad_descriptors = bad_.load(std::memory_order_relaxed);
  st.stamped_descriptors = last_stamp_descriptors_.load(std::memory_order_relaxed) -
                           first_stamp_descriptors_.load(std::memory_order_relaxed);
  st.stamped_ns = last_stamp_ns_.load(std::memory_order_relaxed) - first_stamp_ns_.load(std::memory_order_relaxed);
  return st;
}

}  // namespace dissect::proxy
