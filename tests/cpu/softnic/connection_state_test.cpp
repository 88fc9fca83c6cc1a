// The connection-state model (softnic/profile.h, engine/connection_state.h) through the host
// engine, which runs the GPU engine's window code: a requester NIC A whose RC QPs write to QPs of a
// responder NIC B, one write per visit (so one window, one lookup a side, per write), QPs visited
// round robin. The misses a tiny cache pays are counted on the NIC that missed, and each NIC's pipe
// grows by its misses times its miss cost; a cache as large as the QP set misses only cold; `fast`
// pays nothing. The expected misses come from a direct-mapped cache replayed on the same slots
// (cache_slot), and from bounds that do not depend on the hash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"
#include "engine/connection_state.h"
#include "engine/window.h"

namespace gda = dissect::gda;
namespace nic = dissect::nic;
namespace sn = dissect::softnic;
using Policy = gda::ordering::system_release_store;

namespace {

constexpr uint64_t kSendMissNs = 1'000'000;     // 1 ms: far above the engine's own time a window
constexpr uint64_t kReceiveMissNs = 2'000'000;  // 2 ms

sn::TimingProfile model(uint32_t entries) {
  sn::TimingProfile p{};
  std::snprintf(p.name, sizeof p.name, "test-model");
  p.enabled = 1;  // no latency, no message or link ceiling: only the model's misses take time
  p.qp_cache_entries = entries;
  p.send_context_miss_ns = kSendMissNs;
  p.receive_context_miss_ns = kReceiveMissNs;
  return p;
}

struct Rig {
  // `words`: the 8 B destination words each QP writes. `start_a`: A's engine runs from the start
  // (false: the caller posts a backlog first, then starts it).
  Rig(const sn::TimingProfile& profile, uint32_t qps, uint32_t words = 1, bool start_a = true) {
    sn::SoftNicOptions o;
    o.profile = profile;
    b = std::make_unique<sn::SoftNic>(o);
    o.start_engine = start_a;
    a = std::make_unique<sn::SoftNic>(o);
    pd_a = a->create_pd();
    pd_b = b->create_pd();
    destination.assign(size_t{qps} * words * 8, 0);
    mr = pd_b->register_memory(destination.data(), destination.size(), nic::ACCESS_ALL);
    for (uint32_t i = 0; i < qps; ++i) {
      requesters.push_back(pd_a->create_qp({}));
      responders.push_back(pd_b->create_qp({}));
      requesters.back()->connect(responders.back()->endpoint());
      responders.back()->connect(requesters.back()->endpoint());
    }
  }
  // `rounds` visits to every QP in turn, one signalled 8 B write each, waited for.
  void round_robin(uint32_t rounds) {
    for (uint32_t r = 0; r < rounds; ++r) {
      for (uint32_t i = 0; i < requesters.size(); ++i) {
        uint64_t end = 0;
        const uint64_t value = uint64_t{r + 1} << 32 | i;
        const uint64_t to = reinterpret_cast<uintptr_t>(destination.data()) + 8 * i;
        ASSERT_EQ(gda::put_value<Policy>(requesters[i]->handle(), value, 8, to, mr.rkey,
                                         gda::Completion::signaled, &end),
                  gda::Status::ok);
        ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(requesters[i]->handle(), end)),
                  gda::Status::ok);
        ASSERT_EQ(__atomic_load_n(reinterpret_cast<uint64_t*>(destination.data()) + i, __ATOMIC_ACQUIRE), value);
      }
    }
  }
  // `rounds` visits to every QP in turn, `writes` 8 B writes to distinct words under one doorbell
  // (a window of the engine, as gpu-connection-scaling posts them), the last signalled, waited for.
  void round_robin_windows(uint32_t rounds, uint32_t writes) {
    for (uint32_t r = 0; r < rounds; ++r) {
      for (uint32_t i = 0; i < requesters.size(); ++i) {
        const uint64_t end = post_window(i, r, writes, 0);
        ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(requesters[i]->handle(), end)),
                  gda::Status::ok);
      }
    }
  }
  // One doorbell of `writes` 8 B writes on QP `i` to its words from `first` on (round `r`'s values),
  // the last signalled; returns the index its completion ends at.
  uint64_t post_window(uint32_t i, uint32_t r, uint32_t writes, uint32_t first) {
    uint64_t end = 0;
    const uint64_t base = reinterpret_cast<uintptr_t>(destination.data()) + size_t{8} * (words_per_qp() * i + first);
    const gda::Status s = gda::post_batch<Policy, gda::Sharing::exclusive>(
        requesters[i]->handle(), writes, 1, gda::Completion::signaled, &end,
        [&](const nic::QpHandle& q, uint64_t index, uint32_t k, gda::Completion c) {
          return gda::write_rdma_write_value_wqe(q, index, uint64_t{r + 1} << 32 | k, 8, base + 8 * k, mr.rkey, c);
        });
    EXPECT_EQ(s, gda::Status::ok) << "QP " << i << " round " << r;
    return end;
  }
  uint32_t words_per_qp() const { return static_cast<uint32_t>(destination.size() / 8 / requesters.size()); }
  std::unique_ptr<sn::SoftNic> a, b;
  std::unique_ptr<nic::ProtectionDomain> pd_a, pd_b;
  std::vector<uint8_t> destination;
  nic::MemoryRegion mr;
  std::vector<std::unique_ptr<nic::QueuePair>> requesters, responders;
};

// Misses of a direct-mapped cache of `entries` looked up with `qpns` in turn, `rounds` times.
uint64_t replayed_misses(uint32_t entries, const std::vector<uint32_t>& qpns, uint32_t rounds) {
  std::vector<uint32_t> tags(entries, 0);
  uint64_t misses = 0;
  for (uint32_t r = 0; r < rounds; ++r) {
    for (uint32_t q : qpns) {
      uint32_t& t = tags[sn::cache_slot(q, entries)];
      misses += t != q;
      t = q;
    }
  }
  return misses;
}

// The fit (profile.cpp) takes a cache into which F contexts cycled in turn miss as random keys
// would: a context misses every round when another shares its slot, 1 - (1 - 1/N)^(F - 1) of
// them. QPNs are consecutive; a hash that spread them evenly (Fibonacci's) shared no slot below N
// and every slot above it, a cliff where the paper's curve declines.
TEST(ConnectionState, ConsecutiveQpnsShareSlotsAsRandomKeysDo) {
  constexpr uint32_t kEntries = 12288;  // cx7-ib's
  for (const uint32_t contexts : {1024u, 8192u, 32768u}) {
    std::vector<uint32_t> qpns(contexts);
    for (uint32_t i = 0; i < contexts; ++i) qpns[i] = sn::QPN_BASE + i;
    const uint64_t steady = replayed_misses(kEntries, qpns, 2) - replayed_misses(kEntries, qpns, 1);
    const double expected = 1 - std::pow(1 - 1.0 / kEntries, contexts - 1.0);
    EXPECT_NEAR(double(steady) / contexts, expected, 0.02) << contexts << " consecutive QPNs in " << kEntries;
  }
}

uint64_t pipe_ns(sn::SoftNic& n) {
  return __atomic_load_n(&n.engine_tables()->pipe_busy_until, __ATOMIC_ACQUIRE) / sn::PIPE_UNITS_PER_NS;
}

TEST(ConnectionState, TinyCacheMissesAreCountedAndEachCostsThePipeOfTheNicThatMissed) {
  constexpr uint32_t kQps = 8, kRounds = 3;
  Rig rig(model(2), kQps);
  const uint64_t t0 = dissect::now_ns();
  rig.round_robin(kRounds);
  const sn::ContextCacheCounters a = rig.a->context_cache_counters();
  const sn::ContextCacheCounters b = rig.b->context_cache_counters();
  std::vector<uint32_t> requester_qpns, responder_qpns;
  for (auto& q : rig.requesters) requester_qpns.push_back(q->qpn());
  for (auto& q : rig.responders) responder_qpns.push_back(q->qpn());
  EXPECT_EQ(a.send_lookups, kQps * kRounds) << "one send lookup a window, on the requester's NIC";
  EXPECT_EQ(a.receive_lookups, 0u);
  EXPECT_EQ(b.receive_lookups, kQps * kRounds) << "one receive lookup a window, on the responder's NIC";
  EXPECT_EQ(b.send_lookups, 0u);
  EXPECT_EQ(a.send_misses, replayed_misses(2, requester_qpns, kRounds));
  EXPECT_EQ(b.receive_misses, replayed_misses(2, responder_qpns, kRounds));
  // 8 contexts in 2 slots: at most 2 of them can be alone in a slot, so at least 6 miss every
  // visit (whatever the hash), and all 8 miss cold.
  EXPECT_GE(a.send_misses, 8u + 6u * (kRounds - 1));
  EXPECT_GE(b.receive_misses, 8u + 6u * (kRounds - 1));
  // Each NIC's pipe, claimed from t0 on, carries at least its misses x its miss cost (a claim
  // never lags the clock, then adds its cost), and never ends after the run but for one send
  // miss: every window waits for its claim (and for the responder's), so the clock passes both,
  // except that these one-WQE windows are lone windows, whose send lookup follows the CQE
  // (charge_connection_state: its miss delays the NIC's next message, not this one).
  const uint64_t t1 = dissect::now_ns();
  EXPECT_GE(pipe_ns(*rig.a), t0 + a.send_misses * kSendMissNs);
  EXPECT_LE(pipe_ns(*rig.a), t1 + kSendMissNs);
  EXPECT_GE(pipe_ns(*rig.b), t0 + b.receive_misses * kReceiveMissNs);
  EXPECT_LE(pipe_ns(*rig.b), t1);
  EXPECT_GE(t1 - t0, b.receive_misses * kReceiveMissNs) << "the requester waited for the responder's pipe";
}

// Exactly what one lookup adds, on a pipe ahead of the clock (so the claim's fetch_max is a no-op):
// a miss its side's cost in pipe units, a hit nothing; receive processing adds its per-message time.
TEST(ConnectionState, EachMissAddsItsCostToThePipeOfTheNicThatMissed) {
  sn::TimingProfile p = model(2);
  p.receive_message_rate_mps = 1;  // 1 us a message
  sn::NicTables a{}, b{};
  std::vector<uint32_t> tags_a(2, 0), tags_b(2, 0);
  a.profile = b.profile = p;
  a.qp_cache = tags_a.data();
  b.qp_cache = tags_b.data();
  const uint64_t ahead = (dissect::now_ns() + 60'000'000'000ull) * sn::PIPE_UNITS_PER_NS;
  b.pipe_busy_until = ahead;
  double units = 0;
  sn::send_processing(a, a.qp_cache, p, 0x100, &units);  // cold: a miss
  EXPECT_DOUBLE_EQ(units, kSendMissNs * sn::PIPE_UNITS_PER_NS);
  sn::send_processing(a, a.qp_cache, p, 0x100, &units);  // a hit adds nothing
  EXPECT_DOUBLE_EQ(units, kSendMissNs * sn::PIPE_UNITS_PER_NS);
  const uint64_t end = sn::receive_processing(b, b, sn::RemoteWindow{}, 0x105, 32);
  EXPECT_EQ(b.pipe_busy_until, ahead + (kReceiveMissNs + 32 * 1000) * sn::PIPE_UNITS_PER_NS);
  EXPECT_EQ(end, b.pipe_busy_until / sn::PIPE_UNITS_PER_NS);
  sn::receive_processing(b, b, sn::RemoteWindow{}, 0x105, 32);  // a hit: messages only
  EXPECT_EQ(b.pipe_busy_until, ahead + (kReceiveMissNs + 64 * 1000) * sn::PIPE_UNITS_PER_NS);
  EXPECT_EQ(a.context_cache.send_lookups, 2u);
  EXPECT_EQ(a.context_cache.send_misses, 1u);
  EXPECT_EQ(b.context_cache.receive_lookups, 2u);
  EXPECT_EQ(b.context_cache.receive_misses, 1u);
}

// A lone window claims its message's share of the pipe once (lone.h, pace_payloads): a lone 8 B
// write, and a pointer write of 4 KiB that the express window takes, each hold the pipe for one
// message. Sequential writes each wait for their claim, so N of them take N message times and the
// pipe's word ends near the clock; a message claimed twice (a lone window's claim kept when its
// WQE goes to another window, say) would take 2N.
TEST(ConnectionState, ALoneWindowClaimsItsMessageOnce) {
  // 50 ms: far above the engine's own time a write and a descheduled thread's wait on a busy CI host
  constexpr uint64_t kMessageNs = 50'000'000;
  constexpr uint32_t kWrites = 3;
  sn::TimingProfile p{};
  std::snprintf(p.name, sizeof p.name, "test-pipe");
  p.enabled = 1;
  p.message_rate_mps = 1e3 / kMessageNs;
  for (const uint32_t length : {8u, 4096u}) {
    Rig rig(p, 1, 4096 / 8);
    std::vector<uint8_t> source(length, 0x5a);
    const nic::MemoryRegion local = rig.pd_a->register_memory(source.data(), source.size(), nic::ACCESS_ALL);
    const uint64_t to = reinterpret_cast<uintptr_t>(rig.destination.data());
    const uint64_t t0 = dissect::now_ns();
    for (uint32_t k = 0; k < kWrites; ++k) {
      uint64_t end = 0;
      const gda::Status posted =
          length == 8 ? gda::put_value<Policy>(rig.requesters[0]->handle(), k + 1, 8, to, rig.mr.rkey,
                                               gda::Completion::signaled, &end)
                      : gda::put<Policy>(rig.requesters[0]->handle(),
                                         gda::WriteRequest{reinterpret_cast<uintptr_t>(source.data()), local.lkey,
                                                           length, to, rig.mr.rkey},
                                         gda::Completion::signaled, &end);
      ASSERT_EQ(posted, gda::Status::ok);
      ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(rig.requesters[0]->handle(), end)),
                gda::Status::ok);
    }
    const uint64_t claimed = pipe_ns(*rig.a) - t0;
    EXPECT_GE(claimed, kWrites * kMessageNs) << length << " B: every write held the pipe";
    EXPECT_LT(claimed, kWrites * kMessageNs * 3 / 2) << length << " B: a write claimed its message twice";
    if (length == 8) {
      EXPECT_EQ(*reinterpret_cast<const uint64_t*>(rig.destination.data()), kWrites);
    } else {
      EXPECT_EQ(rig.destination[length - 1], 0x5a);
    }
  }
}

TEST(ConnectionState, ACacheAsLargeAsTheQpSetMissesOnlyCold) {
  constexpr uint32_t kQps = 8, kRounds = 4;
  Rig rig(model(4096), kQps);
  rig.round_robin(kRounds);
  const sn::ContextCacheCounters a = rig.a->context_cache_counters();
  const sn::ContextCacheCounters b = rig.b->context_cache_counters();
  EXPECT_EQ(a.send_lookups, kQps * kRounds);
  EXPECT_EQ(a.send_misses, kQps) << "only the first visit to each QP misses";
  EXPECT_EQ(b.receive_misses, kQps);
}

// A doorbell of 32 writes is one window: one send lookup at the requester's NIC and one receive
// lookup at the responder's, whatever the window's path (the host engine holds paced express
// windows, held_windows.h), and the misses are the cache's for one lookup a window.
TEST(ConnectionState, ADoorbellOf32WritesLooksUpOnceEachSide) {
  constexpr uint32_t kQps = 16, kRounds = 3, kWrites = 32;
  sn::TimingProfile p = model(4);
  p.send_context_miss_ns = p.receive_context_miss_ns = 1000;  // 1 us: 16 x 3 windows stay quick
  Rig rig(p, kQps, kWrites);
  rig.round_robin_windows(kRounds, kWrites);
  const sn::ContextCacheCounters a = rig.a->context_cache_counters();
  const sn::ContextCacheCounters b = rig.b->context_cache_counters();
  std::vector<uint32_t> requester_qpns, responder_qpns;
  for (auto& q : rig.requesters) requester_qpns.push_back(q->qpn());
  for (auto& q : rig.responders) responder_qpns.push_back(q->qpn());
  EXPECT_EQ(a.send_lookups, kQps * kRounds) << "one send lookup a window of " << kWrites;
  EXPECT_EQ(b.receive_lookups, kQps * kRounds) << "one receive lookup a window of " << kWrites;
  EXPECT_EQ(a.send_misses, replayed_misses(4, requester_qpns, kRounds));
  EXPECT_EQ(b.receive_misses, replayed_misses(4, responder_qpns, kRounds));
}

// A backlog served a scheduling quantum at a time (profile.h, scheduling_quantum_wqes): two QPs
// sharing one engine thread and a one-entry cache, each with two 32-write doorbells waiting when the
// engine starts. With a quantum of 32 the thread turns to the other QP after each window, so every
// window misses on both sides; with the engine's own budget (64) each QP's second window follows its
// first and hits: the backlog, not the model, would have decided the misses.
TEST(ConnectionState, ABacklogIsServedAQuantumAtATime) {
  constexpr uint32_t kWrites = 32;
  for (const uint32_t quantum : {32u, 0u}) {
    sn::TimingProfile p = model(1);
    p.send_context_miss_ns = p.receive_context_miss_ns = 1000;
    p.scheduling_quantum_wqes = quantum;
    Rig rig(p, 2, 2 * kWrites, /*start_a=*/false);
    uint64_t end[2] = {0, 0};
    for (uint32_t i = 0; i < 2; ++i) {
      rig.post_window(i, 0, kWrites, 0);
      end[i] = rig.post_window(i, 1, kWrites, kWrites);
    }
    rig.a->start();
    for (uint32_t i = 0; i < 2; ++i) {
      ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(rig.requesters[i]->handle(), end[i])),
                gda::Status::ok);
    }
    const sn::ContextCacheCounters a = rig.a->context_cache_counters();
    const sn::ContextCacheCounters b = rig.b->context_cache_counters();
    EXPECT_EQ(a.send_lookups, 4u) << "quantum " << quantum << ": one lookup a window";
    EXPECT_EQ(b.receive_lookups, 4u) << "quantum " << quantum;
    EXPECT_EQ(a.send_misses, quantum == 32 ? 4u : 2u) << "quantum " << quantum;
    EXPECT_EQ(b.receive_misses, quantum == 32 ? 4u : 2u) << "quantum " << quantum;
    for (uint32_t i = 0; i < 2; ++i) {
      for (uint32_t k = 0; k < 2 * kWrites; ++k) {
        const uint64_t want = uint64_t{k / kWrites + 1} << 32 | (k % kWrites);
        ASSERT_EQ(reinterpret_cast<const uint64_t*>(rig.destination.data())[rig.words_per_qp() * i + k], want)
            << "QP " << i << " word " << k;
      }
    }
  }
}

TEST(ConnectionState, FastPaysNothingAndCountsNothing) {
  Rig rig(sn::timing_profile("fast"), 8);
  EXPECT_EQ(rig.a->table_header().qp_cache, nullptr) << "fast has no cache";
  rig.round_robin(2);
  const sn::ContextCacheCounters a = rig.a->context_cache_counters();
  const sn::ContextCacheCounters b = rig.b->context_cache_counters();
  EXPECT_EQ(a.send_lookups + a.send_misses + a.receive_lookups + a.receive_misses, 0u);
  EXPECT_EQ(b.send_lookups + b.send_misses + b.receive_lookups + b.receive_misses, 0u);
  EXPECT_EQ(pipe_ns(*rig.a), 0u);
  EXPECT_EQ(pipe_ns(*rig.b), 0u);
}

// A profile with a pipe but without the model (entries 0) pays no miss and no receive time.
TEST(ConnectionState, AProfileWithoutTheModelLooksNothingUp) {
  sn::TimingProfile p = model(0);
  p.message_rate_mps = 1000;
  Rig rig(p, 4);
  rig.round_robin(2);
  EXPECT_EQ(rig.a->context_cache_counters().send_lookups, 0u);
  EXPECT_EQ(rig.b->context_cache_counters().receive_lookups, 0u);
  EXPECT_EQ(pipe_ns(*rig.b), 0u) << "receive processing is part of the model";
}

// Receive processing costs the responder's pipe per message too (receive_message_rate_mps).
TEST(ConnectionState, ReceivingCostsTheRespondersPipePerMessage) {
  sn::TimingProfile p = model(4096);
  p.send_context_miss_ns = 0;  // no send lookup
  p.receive_context_miss_ns = 0;
  p.receive_message_rate_mps = 0.001;  // 1 ms a message
  Rig rig(p, 2);
  const uint64_t t0 = dissect::now_ns();
  rig.round_robin(3);
  EXPECT_EQ(rig.a->context_cache_counters().send_lookups, 0u) << "a miss cost of 0: no lookup";
  EXPECT_EQ(rig.b->context_cache_counters().receive_lookups, 0u);
  EXPECT_GE(pipe_ns(*rig.b), t0 + 6 * 1'000'000);
  EXPECT_LE(pipe_ns(*rig.b), dissect::now_ns());
}

// A QP connected to itself (the one-NIC rigs of nic-ceiling and gpu-rate) stands for a sender
// whose responder is another NIC: its NIC pays send processing only.
TEST(ConnectionState, ALoopbackQpPaysSendProcessingOnly) {
  sn::SoftNicOptions o;
  o.profile = model(4096);
  sn::SoftNic n(o);
  auto pd = n.create_pd();
  auto qp = pd->create_qp({});
  qp->connect(qp->endpoint());
  std::vector<uint8_t> buffer(64, 0);
  const nic::MemoryRegion mr = pd->register_memory(buffer.data(), buffer.size(), nic::ACCESS_ALL);
  for (uint32_t i = 0; i < 3; ++i) {
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value<Policy>(qp->handle(), i + 1, 8, reinterpret_cast<uintptr_t>(buffer.data()),
                                     mr.rkey, gda::Completion::signaled, &end),
              gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp->handle(), end)), gda::Status::ok);
  }
  const sn::ContextCacheCounters c = n.context_cache_counters();
  EXPECT_EQ(c.send_lookups, 3u);
  EXPECT_EQ(c.send_misses, 1u);
  EXPECT_EQ(c.receive_lookups, 0u);
}

}  // namespace

namespace {

// DC (execute_dc_write): the DCI's context is the requester's, each DCI-DCT connection's state the
// responder's. A DCI alternating between two DCTs reconnects on every WQE (a send miss each); one
// that stays with a DCT misses once; the target's cache holds one context per DC connection.
struct DcModelRig {
  DcModelRig() {
    sn::SoftNicOptions o;
    o.profile = model(4096);
    o.profile.send_context_miss_ns = 1000;
    o.profile.receive_context_miss_ns = 2000;
    initiator = std::make_unique<sn::SoftNic>(o);
    target = std::make_unique<sn::SoftNic>(o);
    initiator_pd = initiator->create_pd();
    target_pd = target->create_pd();
    buffer.assign(64, 0);
    mr = target_pd->register_memory(buffer.data(), buffer.size(), nic::ACCESS_ALL);
    for (int d = 0; d < 2; ++d) {
      nic::DctAttributes attributes;
      attributes.dc_key = 0x2000 + d;
      dct[d] = target_pd->create_dct(attributes);
      const nic::DctEndpoint e = dct[d]->endpoint();
      destination[d] = gda::dc_destination(e.dctn, e.dc_key, e.lid);
    }
    dci = initiator_pd->create_dci({});
  }
  void put(int d, uint64_t value) {
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value_dc<Policy>(dci->handle(), destination[d], gda::AvForm::compact, value, 8,
                                        reinterpret_cast<uintptr_t>(buffer.data()) + 8 * d, mr.rkey,
                                        gda::Completion::signaled, &end),
              gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(dci->handle(), end)), gda::Status::ok);
    ASSERT_EQ(__atomic_load_n(reinterpret_cast<uint64_t*>(buffer.data()) + d, __ATOMIC_ACQUIRE), value);
  }
  std::unique_ptr<sn::SoftNic> initiator, target;
  std::unique_ptr<nic::ProtectionDomain> initiator_pd, target_pd;
  std::unique_ptr<nic::DcTarget> dct[2];
  gda::DcDestination destination[2];
  std::unique_ptr<nic::QueuePair> dci;
  std::vector<uint8_t> buffer;
  nic::MemoryRegion mr;
};

TEST(ConnectionState, ADciChangingTargetReconnectsEveryWqe) {
  DcModelRig rig;
  for (uint64_t i = 0; i < 6; ++i) rig.put(static_cast<int>(i % 2), i + 1);
  const sn::ContextCacheCounters a = rig.initiator->context_cache_counters();
  const sn::ContextCacheCounters t = rig.target->context_cache_counters();
  EXPECT_EQ(a.send_lookups, 6u) << "one lookup per DC WQE: each runs alone";
  EXPECT_EQ(a.send_misses, 6u) << "every WQE names the other DCT: a reconnect each";
  EXPECT_EQ(t.receive_lookups, 6u);
  EXPECT_EQ(t.receive_misses, 2u) << "two DC connections, each cold once";
}

TEST(ConnectionState, ADciStayingWithOneTargetMissesOnce) {
  DcModelRig rig;
  for (uint64_t i = 0; i < 6; ++i) rig.put(1, i + 1);
  const sn::ContextCacheCounters a = rig.initiator->context_cache_counters();
  EXPECT_EQ(a.send_lookups, 6u);
  EXPECT_EQ(a.send_misses, 1u);
  EXPECT_EQ(rig.target->context_cache_counters().receive_misses, 1u);
}

}  // namespace
