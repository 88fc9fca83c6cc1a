// The descriptor layout and its validity encoding: a half-written descriptor is never executed.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "consumer.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::testing::count_request;
using dissect::testing::ProxyRig;

namespace {

// A ring over plain arrays, for checking the consumer's peek without a worker.
struct BareRing {
  explicit BareRing(uint32_t entries_log2)
      : descriptors(1u << entries_log2), ready(1u << entries_log2) {
    handle = proxy::RingHandle{descriptors.data(), ready.data(), &producer, &consumer, &completed,
                               1u << entries_log2, entries_log2, 7, 0, 1'000'000'000};
  }
  std::vector<proxy::Descriptor> descriptors;
  std::vector<uint64_t> ready;
  proxy::ProducerState producer{};
  proxy::ConsumerState consumer{};
  uint64_t completed = 0;
  proxy::RingHandle handle;
};

TEST(Descriptor, RoundTripsEveryFieldAtItsLimits) {
  const proxy::Request r{proxy::Operation::write, proxy::MAX_WINDOWS - 1, proxy::MAX_LENGTH,
                         0xffffffffu, proxy::MAX_REMOTE_OFFSET};
  ASSERT_TRUE(proxy::request_fits(r));
  for (uint64_t phase : {0ull, 1ull}) {
    const proxy::Descriptor d = proxy::encode(r, phase);
    EXPECT_TRUE(proxy::halves_carry_phase(d.word0, d.word1, phase));
    const proxy::Request back = proxy::decode(d);
    EXPECT_EQ(back.operation, r.operation);
    EXPECT_EQ(back.window, r.window);
    EXPECT_EQ(back.length, r.length);
    EXPECT_EQ(back.local_offset, r.local_offset);
    EXPECT_EQ(back.remote_offset, r.remote_offset);
  }
  EXPECT_FALSE(proxy::request_fits({proxy::Operation::write, proxy::MAX_WINDOWS, 8, 0, 0}));
  EXPECT_FALSE(proxy::request_fits({proxy::Operation::write, 0, proxy::MAX_LENGTH + 1, 0, 0}));
  EXPECT_FALSE(proxy::request_fits({proxy::Operation::write, 0, 8, 0, proxy::MAX_REMOTE_OFFSET + 1}));
  EXPECT_FALSE(proxy::request_fits({proxy::Operation::invalid, 0, 8, 0, 0}));
}

TEST(Descriptor, LapZeroWritesPhaseOneAndEachLapFlipsIt) {
  EXPECT_EQ(proxy::phase_of(0, 3), 1u);
  EXPECT_EQ(proxy::phase_of(7, 3), 1u);
  EXPECT_EQ(proxy::phase_of(8, 3), 0u);
  EXPECT_EQ(proxy::phase_of(16, 3), 1u);
  EXPECT_EQ(proxy::decode(proxy::Descriptor{0, 0}).operation, proxy::Operation::invalid);
}

TEST(Descriptor, TunedConsumerIgnoresZeroedOldPhaseAndTornSlots) {
  BareRing ring(2);  // 4 entries: descriptor 5 is lap 1, slot 1, phase 0
  const proxy::Request r = count_request(42, 8);
  const proxy::Descriptor lap0 = proxy::encode(r, 1);
  const proxy::Descriptor lap1 = proxy::encode(r, 0);
  proxy::Request seen{};
  EXPECT_FALSE(proxy::peek_tuned(ring.handle, 1, &seen)) << "a zeroed slot must read as empty";
  ring.descriptors[1] = lap0;
  EXPECT_TRUE(proxy::peek_tuned(ring.handle, 1, &seen));
  EXPECT_FALSE(proxy::peek_tuned(ring.handle, 5, &seen)) << "lap 0's descriptor seen as lap 1's";
  ring.descriptors[1] = proxy::Descriptor{lap1.word0, lap0.word1};
  EXPECT_FALSE(proxy::peek_tuned(ring.handle, 5, &seen)) << "torn: new word0, old word1";
  ring.descriptors[1] = proxy::Descriptor{lap0.word0, lap1.word1};
  EXPECT_FALSE(proxy::peek_tuned(ring.handle, 5, &seen)) << "torn: old word0, new word1";
  ring.descriptors[1] = lap1;
  ASSERT_TRUE(proxy::peek_tuned(ring.handle, 5, &seen));
  EXPECT_EQ(seen.remote_offset, 42u * 8);
}

TEST(Descriptor, BaselineConsumerWaitsForTheReadyFlagOfThisLap) {
  BareRing ring(2);
  ring.descriptors[1] = proxy::encode(count_request(3, 8), 0);
  proxy::Request seen{};
  EXPECT_FALSE(proxy::peek_baseline(ring.handle, 5, &seen)) << "descriptor written, flag not set";
  ring.ready[1] = 1 + 1;  // the flag descriptor 1 (lap 0) left behind
  EXPECT_FALSE(proxy::peek_baseline(ring.handle, 5, &seen)) << "the previous lap's flag";
  ring.ready[1] = 5 + 1;
  ASSERT_TRUE(proxy::peek_baseline(ring.handle, 5, &seen));
  EXPECT_EQ(seen.remote_offset, 3u * 8);
}

// A running worker facing a torn slot: it must neither execute it nor move past it.
void expect_untouched(ProxyRig& rig, const proxy::RingHandle& ring, const char* what) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(rig.executed_wqes(), 0u) << what;
  EXPECT_EQ(__atomic_load_n(&ring.consumer->tail, __ATOMIC_ACQUIRE), 0u) << what;
}

TEST(Descriptor, RunningWorkerNeverExecutesAHalfWrittenDescriptor) {
  proxy::ProxyConfig config;
  config.ring_entries = 4;
  config.pin = false;
  ProxyRig rig(config, 4096);
  rig.proxy->start();
  const proxy::RingHandle ring = rig.proxy->host_view(0);
  const proxy::Descriptor whole = proxy::encode(count_request(2, 64), 1);
  __atomic_store_n(&ring.descriptors[0].word1, whole.word1, __ATOMIC_RELEASE);
  expect_untouched(rig, ring, "word1 written, word0 still zero");
  __atomic_store_n(&ring.descriptors[0].word1, uint64_t{0}, __ATOMIC_RELEASE);
  __atomic_store_n(&ring.descriptors[0].word0, whole.word0, __ATOMIC_RELEASE);
  expect_untouched(rig, ring, "word0 written, word1 zero");
  __atomic_store_n(&ring.descriptors[0].word1, whole.word1, __ATOMIC_RELEASE);
  ASSERT_EQ(proxy::wait_completion(ring, 0), proxy::Status::ok);
  EXPECT_EQ(rig.destination_words()[2], 1u);
  EXPECT_EQ(rig.executed_wqes(), 1u);
}

}  // namespace
