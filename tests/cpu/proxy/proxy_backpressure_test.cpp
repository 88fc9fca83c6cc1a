// A full ring backpressures its producer; nothing is ever overwritten.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "consumer.h"  // src/proxy: the worker's peek
#include "dissect/proxy/handoff.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::testing::count_request;
using dissect::testing::ProxyRig;

namespace {

constexpr uint32_t kEntries = 8;

proxy::ProxyConfig small_ring(proxy::Handoff handoff) {
  proxy::ProxyConfig config;
  config.ring_entries = kEntries;
  config.handoff = handoff;
  config.pin = false;
  return config;
}

std::vector<proxy::Descriptor> snapshot(const proxy::RingHandle& ring) {
  return std::vector<proxy::Descriptor>(ring.descriptors, ring.descriptors + ring.entries);
}

bool same(const std::vector<proxy::Descriptor>& a, const std::vector<proxy::Descriptor>& b) {
  return std::memcmp(a.data(), b.data(), a.size() * sizeof(proxy::Descriptor)) == 0;
}

template <typename Handoff, proxy::Sharing S>
void fill_then_time_out(proxy::Handoff kind) {
  ProxyRig rig(small_ring(kind), 4096);  // never started: the worker is stopped
  const proxy::RingHandle ring = rig.proxy->ring(0);
  uint64_t index = 0;
  for (uint32_t k = 0; k < kEntries; ++k) {
    ASSERT_EQ((proxy::enqueue<Handoff, S>(ring, count_request(k, 1024), &index)), proxy::Status::ok);
  }
  const auto before = snapshot(ring);
  testing::internal::CaptureStderr();
  EXPECT_EQ((proxy::enqueue<Handoff, S>(ring, count_request(kEntries, 1024), &index, 20'000'000)),
            proxy::Status::timeout);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("ring 0"), std::string::npos) << message;
  EXPECT_NE(message.find("descriptor index " + std::to_string(kEntries)), std::string::npos) << message;
  EXPECT_TRUE(same(before, snapshot(ring))) << "a full ring was overwritten";
  for (uint32_t k = 0; k < kEntries; ++k) {
    proxy::Request seen{};
    ASSERT_TRUE(proxy::peek(kind, rig.proxy->host_view(0), k, &seen)) << "slot of descriptor " << k;
    EXPECT_EQ(seen.remote_offset, k * 8u);
  }
}

TEST(Backpressure, FullTunedRingTimesOutNamingRingAndIndexAndKeepsItsSlots) {
  fill_then_time_out<proxy::tuned, proxy::Sharing::exclusive>(proxy::Handoff::tuned);
}

TEST(Backpressure, FullBaselineRingTimesOutNamingRingAndIndexAndKeepsItsSlots) {
  fill_then_time_out<proxy::baseline, proxy::Sharing::shared>(proxy::Handoff::baseline);
}

TEST(Backpressure, TunedProducerRetriesAfterATimeoutOnceTheWorkerRuns) {
  ProxyRig rig(small_ring(proxy::Handoff::tuned), 4096);
  const proxy::RingHandle ring = rig.proxy->ring(0);
  uint64_t index = 0;
  for (uint32_t k = 0; k < kEntries; ++k) {
    ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(k, 1024), &index), proxy::Status::ok);
  }
  testing::internal::CaptureStderr();
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(kEntries, 1024), &index, 10'000'000),
            proxy::Status::timeout);
  testing::internal::GetCapturedStderr();
  rig.proxy->start();
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(kEntries, 1024), &index), proxy::Status::ok);
  EXPECT_EQ(index, kEntries) << "the timed-out reservation was handed back";
  ASSERT_EQ(proxy::wait_completion(ring, index), proxy::Status::ok);
  for (uint32_t k = 0; k <= kEntries; ++k) EXPECT_EQ(rig.destination_words()[k], 1u) << "request " << k;
}

// The OwnedRing's room check lives in its refresh, off the common path: a full ring still times
// out there without a store, keeps the index, and the retry writes the next lap's slot 0.
TEST(Backpressure, OwnedRingTimesOutAtAFullRingAndRetriesIntoTheNextLap) {
  ProxyRig rig(small_ring(proxy::Handoff::tuned), 4096);
  const proxy::RingHandle ring = rig.proxy->ring(0);
  proxy::OwnedRing owned = proxy::own(ring);
  owned.ring.timeout_ns = 10'000'000;
  uint64_t index = 0;
  for (uint32_t k = 0; k < kEntries; ++k) {
    ASSERT_EQ(proxy::enqueue(owned, count_request(k, 1024), &index), proxy::Status::ok);
    EXPECT_EQ(index, k);
  }
  const auto before = snapshot(ring);
  testing::internal::CaptureStderr();
  ASSERT_EQ(proxy::enqueue(owned, count_request(kEntries, 1024), &index), proxy::Status::timeout);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("descriptor index " + std::to_string(kEntries)), std::string::npos) << message;
  EXPECT_TRUE(same(before, snapshot(ring))) << "a full ring was overwritten";
  EXPECT_EQ(owned.head, kEntries) << "a timed-out enqueue kept an index";
  rig.proxy->start();
  owned.ring.timeout_ns = ring.timeout_ns;
  ASSERT_EQ(proxy::enqueue(owned, count_request(kEntries, 1024), &index), proxy::Status::ok);
  EXPECT_EQ(index, kEntries);
  EXPECT_EQ(ring.descriptors[0].word1 >> 63, ring.phase(kEntries)) << "slot 0 without lap 1's phase";
  ASSERT_EQ(proxy::wait_completion(ring, index), proxy::Status::ok);
  for (uint32_t k = 0; k <= kEntries; ++k) EXPECT_EQ(rig.destination_words()[k], 1u) << "request " << k;
  proxy::disown(owned);
}

// The producer blocks while the worker is stopped and resumes, losing nothing, once it runs.
template <typename Handoff>
void blocked_producer_resumes(proxy::Handoff kind) {
  ProxyRig rig(small_ring(kind), 4096);
  const proxy::RingHandle ring = rig.proxy->ring(0);
  constexpr uint32_t kRequests = 4 * kEntries;
  std::atomic<uint32_t> enqueued{0};
  proxy::Status result = proxy::Status::ok;
  std::thread producer([&] {
    uint64_t index = 0;
    for (uint32_t k = 0; k < kRequests && result == proxy::Status::ok; ++k) {
      result = proxy::enqueue<Handoff, proxy::Sharing::shared>(ring, count_request(k, 1024), &index);
      enqueued.fetch_add(1);
    }
    if (result == proxy::Status::ok) result = proxy::wait_completion(ring, index);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(enqueued.load(), kEntries) << "the producer must stop at a full ring";
  EXPECT_EQ(rig.executed_wqes(), 0u);
  rig.proxy->start();
  producer.join();
  ASSERT_EQ(result, proxy::Status::ok);
  for (uint32_t k = 0; k < kRequests; ++k) EXPECT_EQ(rig.destination_words()[k], 1u) << "request " << k;
}

TEST(Backpressure, BlockedTunedProducerResumesWhenTheWorkerStarts) {
  blocked_producer_resumes<proxy::tuned>(proxy::Handoff::tuned);
}

TEST(Backpressure, BlockedBaselineProducerResumesWhenTheWorkerStarts) {
  blocked_producer_resumes<proxy::baseline>(proxy::Handoff::baseline);
}

// The ring's sole producer with its progress in registers (OwnedRing): the ring fills, the ninth
// descriptor waits without touching a slot, and everything runs once the worker starts.
TEST(Backpressure, OwnedRingBlocksAtAFullRingAndResumes) {
  ProxyRig rig(small_ring(proxy::Handoff::tuned), 4096);
  const proxy::RingHandle ring = rig.proxy->ring(0);
  proxy::OwnedRing owned = proxy::own(ring);
  uint64_t index = 0;
  for (uint32_t k = 0; k < kEntries; ++k) {
    ASSERT_EQ(proxy::enqueue(owned, count_request(k, 1024), &index), proxy::Status::ok);
  }
  const auto before = snapshot(ring);
  std::atomic<bool> returned{false};
  proxy::Status ninth = proxy::Status::ok;
  std::thread producer([&] {
    uint64_t last = 0;
    ninth = proxy::enqueue(owned, count_request(kEntries, 1024), &last);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load()) << "the ninth descriptor did not wait for room";
  EXPECT_TRUE(same(before, snapshot(ring))) << "a full ring was overwritten";
  rig.proxy->start();
  producer.join();
  ASSERT_EQ(ninth, proxy::Status::ok);
  ASSERT_EQ(proxy::wait_completion(ring, kEntries), proxy::Status::ok);
  EXPECT_EQ(owned.head, kEntries + 1u);
  EXPECT_EQ(ring.producer->head, 0u) << "enqueue(OwnedRing&) stores no head of its own";
  proxy::disown(owned);
  EXPECT_EQ(ring.producer->head, kEntries + 1u);
  for (uint32_t k = 0; k <= kEntries; ++k) EXPECT_EQ(rig.destination_words()[k], 1u) << "request " << k;
}

}  // namespace
