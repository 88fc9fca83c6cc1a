// CQs shared between QPs (nic::CompletionQueue) on the host softnic: host threads stand in for GPU
// threads. Members' CQEs land in one ring from every engine thread, one poll retires each on the
// QP it names, an error CQE fails only its own QP, a member that leaves with CQEs in the CQ turns
// them into orphans, and every way to misuse a CQ is refused by name (the ASan build runs these).
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/gda/scope.h"
#include "dissect/softnic/softnic.h"

namespace gda = dissect::gda;
namespace nic = dissect::nic;
using dissect::InvalidArgument;
using dissect::softnic::SoftNic;
using dissect::softnic::SoftNicOptions;
using Policy = gda::ordering::system_fence;

namespace {

constexpr uint32_t kSlots = 64;  // 8 B destination slots per requester

// One SoftNic (`engine_threads` host engine threads), `count` requesters sharing one CQ, each
// connected to a responder of its own; requester i writes slots i * kSlots ... of `dst`.
struct Rig {
  std::unique_ptr<SoftNic> softnic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::unique_ptr<nic::CompletionQueue> cq;
  std::vector<uint64_t> dst;
  nic::MemoryRegion dst_mr{};
  std::vector<std::unique_ptr<nic::QueuePair>> requesters, responders;

  Rig(uint32_t count, uint32_t engine_threads, uint32_t sq_wqebbs = 64) {
    SoftNicOptions o;
    o.engine_threads = engine_threads;
    softnic = std::make_unique<SoftNic>(o);
    pd = softnic->create_pd();
    nic::CqAttributes c;
    c.cqe_entries = 1024;
    cq = softnic->create_cq(c);
    dst.assign(size_t{count} * kSlots, 0);
    dst_mr = pd->register_memory(dst.data(), dst.size() * 8, nic::ACCESS_ALL);
    for (uint32_t i = 0; i < count; ++i) {
      nic::QpAttributes a;
      a.sq_wqebbs = sq_wqebbs;
      a.send_cq = cq.get();
      requesters.push_back(pd->create_qp(a));
      responders.push_back(pd->create_qp(nic::QpAttributes{}));
      requesters[i]->connect(responders[i]->endpoint());
      responders[i]->connect(requesters[i]->endpoint());
    }
  }
  ~Rig() {
    requesters.clear();
    responders.clear();
    cq.reset();
    pd->deregister_memory(dst_mr);
  }
  uint64_t slot_address(uint32_t qp, uint32_t i) const {
    return reinterpret_cast<uintptr_t>(&dst[size_t{qp} * kSlots + i % kSlots]);
  }
};

uint64_t value_of(uint32_t qp, uint32_t i) { return (uint64_t{qp + 1} << 32) | (i + 1); }

// Signalled 8 B puts `first` .. `first` + n - 1 on requester `q`, without waiting.
gda::Status put_all(Rig& rig, uint32_t q, uint32_t n, uint32_t rkey, uint32_t first = 0) {
  const nic::QpHandle qp = rig.requesters[q]->handle();
  for (uint32_t i = first; i < first + n; ++i) {
    uint64_t end = 0;
    const gda::Status s = gda::put_value<Policy>(qp, value_of(q, i), 8, rig.slot_address(q, i),
                                                    rkey, gda::Completion::signaled, &end);
    if (s != gda::Status::ok) return s;
  }
  return gda::Status::ok;
}

void expect_landed(const Rig& rig, uint32_t q, uint32_t n) {
  for (uint32_t i = n > kSlots ? n - kSlots : 0; i < n; ++i) {
    ASSERT_EQ(rig.dst[size_t{q} * kSlots + i % kSlots], value_of(q, i)) << "QP " << q << " put " << i;
  }
}

TEST(SharedCq, EveryMembersCqesLandInOneRingAndOneQuietRetiresThemAll) {
  constexpr uint32_t kQps = 6, kPuts = 150;  // puts > send queue depth: slots are reused
  Rig rig(kQps, /*engine_threads=*/3);       // QP i on thread i % 3: three writers of one CQ
  std::vector<nic::QpHandle> handles;
  for (auto& r : rig.requesters) handles.push_back(r->handle());
  for (uint32_t round = 0; round < 4; ++round) {
    for (uint32_t q = 0; q < kQps; ++q) {
      ASSERT_EQ(put_all(rig, q, kPuts / 4, rig.dst_mr.rkey, round * (kPuts / 4)), gda::Status::ok);
    }
    ASSERT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(gda::QpSet{handles.data(), kQps})),
              gda::Status::ok);
  }
  const nic::CqHandle cq = rig.cq->handle();
  ASSERT_NE(cq.shared, nullptr);
  EXPECT_EQ(cq.shared->ci, uint64_t{kQps} * (kPuts / 4) * 4);  // one CQE per signalled put
  EXPECT_EQ(cq.shared->orphan_cqes, 0u);
  for (uint32_t q = 0; q < kQps; ++q) {
    EXPECT_EQ(handles[q].send_cq.cqn, rig.cq->cqn());
    EXPECT_EQ(handles[q].state->cons_idx, handles[q].state->ready_head) << "QP " << q;
    EXPECT_EQ(handles[q].state->cq_ci, 0u) << "a member's own consumer index is never used";
    expect_landed(rig, q, (kPuts / 4) * 4);
  }
  EXPECT_EQ(rig.cq->members(), kQps);
}

TEST(SharedCq, ThreadsWaitingOnTheirOwnMembersShareThePolls) {
  constexpr uint32_t kQps = 4, kPuts = 2000;
  Rig rig(kQps, /*engine_threads=*/2);
  std::vector<gda::Status> results(kQps, gda::Status::timeout);
  std::vector<std::thread> threads;
  for (uint32_t q = 0; q < kQps; ++q) {
    threads.emplace_back([&, q] {
      const nic::QpHandle qp = rig.requesters[q]->handle();
      gda::Status s = gda::Status::ok;
      for (uint32_t i = 0; i < kPuts && s == gda::Status::ok; i += 10) {
        for (uint32_t k = 0; k < 10 && s == gda::Status::ok; ++k) {
          uint64_t end = 0;
          s = gda::put_value<Policy, gda::Sharing::shared>(qp, value_of(q, i + k), 8,
                                                           rig.slot_address(q, i + k), rig.dst_mr.rkey,
                                                           gda::Completion::signaled, &end);
        }
        if (s == gda::Status::ok) s = gda::quiet<Policy, gda::Sharing::shared>(qp);
      }
      results[q] = s;
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t q = 0; q < kQps; ++q) {
    EXPECT_EQ(results[q], gda::Status::ok) << "QP " << q;
    expect_landed(rig, q, kPuts);
  }
  EXPECT_EQ(rig.cq->handle().shared->ci, uint64_t{kQps} * kPuts);
}

TEST(SharedCq, AnErrorCqeFailsOnlyTheQpItNames) {
  Rig rig(3, 1);
  std::vector<nic::QpHandle> handles;
  for (auto& r : rig.requesters) handles.push_back(r->handle());
  ASSERT_EQ(put_all(rig, 0, 5, rig.dst_mr.rkey), gda::Status::ok);
  ASSERT_EQ(put_all(rig, 1, 1, rig.dst_mr.rkey ^ 0x100), gda::Status::ok);  // a key nobody has
  ASSERT_EQ(put_all(rig, 2, 5, rig.dst_mr.rkey), gda::Status::ok);
  EXPECT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(handles[1])), gda::Status::cq_error);
  EXPECT_EQ(nic::send_queue_error_syndrome(handles[1].state->error),
            dissect::mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
  for (uint32_t q : {0u, 2u}) {
    EXPECT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(handles[q])), gda::Status::ok) << q;
    EXPECT_EQ(handles[q].state->error, 0u) << "QP " << q;
    expect_landed(rig, q, 5);
  }
}

TEST(SharedCq, CqesOfAMemberThatLeftAreConsumedAsOrphans) {
  Rig rig(2, 1);
  const nic::QpHandle survivor = rig.requesters[1]->handle();
  ASSERT_EQ(put_all(rig, 0, 3, rig.dst_mr.rkey), gda::Status::ok);
  // Wait until the engine executed QP 0's puts (its payloads landed), then destroy it unpolled.
  for (int spin = 0; spin < 2'000'000 && rig.dst[2] != value_of(0, 2); ++spin) std::this_thread::yield();
  ASSERT_EQ(rig.dst[2], value_of(0, 2));
  rig.requesters[0].reset();
  EXPECT_EQ(rig.cq->members(), 1u);
  ASSERT_EQ(put_all(rig, 1, 4, rig.dst_mr.rkey), gda::Status::ok);
  EXPECT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(survivor)), gda::Status::ok);
  EXPECT_EQ(rig.cq->handle().shared->orphan_cqes, 3u);
  expect_landed(rig, 1, 4);
}

TEST(SharedCq, MisuseIsRefusedByName) {
  SoftNic a, b;
  auto pd = a.create_pd();
  nic::CqAttributes small;
  small.cqe_entries = 128;
  small.max_members = 2;
  auto cq = a.create_cq(small);
  auto other = b.create_cq(nic::CqAttributes{});
  nic::QpAttributes q;
  q.sq_wqebbs = 64;
  q.send_cq = other.get();
  EXPECT_THROW(
      try { pd->create_qp(q); } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("belongs to softnic"), std::string::npos) << e.what();
        throw;
      },
      InvalidArgument);
  q.send_cq = cq.get();
  q.cq_entries = 64;
  EXPECT_THROW(pd->create_qp(q), InvalidArgument);  // a shared CQ has no depth of the QP's
  q.cq_entries = 0;
  q.send_cq_collapsed = true;
  EXPECT_THROW(pd->create_qp(q), InvalidArgument);
  q.send_cq_collapsed = false;
  auto first = pd->create_qp(q);
  auto second = pd->create_qp(q);  // 2 x 64 = the CQ's 128 entries
  EXPECT_EQ(cq->members(), 2u);
  q.sq_wqebbs = 8;
  q.max_inline = 8;
  EXPECT_THROW(
      try { pd->create_qp(q); } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("max_members = 2"), std::string::npos) << e.what();
        throw;
      },
      InvalidArgument);
  second.reset();
  q.sq_wqebbs = 128;
  EXPECT_THROW(
      try { pd->create_qp(q); } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("could overrun"), std::string::npos) << e.what();
        throw;
      },
      InvalidArgument);
  q.sq_wqebbs = 64;
  auto again = pd->create_qp(q);  // the slot that was left is taken again
  EXPECT_EQ(cq->members(), 2u);
  nic::CqAttributes bad;
  bad.cqe_entries = 100;
  EXPECT_THROW(a.create_cq(bad), InvalidArgument);
  bad.cqe_entries = 128;
  bad.max_members = 0;
  EXPECT_THROW(a.create_cq(bad), InvalidArgument);
  bad.max_members = 1;
  bad.placement = nic::Placement::gpu;  // host threads cannot write into GPU memory
  EXPECT_THROW(a.create_cq(bad), InvalidArgument);
}

}  // namespace
