// The CPU-assisted doorbell (nic::DoorbellPath::cpu_assisted) on the host softnic: host threads
// stand in for GPU threads, build WQEs with mini-gda, write the dbrec and store their doorbell into
// the QP's mailbox; the softnic's forwarder thread forwards it to the engine's register. Payloads
// land, CQEs arrive, the forwarder's counters show what it coalesced, and destroying QPs while the
// forwarder runs is safe (the ASan build runs these).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"
#include "doorbell_forwarder.h"

namespace gda = dissect::gda;
namespace nic = dissect::nic;
using dissect::InvalidArgument;
using dissect::Scope;
using dissect::softnic::DoorbellForwarder;
using dissect::softnic::ForwarderCounters;
using dissect::softnic::SoftNic;
// The observer of the mailbox store is a host thread: a system-scope policy (nic.h).
using Policy = gda::ordering::system_fence;
constexpr auto kExclusive = gda::Sharing::exclusive;

namespace {

constexpr uint32_t kSlot = 64;

nic::QpAttributes assisted(uint32_t sq_wqebbs = 256) {
  nic::QpAttributes a;
  a.sq_wqebbs = sq_wqebbs;
  a.doorbell = nic::DoorbellPath::cpu_assisted;
  return a;
}

uint8_t pattern(uint32_t qp, uint32_t i, uint32_t b) {
  return static_cast<uint8_t>((qp * 131 + i * 7 + b * 13) | 1);
}

// One SoftNic, a source and a destination buffer, `count` pairs of connected QPs (requester i
// writes to responder i's slots).
struct Rig {
  std::unique_ptr<SoftNic> softnic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::vector<uint8_t> src, dst;
  nic::MemoryRegion src_mr{}, dst_mr{};
  std::vector<std::unique_ptr<nic::QueuePair>> requesters, responders;

  Rig(uint32_t count, uint32_t writes_per_qp, uint32_t engine_threads = 1) {
    dissect::softnic::SoftNicOptions o;
    o.engine_threads = engine_threads;
    softnic = std::make_unique<SoftNic>(o);
    pd = softnic->create_pd();
    src.assign(size_t{count} * writes_per_qp * kSlot, 0);
    dst.assign(src.size(), 0);
    src_mr = pd->register_memory(src.data(), src.size(), nic::ACCESS_ALL);
    dst_mr = pd->register_memory(dst.data(), dst.size(), nic::ACCESS_ALL);
    for (uint32_t i = 0; i < count; ++i) {
      requesters.push_back(pd->create_qp(assisted()));
      responders.push_back(pd->create_qp(nic::QpAttributes{}));
      requesters[i]->connect(responders[i]->endpoint());
      responders[i]->connect(requesters[i]->endpoint());
    }
  }
  ~Rig() {
    requesters.clear();
    responders.clear();
    pd->deregister_memory(src_mr);
    pd->deregister_memory(dst_mr);
    pd.reset();
  }
  uint8_t* src_slot(uint32_t qp, uint32_t i, uint32_t per_qp) {
    return src.data() + (size_t{qp} * per_qp + i) * kSlot;
  }
  uint8_t* dst_slot(uint32_t qp, uint32_t i, uint32_t per_qp) {
    return dst.data() + (size_t{qp} * per_qp + i) * kSlot;
  }
};

// Posts `n` pointer writes on requester `q`, `batch` per doorbell-and-wait, the last of each batch
// signalled; returns the first non-ok status.
gda::Status post_writes(Rig& rig, uint32_t q, uint32_t n, uint32_t per_qp, uint32_t batch) {
  const nic::QpHandle qp = rig.requesters[q]->handle();
  for (uint32_t i = 0; i < n; i += batch) {
    gda::WriteRequest requests[8];
    const uint32_t k_end = std::min(batch, n - i);
    for (uint32_t k = 0; k < k_end; ++k) {
      uint8_t* s = rig.src_slot(q, i + k, per_qp);
      for (uint32_t b = 0; b < kSlot; ++b) s[b] = pattern(q, i + k, b);
      requests[k] = gda::WriteRequest{reinterpret_cast<uintptr_t>(s), rig.src_mr.lkey, kSlot,
                                      reinterpret_cast<uintptr_t>(rig.dst_slot(q, i + k, per_qp)),
                                      rig.dst_mr.rkey};
    }
    uint64_t end = 0;
    gda::Status s = gda::post_writes<Policy>(qp, requests, k_end, &end);
    if (s == gda::Status::ok) s = gda::wait_completion<Policy, kExclusive>(qp, end);
    if (s != gda::Status::ok) return s;
  }
  return gda::Status::ok;
}

void expect_payloads(Rig& rig, uint32_t q, uint32_t n, uint32_t per_qp) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t* d = rig.dst_slot(q, i, per_qp);
    for (uint32_t b = 0; b < kSlot; ++b) {
      ASSERT_EQ(d[b], pattern(q, i, b)) << "QP " << q << " write " << i << " byte " << b;
    }
  }
}

TEST(DoorbellPath, NamesRoundTripAndABadOneIsRefusedByName) {
  for (auto path : {nic::DoorbellPath::direct, nic::DoorbellPath::cpu_assisted}) {
    EXPECT_EQ(nic::doorbell_path_from_string(nic::to_string(path)), path);
  }
  EXPECT_STREQ(nic::to_string(nic::DoorbellPath::cpu_assisted), "cpu-assisted");
  try {
    nic::doorbell_path_from_string("proxy");
    FAIL() << "'proxy' was accepted as a doorbell path";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'proxy'"), std::string::npos) << e.what();
  }
}

TEST(DoorbellPath, AnOutOfRangeValueIsRefusedAtQpCreation) {
  SoftNic softnic;
  auto pd = softnic.create_pd();
  nic::QpAttributes a;
  a.doorbell = static_cast<nic::DoorbellPath>(7);
  try {
    pd->create_qp(a);
    FAIL() << "a QP with doorbell path 7 was created";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("doorbell path = 7"), std::string::npos) << e.what();
  }
}

TEST(CpuAssistedDoorbell, TheSubmitterRingsAMailboxNotTheEngineRegister) {
  Rig rig(1, 1);
  const nic::QpHandle h = rig.requesters[0]->handle();
  const uint64_t* engine_register = rig.softnic->qp_context(h.qpn).doorbell;
  EXPECT_NE(h.doorbell, engine_register);
  const nic::QpHandle direct = rig.responders[0]->handle();
  EXPECT_EQ(direct.doorbell, rig.softnic->qp_context(direct.qpn).doorbell);
  EXPECT_THROW(rig.softnic->forwarder_counters(direct.qpn), InvalidArgument);
}

TEST(CpuAssistedDoorbell, OneHostSubmitterPayloadsLandAndCountersAgree) {
  constexpr uint32_t n = 600, batch = 3;
  Rig rig(1, n);
  ASSERT_EQ(post_writes(rig, 0, n, n, batch), gda::Status::ok);
  expect_payloads(rig, 0, n, n);
  const uint32_t qpn = rig.requesters[0]->qpn();
  const ForwarderCounters f = rig.softnic->forwarder_counters(qpn);
  const uint64_t rung = n / batch;
  EXPECT_GE(f.doorbells_forwarded, 1u);
  EXPECT_LE(f.doorbells_forwarded, f.mailbox_updates);
  EXPECT_LE(f.mailbox_updates, rung);
  // Each doorbell waited for its completion, so none could coalesce with the next.
  EXPECT_EQ(f.doorbells_forwarded, rung);
  const auto c = rig.softnic->counters(qpn);
  EXPECT_EQ(c.wqes_executed, n);
  EXPECT_EQ(c.error_cqes, 0u);
  EXPECT_EQ(c.bad_doorbells, 0u);
  EXPECT_LE(c.doorbells, f.doorbells_forwarded);
}

// Several submitters post without waiting between doorbells, so the forwarder may see several of
// them as one mailbox update; every payload still lands and the register ends at the mailbox.
TEST(CpuAssistedDoorbell, FourSubmittersOnFourQpsTwoEngineThreads) {
  constexpr uint32_t qps = 4, n = 400;
  Rig rig(qps, n, 2);
  std::vector<gda::Status> status(qps, gda::Status::ok);
  std::vector<std::thread> submitters;
  for (uint32_t q = 0; q < qps; ++q) {
    submitters.emplace_back([&, q] {
      const nic::QpHandle qp = rig.requesters[q]->handle();
      uint64_t end = 0;
      for (uint32_t i = 0; i < n && status[q] == gda::Status::ok; ++i) {
        uint8_t* s = rig.src_slot(q, i, n);
        for (uint32_t b = 0; b < kSlot; ++b) s[b] = pattern(q, i, b);
        const gda::WriteRequest r{reinterpret_cast<uintptr_t>(s), rig.src_mr.lkey, kSlot,
                                  reinterpret_cast<uintptr_t>(rig.dst_slot(q, i, n)),
                                  rig.dst_mr.rkey};
        const bool last = i + 1 == n || i % 32 == 31;  // signalled: frees ring slots
        status[q] = gda::put<Policy>(qp, r, last ? gda::Completion::signaled
                                                 : gda::Completion::unsignaled, &end);
      }
      if (status[q] == gda::Status::ok) status[q] = gda::wait_completion<Policy, kExclusive>(qp, end);
    });
  }
  for (auto& t : submitters) t.join();
  for (uint32_t q = 0; q < qps; ++q) {
    ASSERT_EQ(status[q], gda::Status::ok) << "QP " << q;
    expect_payloads(rig, q, n, n);
    const nic::QpHandle h = rig.requesters[q]->handle();
    const ForwarderCounters f = rig.softnic->forwarder_counters(h.qpn);
    EXPECT_GE(f.doorbells_forwarded, 1u);
    EXPECT_LE(f.doorbells_forwarded, f.mailbox_updates);
    EXPECT_LE(f.mailbox_updates, uint64_t{n});
    EXPECT_EQ(dissect::load_acquire<Scope::system>(rig.softnic->qp_context(h.qpn).doorbell),
              dissect::load_acquire<Scope::system>(h.doorbell))
        << "the engine's register does not hold the mailbox's last doorbell";
    EXPECT_EQ(rig.softnic->counters(h.qpn).wqes_executed, n);
  }
}

// QPs are created and destroyed beside one that keeps posting: the forwarder thread never touches
// a destroyed QP's words (ASan would say), and the busy QP keeps being served.
TEST(CpuAssistedDoorbell, DestroyingQpsWhileTheForwarderRunsIsSafe) {
  constexpr uint32_t n = 300;  // slots; the submitter uses the first n - 1, the churned QPs the last
  Rig rig(1, n);
  std::atomic<bool> done{false};
  gda::Status status = gda::Status::ok;
  std::thread submitter([&] {
    status = post_writes(rig, 0, n - 1, n, 1);
    done.store(true, std::memory_order_release);
  });
  // QP slots are not reused (1,024 per SoftNic): at most 200 rounds of two QPs.
  uint32_t churned = 0;
  while (churned < 200 && (!done.load(std::memory_order_acquire) || churned < 8)) {
    auto a = rig.pd->create_qp(assisted(64));
    auto b = rig.pd->create_qp(assisted(64));
    a->connect(b->endpoint());
    b->connect(a->endpoint());
    // Ring the doomed QP once so the forwarder is busy with it when it goes.
    const nic::QpHandle h = a->handle();
    uint64_t end = 0;
    const gda::WriteRequest r{reinterpret_cast<uintptr_t>(rig.src_slot(0, n - 1, n)),
                              rig.src_mr.lkey, 8,
                              reinterpret_cast<uintptr_t>(rig.dst_slot(0, n - 1, n)),
                              rig.dst_mr.rkey};
    const gda::Status posted = gda::put<Policy>(h, r, gda::Completion::unsignaled, &end);
    EXPECT_EQ(posted, gda::Status::ok) << "churned QP " << churned;  // no ASSERT: join first
    const uint32_t qpn = a->qpn();
    a.reset();
    EXPECT_THROW(rig.softnic->forwarder_counters(qpn), InvalidArgument);
    b.reset();
    ++churned;
    if (posted != gda::Status::ok) break;
  }
  submitter.join();
  ASSERT_EQ(status, gda::Status::ok);
  expect_payloads(rig, 0, n - 1, n);
}

// The forwarder class alone: a writer bumps the mailbox as fast as it can; the register only ever
// moves forward, ends at the last value, and the counters say how much was coalesced.
TEST(DoorbellForwarderUnit, TheRegisterNeverGoesBackwardsAndEndsAtTheLatest) {
  alignas(64) uint64_t words[16] = {};
  uint64_t* mailbox = &words[0];
  uint64_t* engine_register = &words[8];
  DoorbellForwarder forwarder("softnic test");
  forwarder.add(0x100, mailbox, engine_register);
  EXPECT_THROW(forwarder.add(0x100, mailbox, engine_register), InvalidArgument);
  constexpr uint64_t last = 200000;
  std::thread writer([&] {
    for (uint64_t v = 1; v <= last; ++v) dissect::store_release<Scope::system>(mailbox, v);
  });
  uint64_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seen != last && std::chrono::steady_clock::now() < deadline) {
    const uint64_t v = dissect::load_acquire<Scope::system>(engine_register);
    EXPECT_GE(v, seen) << "the forwarded doorbell went backwards";
    if (v < seen) break;
    seen = v;
    std::this_thread::yield();
  }
  writer.join();
  ASSERT_EQ(seen, last) << "the register did not reach the mailbox's last value within 10 s";
  const ForwarderCounters f = forwarder.counters(0x100);
  EXPECT_GE(f.doorbells_forwarded, 1u);
  EXPECT_LE(f.doorbells_forwarded, f.mailbox_updates);
  EXPECT_LE(f.mailbox_updates, last);
  forwarder.remove(0x100);
  EXPECT_THROW(forwarder.remove(0x100), InvalidArgument);
  EXPECT_THROW(forwarder.counters(0x100), InvalidArgument);
  forwarder.stop();
  EXPECT_THROW(forwarder.add(0x101, mailbox, engine_register), dissect::Error);
}

}  // namespace
