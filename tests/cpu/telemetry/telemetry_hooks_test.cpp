// The data-path hooks: exact counts under concurrency, sampling, histogram, null slots.
#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "dissect/nic/qp_counters.h"
#include "dissect/telemetry/registry.h"

namespace dissect::telemetry {
namespace {

using mlx5::MLX5_OPCODE_RDMA_WRITE;
using mlx5::MLX5_OPCODE_RDMA_WRITE_IMM;
using mlx5::MLX5_OPCODE_SEND;

QpCounters make_block(uint32_t buckets, uint64_t interval, uint64_t sample) {
  QpCounters block;
  initialise_counters(block, 7, HistogramShape{buckets, interval, sample});
  return block;
}

uint64_t histogram_sum(const QpCounters& qp) {
  uint64_t sum = 0;
  for (uint32_t b = 0; b < qp.histogram_buckets; ++b) sum += qp.wqe_completion_histogram[b];
  return sum;
}

TEST(TelemetryHooks, BucketByMultiplyEqualsDivisionClampedToLastBucket) {
  std::mt19937_64 random(42);
  for (uint64_t interval : {uint64_t{1}, uint64_t{3}, uint64_t{1000}, uint64_t{30000}, uint64_t{999983},
                            kMaxHistogramIntervalNs}) {
    for (uint32_t buckets : {1u, 5u, 16u}) {
      QpCounters qp = make_block(buckets, interval, 1);
      auto expected = [&](uint64_t latency) {
        return static_cast<uint32_t>(std::min<uint64_t>(latency / interval, buckets - 1));
      };
      for (uint64_t b = 0; b <= buckets; ++b) {
        for (int64_t offset : {-1, 0, 1}) {
          if (b == 0 && offset < 0) continue;
          uint64_t latency = b * interval + offset;
          ASSERT_EQ(latency_bucket(qp, latency), expected(latency)) << "interval " << interval << " latency " << latency;
        }
      }
      for (int i = 0; i < 20000; ++i) {
        uint64_t latency = random() % (uint64_t{buckets + 1} * interval + 1);
        ASSERT_EQ(latency_bucket(qp, latency), expected(latency)) << "interval " << interval << " latency " << latency;
      }
      ASSERT_EQ(latency_bucket(qp, UINT64_MAX), buckets - 1);
    }
  }
}

TEST(TelemetryHooks, NullSlotIsANoOp) {
  QpCounters* none = nullptr;
  EXPECT_FALSE(on_post(none, PostInfo{64, MLX5_OPCODE_RDMA_WRITE, 64}));
  on_recv_posted(none);
  on_doorbell(none, 4);
  on_completion(none);
  on_completion_sampled(none, 10);
  on_completion_stamped(none, 123);
  on_receive(none, 8);
  on_unmatched_cqe(none);
  on_cq_poll(none);
  on_cq_error(none);
  on_requests_completed(nullptr, 3);
  SUCCEED();
}

TEST(TelemetryHooks, PostCountsOpcodesBytesSizesAndWqebbs) {
  QpCounters qp = make_block(5, 30000, 1);
  on_post(&qp, PostInfo{100, MLX5_OPCODE_RDMA_WRITE, 48});
  on_post(&qp, PostInfo{4096, MLX5_OPCODE_RDMA_WRITE_IMM, 64});
  on_post(&qp, PostInfo{1, MLX5_OPCODE_SEND, 80});
  EXPECT_EQ(qp.num_wqe_sent, 3u);
  EXPECT_EQ(qp.num_write_wqe, 1u);
  EXPECT_EQ(qp.num_write_imm_wqe, 1u);
  EXPECT_EQ(qp.tx_bytes, 4197u);
  EXPECT_EQ(qp.num_wqebb, 1u + 1u + 2u);
  EXPECT_EQ(qp.wqe_size_histogram[7], 1u);   // 100 in (64, 128]
  EXPECT_EQ(qp.wqe_size_histogram[12], 1u);  // 4096 in (2048, 4096]
  EXPECT_EQ(qp.wqe_size_histogram[0], 1u);   // 1
}

TEST(TelemetryHooks, DoorbellStatistics) {
  QpCounters qp = make_block(5, 30000, 1);
  on_doorbell(&qp, 4);
  on_doorbell(&qp, 1);
  on_doorbell(&qp, 16);
  EXPECT_EQ(qp.num_doorbells, 3u);
  EXPECT_EQ(qp.doorbell_wqes, 21u);
  EXPECT_EQ(qp.doorbell_wqes_min, 1u);
  EXPECT_EQ(qp.doorbell_wqes_max, 16u);
}

TEST(TelemetryHooks, SamplingSelectsOneInNByPostingPosition) {
  for (uint64_t n : {uint64_t{1}, uint64_t{4}, uint64_t{16}}) {
    QpCounters qp = make_block(5, 100, n);
    uint64_t sampled = 0;
    for (int i = 0; i < 1000; ++i) {
      bool sample = on_post(&qp, PostInfo{8, MLX5_OPCODE_RDMA_WRITE, 64});
      sampled += sample;
      if (sample) {
        on_completion_sampled(&qp, static_cast<uint64_t>(i));  // latency i ns: spans every bucket
      } else {
        on_completion(&qp);
      }
    }
    EXPECT_EQ(sampled, (1000 + n - 1) / n) << "N=" << n;
    EXPECT_EQ(histogram_sum(qp), sampled) << "N=" << n;
    EXPECT_EQ(qp.num_wqe_completed, 1000u) << "sampling must not move other counters";
    EXPECT_EQ(qp.num_wqe_rcvd, 1000u);
    EXPECT_EQ(qp.wqe_completion_ns_min, 0u);
    EXPECT_EQ(qp.wqe_completion_ns_max, (999 / n) * n);
  }
}

TEST(TelemetryHooks, StampedCompletionReadsTheClockOnlyWhenSampled) {
  QpCounters qp = make_block(5, 30000, 2);
  uint64_t first = on_post(&qp, PostInfo{8, MLX5_OPCODE_RDMA_WRITE, 64}) ? clock_ns() : kNotSampled;
  uint64_t second = on_post(&qp, PostInfo{8, MLX5_OPCODE_RDMA_WRITE, 64}) ? clock_ns() : kNotSampled;
  EXPECT_NE(first, kNotSampled);
  EXPECT_EQ(second, kNotSampled);
  on_completion_stamped(&qp, first);
  on_completion_stamped(&qp, second);
  EXPECT_EQ(qp.num_wqe_completed, 2u);
  EXPECT_EQ(histogram_sum(qp), 1u);
  EXPECT_NE(qp.wqe_completion_ns_min, UINT64_MAX);
}

TEST(TelemetryHooks, CompletionSideCounters) {
  QpCounters qp = make_block(5, 30000, 1);
  ChannelCounters channel{};
  on_recv_posted(&qp, 3);
  on_receive(&qp, 512);
  on_unmatched_cqe(&qp);
  on_cq_poll(&qp);
  on_cq_poll(&qp);
  on_cq_error(&qp);
  on_requests_completed(&channel, 2);
  EXPECT_EQ(qp.num_recv_wqe, 3u);
  EXPECT_EQ(qp.rx_bytes, 512u);
  EXPECT_EQ(qp.num_wqe_rcvd, 2u) << "on_cq_error counts the error, not the CQE a second time";
  EXPECT_EQ(qp.num_wqe_completed, 0u);
  EXPECT_EQ(qp.cq_poll_count, 2u);
  EXPECT_EQ(qp.num_cq_errors, 1u);
  EXPECT_EQ(channel.num_req_completed, 2u);
}

// A GPU block: a fresh copy with the slot's configuration, updated elsewhere, merged back.
TEST(TelemetryHooks, MergeFromFoldsADeviceBlockIntoItsSlot) {
  QpCounters slot = make_block(5, 100, 1);
  on_post(&slot, PostInfo{10, MLX5_OPCODE_RDMA_WRITE, 64});
  on_completion_sampled(&slot, 50);
  QpCounters device = fresh_copy(slot);
  EXPECT_EQ(device.num_wqe_sent, 0u);
  EXPECT_EQ(device.bucket_multiplier, slot.bucket_multiplier);
  on_post(&device, PostInfo{20, MLX5_OPCODE_RDMA_WRITE_IMM, 64});
  on_completion_sampled(&device, 450);
  on_doorbell(&device, 1);
  ASSERT_TRUE(merge_from(slot, device));
  EXPECT_EQ(slot.num_wqe_sent, 2u);
  EXPECT_EQ(slot.tx_bytes, 30u);
  EXPECT_EQ(slot.num_write_imm_wqe, 1u);
  EXPECT_EQ(slot.wqe_completion_ns_min, 50u);
  EXPECT_EQ(slot.wqe_completion_ns_max, 450u);
  EXPECT_EQ(slot.wqe_completion_histogram[0], 1u);
  EXPECT_EQ(slot.wqe_completion_histogram[4], 1u);
  EXPECT_EQ(slot.doorbell_wqes_min, 1u);

  QpCounters other_shape = make_block(4, 100, 1);
  EXPECT_FALSE(merge_from(slot, other_shape));
}

// 1000 writes of mixed sizes on 3 QPs in 2 channels, from 4 host threads at once.
TEST(TelemetryHooks, ConcurrentTrafficIsCountedExactly) {
  Registry registry(HistogramShape{5, 1000, 1}, RegistryLimits{});
  int device = registry.register_device(DeviceInfo{"softnic0", "", "softnic", 1});
  ASSERT_EQ(device, 0);
  QpTelemetry qps[3] = {registry.track_qp(device, 0, 10, nullptr), registry.track_qp(device, 0, 11, nullptr),
                        registry.track_qp(device, 1, 12, nullptr)};
  const uint64_t sizes[] = {8, 64, 4096, 65536};
  constexpr int kThreads = 4;
  constexpr int kWritesPerThread = 250;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWritesPerThread; ++i) {
        int global = t * kWritesPerThread + i;
        QpCounters* qp = qps[global % 3].counters;
        uint8_t opcode = global % 2 ? MLX5_OPCODE_RDMA_WRITE_IMM : MLX5_OPCODE_RDMA_WRITE;
        uint64_t stamp = on_post(qp, PostInfo{sizes[global % 4], opcode, 64}) ? clock_ns() : kNotSampled;
        on_doorbell(qp, 1);
        on_cq_poll(qp);
        on_completion_stamped(qp, stamp);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  uint64_t expected_sent[3] = {}, expected_bytes[3] = {}, expected_imm[3] = {};
  for (int global = 0; global < kThreads * kWritesPerThread; ++global) {
    expected_sent[global % 3] += 1;
    expected_bytes[global % 3] += sizes[global % 4];
    expected_imm[global % 3] += global % 2;
  }
  for (int q = 0; q < 3; ++q) {
    const QpCounters& qp = *qps[q].counters;
    EXPECT_EQ(qp.num_wqe_sent, expected_sent[q]) << "QP " << q;
    EXPECT_EQ(qp.tx_bytes, expected_bytes[q]) << "QP " << q;
    EXPECT_EQ(qp.num_write_imm_wqe, expected_imm[q]) << "QP " << q;
    EXPECT_EQ(qp.num_write_wqe, expected_sent[q] - expected_imm[q]) << "QP " << q;
    EXPECT_EQ(qp.num_wqe_completed, expected_sent[q]) << "QP " << q;
    EXPECT_EQ(qp.num_doorbells, expected_sent[q]) << "QP " << q;
    EXPECT_EQ(qp.cq_poll_count, expected_sent[q]) << "QP " << q;
    EXPECT_EQ(histogram_sum(qp), expected_sent[q]) << "N=1: every completion is in the histogram";
  }
  auto devices = registry.snapshot();
  ASSERT_EQ(devices.size(), 1u);
  ASSERT_EQ(devices[0].channels.size(), 2u);
  EXPECT_EQ(devices[0].channels[0].queue_pairs.size(), 2u);
  EXPECT_EQ(devices[0].channels[1].queue_pairs.size(), 1u);
}

TEST(TelemetryHooks, ExhaustedSlotsAreCountedAsUntrackedAndGetNullPointers) {
  RegistryLimits limits{1, 1, 2};
  Registry registry(HistogramShape{5, 1000, 1}, limits);
  int device = registry.register_device(DeviceInfo{"softnic0", "", "softnic", 1});
  EXPECT_EQ(registry.register_device(DeviceInfo{"softnic1", "", "softnic", 1}), -1);
  EXPECT_EQ(registry.num_devices_refused(), 1u);
  bool first_use = false;
  EXPECT_NE(registry.track_qp(device, 0, 1, &first_use).counters, nullptr);
  EXPECT_TRUE(first_use);
  EXPECT_NE(registry.track_qp(device, 0, 2, &first_use).counters, nullptr);
  EXPECT_FALSE(first_use);
  QpTelemetry third = registry.track_qp(device, 0, 3, nullptr);   // channel full
  QpTelemetry other = registry.track_qp(device, 1, 4, nullptr);   // channel table full
  QpTelemetry lost = registry.track_qp(5, 0, 5, nullptr);         // no such device
  EXPECT_EQ(third.counters, nullptr);
  EXPECT_EQ(third.channel, nullptr);
  EXPECT_EQ(other.counters, nullptr);
  EXPECT_EQ(lost.counters, nullptr);
  // Hooks on the null slot change nothing anywhere.
  on_post(third.counters, PostInfo{64, MLX5_OPCODE_RDMA_WRITE, 64});
  on_completion(third.counters);
  on_requests_completed(third.channel);
  auto devices = registry.snapshot();
  EXPECT_EQ(devices[0].num_qp_untracked, 2u);
  EXPECT_EQ(devices[0].channels[0].num_qp_untracked, 1u);
  EXPECT_EQ(registry.num_qp_untracked_without_device(), 1u);
  for (const auto& qp : devices[0].channels[0].queue_pairs) {
    EXPECT_EQ(qp.num_wqe_sent, 0u);
    EXPECT_EQ(qp.num_wqe_completed, 0u);
  }
  EXPECT_EQ(devices[0].channels[0].counters.num_req_completed, 0u);
}

}  // namespace
}  // namespace dissect::telemetry
