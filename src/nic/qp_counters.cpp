#include "dissect/nic/qp_counters.h"

#include <cstring>
#include <iterator>
#include <limits>

namespace dissect::telemetry {
namespace {

constexpr uint64_t kNoneYet = std::numeric_limits<uint64_t>::max();

uint64_t load(const uint64_t& field) { return __atomic_load_n(&field, __ATOMIC_RELAXED); }

void reset_counters(QpCounters& qp) {
  // Everything from the first counter on is a count, except the extremes set just below.
  auto* first = reinterpret_cast<unsigned char*>(&qp.num_wqe_sent);
  std::memset(first, 0, sizeof(QpCounters) - offsetof(QpCounters, num_wqe_sent));
  qp.doorbell_wqes_min = kNoneYet;
  qp.wqe_completion_ns_min = kNoneYet;
}

bool same_shape(const QpCounters& a, const QpCounters& b) {
  return a.layout_version == b.layout_version && a.histogram_buckets == b.histogram_buckets &&
         a.histogram_interval_ns == b.histogram_interval_ns;
}

}  // namespace

void initialise_counters(QpCounters& qp, uint32_t qp_number, const HistogramShape& shape) {
  std::memset(&qp, 0, sizeof(qp));
  qp.layout_version = kCountersLayoutVersion;
  qp.qp_number = qp_number;
  qp.sample_mask = shape.sample_interval - 1;
  qp.histogram_buckets = shape.buckets;
  qp.histogram_interval_ns = shape.interval_ns;
  qp.bucket_multiplier = (uint64_t{1} << 63) / shape.interval_ns + 1;
  qp.last_bucket_ns = uint64_t{shape.buckets - 1} * shape.interval_ns;
  reset_counters(qp);
}

QpCounters fresh_copy(const QpCounters& slot) {
  QpCounters copy = slot;
  reset_counters(copy);
  return copy;
}

bool merge_from(QpCounters& slot, const QpCounters& from) {
  if (!same_shape(slot, from)) return false;
  uint64_t* const sums[] = {&slot.num_wqe_sent,  &slot.num_recv_wqe,      &slot.num_wqe_rcvd,
                            &slot.num_wqe_completed, &slot.num_write_wqe, &slot.num_write_imm_wqe,
                            &slot.num_wqebb,     &slot.tx_bytes,          &slot.rx_bytes,
                            &slot.num_cq_errors, &slot.cq_poll_count,     &slot.num_doorbells,
                            &slot.doorbell_wqes};
  const uint64_t* const addends[] = {&from.num_wqe_sent,  &from.num_recv_wqe,  &from.num_wqe_rcvd,
                                     &from.num_wqe_completed, &from.num_write_wqe,
                                     &from.num_write_imm_wqe, &from.num_wqebb, &from.tx_bytes,
                                     &from.rx_bytes,      &from.num_cq_errors, &from.cq_poll_count,
                                     &from.num_doorbells, &from.doorbell_wqes};
  static_assert(std::size(sums) == std::size(addends));
  for (size_t i = 0; i < std::size(sums); ++i) add_relaxed<Scope::gpu>(sums[i], *addends[i]);
  for (uint32_t b = 0; b < kMaxHistogramBuckets; ++b)
    add_relaxed<Scope::gpu>(&slot.wqe_completion_histogram[b], from.wqe_completion_histogram[b]);
  for (uint32_t b = 0; b < kWqeSizeBuckets; ++b)
    add_relaxed<Scope::gpu>(&slot.wqe_size_histogram[b], from.wqe_size_histogram[b]);
  fetch_min<Scope::gpu>(&slot.doorbell_wqes_min, from.doorbell_wqes_min);
  fetch_max<Scope::gpu>(&slot.doorbell_wqes_max, from.doorbell_wqes_max);
  fetch_min<Scope::gpu>(&slot.wqe_completion_ns_min, from.wqe_completion_ns_min);
  fetch_max<Scope::gpu>(&slot.wqe_completion_ns_max, from.wqe_completion_ns_max);
  return true;
}

QpCounters snapshot(const QpCounters& slot) {
  // The configuration line is never written after initialisation: a plain copy is race-free.
  QpCounters copy;
  std::memcpy(&copy, &slot, offsetof(QpCounters, num_wqe_sent));
  // From num_wqe_sent on every field is a uint64_t that hooks may be updating right now.
  const uint64_t* source = &slot.num_wqe_sent;
  uint64_t* target = &copy.num_wqe_sent;
  constexpr size_t kCounterWords = (sizeof(QpCounters) - offsetof(QpCounters, num_wqe_sent)) / 8;
  for (size_t i = 0; i < kCounterWords; ++i) target[i] = load(source[i]);
  return copy;
}

ChannelCounters snapshot(const ChannelCounters& channel) {
  ChannelCounters copy{};
  copy.num_req_completed = load(channel.num_req_completed);
  return copy;
}

}  // namespace dissect::telemetry
