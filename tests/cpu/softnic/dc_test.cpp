// DC transport on the softnic (issue 16 item 2): a DCI whose WQEs each name their DCT in an
// address vector (full 48 B and compact 16 B), destination switching between DCTs of another NIC,
// and the DC error CQEs, each followed by the flush of the later WQEs. Host threads stand in for
// the GPU submitters, through mini-gda's put_dc / put_value_dc; the host engine runs the NICs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"
#include "engine/window.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
namespace m = dissect::mlx5;
namespace nic = dissect::nic;
namespace sn = dissect::softnic;
using dissect::testing::fill_pattern;
using Policy = gda::ordering::system_release_store;
constexpr auto kExclusive = gda::Sharing::exclusive;

namespace {

constexpr uint8_t kCanary = 0x5a;
constexpr size_t kBytes = 8192;

// One target NIC with two DCTs, each on its own PD with its own registered buffer, and an
// initiator NIC with one DCI and a registered source buffer.
struct DcRig {
  explicit DcRig(gda::AvForm form_ = gda::AvForm::full, uint32_t engine_threads = 1,
                 nic::QpAttributes dci_attributes = {})
      : form(form_),
        initiator(std::make_unique<sn::SoftNic>(options(engine_threads))),
        target(std::make_unique<sn::SoftNic>(options(engine_threads))),
        initiator_pd(initiator->create_pd()),
        source(kBytes) {
    for (int d = 0; d < 2; ++d) {
      target_pd[d] = target->create_pd();
      nic::DctAttributes attributes;
      attributes.dc_key = 0x1000 + d;
      dct[d] = target_pd[d]->create_dct(attributes);
      buffer[d].assign(kBytes, kCanary);
      mr[d] = target_pd[d]->register_memory(buffer[d].data(), kBytes, nic::ACCESS_ALL);
      const nic::DctEndpoint e = dct[d]->endpoint();
      destination[d] = gda::dc_destination(e.dctn, e.dc_key, e.lid);
    }
    dci = initiator_pd->create_dci(dci_attributes);
    source_mr = initiator_pd->register_memory(source.data(), kBytes, nic::ACCESS_ALL);
    fill_pattern(source.data(), kBytes, 7);
  }
  static sn::SoftNicOptions options(uint32_t threads) {
    sn::SoftNicOptions o;
    o.engine_threads = threads;
    return o;
  }
  uint64_t source_address(size_t offset) const {
    return reinterpret_cast<uintptr_t>(source.data()) + offset;
  }
  uint64_t buffer_address(int d, size_t offset) const {
    return reinterpret_cast<uintptr_t>(buffer[d].data()) + offset;
  }
  gda::Status put(int d, size_t from, size_t to, uint32_t length, uint64_t* end,
                  gda::Completion c = gda::Completion::signaled) {
    return put_to(destination[d], mr[d].rkey, d, from, to, length, end, c);
  }
  gda::Status put_to(const gda::DcDestination& where, uint32_t rkey, int d, size_t from, size_t to,
                     uint32_t length, uint64_t* end, gda::Completion c = gda::Completion::signaled) {
    gda::WriteRequest r{source_address(from), source_mr.lkey, length, buffer_address(d, to), rkey};
    return gda::put_dc<Policy>(dci->handle(), where, form, r, c, end);
  }
  uint8_t error_syndrome() const {
    return static_cast<uint8_t>(nic::send_queue_error_syndrome(dci->handle().state->error));
  }

  gda::AvForm form;
  std::unique_ptr<sn::SoftNic> initiator;
  std::unique_ptr<sn::SoftNic> target;
  std::unique_ptr<nic::ProtectionDomain> initiator_pd;
  std::unique_ptr<nic::ProtectionDomain> target_pd[2];
  std::unique_ptr<nic::DcTarget> dct[2];
  std::vector<uint8_t> buffer[2];
  nic::MemoryRegion mr[2];
  gda::DcDestination destination[2];
  std::unique_ptr<nic::QueuePair> dci;
  std::vector<uint8_t> source;
  nic::MemoryRegion source_mr;
};

// Every byte of `buffer` is the canary except [offset, offset + length), which equals `expected`.
void expect_only(const std::vector<uint8_t>& buffer, size_t offset, const uint8_t* expected,
                 size_t length, const std::string& what) {
  for (size_t i = 0; i < buffer.size(); ++i) {
    if (i >= offset && i < offset + length) {
      ASSERT_EQ(buffer[i], expected[i - offset]) << what << ": payload byte " << i - offset;
    } else {
      ASSERT_EQ(buffer[i], kCanary) << what << ": byte " << i << " outside the write was touched";
    }
  }
}

// Waits until CQE `n` of the DCI's send CQ is software-owned; returns it.
const m::mlx5_err_cqe& wait_cqe(const nic::QpHandle& qp, uint64_t n) {
  const auto& cq = qp.send_cq;
  const auto* e = reinterpret_cast<const m::mlx5_err_cqe*>(&cq.cqes[n & (cq.cqe_count - 1)]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!m::cqe_is_sw_owned(__atomic_load_n(&e->op_own, __ATOMIC_ACQUIRE), n, cq.cqe_count) &&
         std::chrono::steady_clock::now() < deadline) {
  }
  return *e;
}

class DcWrite : public ::testing::TestWithParam<gda::AvForm> {};

const char* form_name(gda::AvForm f) { return f == gda::AvForm::full ? "Full" : "Compact"; }

// Destination switching: one DCI, consecutive WQEs to two DCTs of another NIC, alternately, all
// rung before any completes (so the engine meets them back to back), pointer payloads of varied
// lengths at varied offsets. Each DCT's buffer gets exactly its own writes.
TEST_P(DcWrite, AlternatesBetweenTwoDctsAndEachGetsOnlyItsOwnWrites) {
  DcRig rig(GetParam());
  std::vector<uint8_t> expected[2] = {std::vector<uint8_t>(kBytes, kCanary),
                                      std::vector<uint8_t>(kBytes, kCanary)};
  uint64_t end = 0;
  size_t to[2] = {0, 0};
  for (uint32_t i = 0; i < 40; ++i) {
    const int d = i % 2;
    const uint32_t length = 1 + (i * 37) % 300;
    const size_t from = (i * 53) % 1000;
    ASSERT_EQ(rig.put(d, from, to[d], length, &end,
                      i % 5 == 4 ? gda::Completion::signaled : gda::Completion::unsignaled),
              gda::Status::ok);
    std::memcpy(expected[d].data() + to[d], rig.source.data() + from, length);
    to[d] += length + 3;  // a canary gap between writes
  }
  ASSERT_EQ(rig.put(0, 0, 7000, 16, &end), gda::Status::ok);
  std::memcpy(expected[0].data() + 7000, rig.source.data(), 16);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(rig.dci->handle(), end)), gda::Status::ok);
  for (int d = 0; d < 2; ++d) {
    for (size_t i = 0; i < kBytes; ++i) {
      ASSERT_EQ(rig.buffer[d][i], expected[d][i]) << "DCT " << d << " byte " << i;
    }
  }
  EXPECT_EQ(rig.target->dct_context(rig.dct[0]->dctn()).rx_packets, 21u);
  EXPECT_EQ(rig.target->dct_context(rig.dct[1]->dctn()).rx_packets, 20u);
}

// put_value_dc: 1..8 bytes from a register, alternating DCTs.
TEST_P(DcWrite, ValuesFromRegistersLandAtEitherDct) {
  DcRig rig(GetParam());
  for (uint32_t length = 1; length <= 8; ++length) {
    for (int d = 0; d < 2; ++d) {
      for (auto& b : rig.buffer) std::fill(b.begin(), b.end(), kCanary);
      const uint64_t value = 0x8877665544332211ull + length + d;
      uint64_t end = 0;
      ASSERT_EQ(gda::put_value_dc<Policy>(rig.dci->handle(), rig.destination[d], rig.form, value,
                                          length, rig.buffer_address(d, 100 + length), rig.mr[d].rkey,
                                          gda::Completion::signaled, &end),
                gda::Status::ok);
      ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(rig.dci->handle(), end)), gda::Status::ok);
      expect_only(rig.buffer[d], 100 + length, reinterpret_cast<const uint8_t*>(&value), length,
                  std::string(form_name(rig.form)) + " value of " + std::to_string(length) + " B");
      expect_only(rig.buffer[1 - d], 0, nullptr, 0, "the other DCT");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Av, DcWrite, ::testing::Values(gda::AvForm::full, gda::AvForm::compact),
                         [](const auto& info) { return std::string(form_name(info.param)); });

// The two forms mixed on one DCI (full to one DCT, compact to the other), with two engine threads:
// the host engine's windows must hand every DC WQE to execute_and_retire.
TEST(DcWrite, FullAndCompactAvsMixOnOneDciWithTwoEngineThreads) {
  DcRig rig(gda::AvForm::full, 2);
  uint64_t end = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    rig.form = i % 2 ? gda::AvForm::compact : gda::AvForm::full;
    ASSERT_EQ(rig.put(i % 2, i, 64 * (i / 2), 32, &end, gda::Completion::unsignaled),
              gda::Status::ok);
  }
  rig.form = gda::AvForm::compact;
  ASSERT_EQ(rig.put(0, 0, 4096, 1, &end), gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(rig.dci->handle(), end)), gda::Status::ok);
  for (uint32_t i = 0; i < 64; ++i) {
    ASSERT_EQ(0, std::memcmp(rig.buffer[i % 2].data() + 64 * (i / 2), rig.source.data() + i, 32))
        << "write " << i;
    ASSERT_EQ(rig.buffer[i % 2][64 * (i / 2) + 32], kCanary) << "write " << i;
  }
}

// Two-WQEBB WQEs (full AV) straddle the end of an 8-WQEBB ring, as compact ones shift them by one:
// the builders and the engine wrap segment by segment.
TEST(DcWrite, FullAvWqesThatStraddleTheRingEndLandWhole) {
  nic::QpAttributes small;
  small.sq_wqebbs = 8;
  DcRig rig(gda::AvForm::full, 1, small);
  uint64_t end = 0;
  uint32_t straddled = 0;
  for (uint32_t i = 0; i < 60; ++i) {
    rig.form = (i % 3 == 0) ? gda::AvForm::compact : gda::AvForm::full;
    const uint64_t start = rig.dci->handle().state->resv_head;
    if (rig.form == gda::AvForm::full && start % 8 == 7) ++straddled;
    ASSERT_EQ(rig.put(i % 2, i, 100 * (i / 2), 48, &end), gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(rig.dci->handle(), end)), gda::Status::ok)
        << "write " << i;
    ASSERT_EQ(0, std::memcmp(rig.buffer[i % 2].data() + 100 * (i / 2), rig.source.data() + i, 48))
        << "write " << i;
  }
  EXPECT_GT(straddled, 0u) << "no WQE straddled the ring end: the test lost its point";
  for (int d = 0; d < 2; ++d) {
    for (uint32_t k = 0; k < 30; ++k) {
      for (uint32_t b = 48; b < 100; ++b) ASSERT_EQ(rig.buffer[d][100 * k + b], kCanary);
    }
  }
}

// A DCI reaches a DCT of its own NIC too (the fabric includes it).
TEST(DcWrite, ADciReachesADctOnItsOwnNic) {
  DcRig rig;
  auto local_pd = rig.initiator->create_pd();
  auto dct = local_pd->create_dct({});
  std::vector<uint8_t> local(256, kCanary);
  const auto mr = local_pd->register_memory(local.data(), local.size(), nic::ACCESS_ALL);
  const nic::DctEndpoint e = dct->endpoint();
  uint64_t end = 0;
  gda::WriteRequest r{rig.source_address(5), rig.source_mr.lkey, 100,
                      reinterpret_cast<uintptr_t>(local.data()) + 10, mr.rkey};
  ASSERT_EQ(gda::put_dc<Policy>(rig.dci->handle(), gda::dc_destination(e.dctn, e.dc_key, e.lid),
                                gda::AvForm::compact, r, gda::Completion::signaled, &end),
            gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(rig.dci->handle(), end)), gda::Status::ok);
  expect_only(local, 10, rig.source.data() + 5, 100, "own NIC's DCT");
}

// A failing DC WQE after a good one: the error CQE carries `syndrome`, the two WQEs behind it
// flush, and only the good write's bytes changed anywhere.
void expect_error_then_flush(DcRig& rig, const gda::DcDestination& bad, uint32_t rkey,
                             uint8_t syndrome, const char* what) {
  const auto qp = rig.dci->handle();
  uint64_t end = 0;
  ASSERT_EQ(rig.put(1, 0, 512, 16, &end), gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::ok);
  const uint64_t failing = end;
  ASSERT_EQ(rig.put_to(bad, rkey, 0, 0, 0, 64, &end), gda::Status::ok);
  for (int k = 0; k < 2; ++k) ASSERT_EQ(rig.put(k, 0, 1024, 16, &end), gda::Status::ok);
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error) << what;
  EXPECT_EQ(rig.error_syndrome(), syndrome)
      << what << ": got " << m::syndrome_name(rig.error_syndrome());
  EXPECT_EQ(qp.state->error_wqe, failing) << what;
  const m::mlx5_err_cqe& error = wait_cqe(qp, 1);
  EXPECT_EQ(m::cqe_opcode(error.op_own), m::MLX5_CQE_REQ_ERR) << what;
  EXPECT_EQ(error.syndrome, syndrome) << what;
  for (uint64_t n = 2; n < 4; ++n) {
    const m::mlx5_err_cqe& e = wait_cqe(qp, n);
    EXPECT_TRUE(m::cqe_is_sw_owned(e.op_own, n, qp.send_cq.cqe_count)) << what << " CQE " << n;
    EXPECT_EQ(m::cqe_opcode(e.op_own), m::MLX5_CQE_REQ_ERR) << what << " CQE " << n;
    EXPECT_EQ(e.syndrome, m::MLX5_CQE_SYNDROME_WR_FLUSH_ERR) << what << " CQE " << n;
  }
  expect_only(rig.buffer[0], 0, nullptr, 0, std::string(what) + ", DCT 0");
  expect_only(rig.buffer[1], 512, rig.source.data(), 16, std::string(what) + ", DCT 1");
  EXPECT_EQ(rig.initiator->qp_context(rig.dci->qpn()).state, sn::QP_STATE_ERROR) << what;
}

class DcError : public ::testing::TestWithParam<gda::AvForm> {};

TEST_P(DcError, AWrongDcKeyIsARemoteAccessErrorAndTheDciFlushes) {
  DcRig rig(GetParam());
  const nic::DctEndpoint e = rig.dct[0]->endpoint();
  expect_error_then_flush(rig, gda::dc_destination(e.dctn, e.dc_key ^ 1, e.lid), rig.mr[0].rkey,
                          m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "wrong dc_key");
}

TEST_P(DcError, ADctThatDoesNotExistIsARemoteInvalidRequestAndTheDciFlushes) {
  DcRig rig(GetParam());
  const nic::DctEndpoint e = rig.dct[1]->endpoint();
  expect_error_then_flush(rig, gda::dc_destination(e.dctn + 1, e.dc_key, e.lid), rig.mr[0].rkey,
                          m::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "no such DCT");
}

TEST_P(DcError, ADestroyedDctIsARemoteInvalidRequest) {
  DcRig rig(GetParam());
  const nic::DctEndpoint e = rig.dct[0]->endpoint();
  rig.dct[0].reset();
  expect_error_then_flush(rig, gda::dc_destination(e.dctn, e.dc_key, e.lid), rig.mr[0].rkey,
                          m::MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "destroyed DCT");
}

TEST_P(DcError, ALidNoNicHasIsATransportRetryError) {
  DcRig rig(GetParam());
  const nic::DctEndpoint e = rig.dct[0]->endpoint();
  expect_error_then_flush(rig, gda::dc_destination(e.dctn, e.dc_key, 0xbffe), rig.mr[0].rkey,
                          m::MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "unknown LID");
}

// The DCT's PD decides which rkeys it accepts: DCT 1 (PD 1) refuses the rkey of PD 0's buffer.
TEST_P(DcError, AnRkeyOfAnotherDctsProtectionDomainIsARemoteAccessError) {
  DcRig rig(GetParam());
  expect_error_then_flush(rig, rig.destination[1], rig.mr[0].rkey,
                          m::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "rkey of another PD");
}

INSTANTIATE_TEST_SUITE_P(Av, DcError, ::testing::Values(gda::AvForm::full, gda::AvForm::compact),
                         [](const auto& info) { return std::string(form_name(info.param)); });

// The WQE bytes put_dc builds: the AV right after the ctrl segment, laid out as rdma-core's
// mlx5_send_wr_set_dc_addr lays it (full: extended bit set) or NVSHMEM's half AV (compact: clear).
TEST(DcWqe, BuildersLayOutCtrlAvRaddrAndData) {
  for (const gda::AvForm form : {gda::AvForm::full, gda::AvForm::compact}) {
    std::vector<uint8_t> ring(4 * m::MLX5_SEND_WQE_BB, 0);
    nic::QpHandle qp{};
    qp.sq = m::send_ring{ring.data(), 4};
    qp.qpn = 0x123;
    const gda::DcDestination d = gda::dc_destination(0x40007, 0x1122334455667788ull, 0x0203);
    gda::write_dc_write_wqe(qp, 0, d, form,
                            gda::WriteRequest{0xaabbccddeeff0011ull, 0x55, 64, 0x1000, 0x66},
                            gda::Completion::signaled);
    const auto* ctrl = reinterpret_cast<const m::mlx5_wqe_ctrl_seg*>(ring.data());
    const uint32_t av_ds = form == gda::AvForm::full ? 3 : 1;
    EXPECT_EQ(m::ctrl_ds(*ctrl), 3 + av_ds);
    EXPECT_EQ(m::ctrl_qpn(*ctrl), 0x123u);
    const uint8_t key[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    EXPECT_EQ(0, std::memcmp(ring.data() + 16, key, 8));
    const uint8_t dqp[4] = {static_cast<uint8_t>(form == gda::AvForm::full ? 0x80 : 0x00), 0x04,
                            0x00, 0x07};
    EXPECT_EQ(0, std::memcmp(ring.data() + 24, dqp, 4)) << form_name(form);
    EXPECT_EQ(ring[30], 0x02);  // rlid, big-endian, at AV offset 14
    EXPECT_EQ(ring[31], 0x03);
    const auto* raddr =
        reinterpret_cast<const m::mlx5_wqe_raddr_seg*>(ring.data() + 16 * (1 + av_ds));
    EXPECT_EQ(raddr->raddr.value(), 0x1000u);
    EXPECT_EQ(raddr->rkey.value(), 0x66u);
    const auto* data = reinterpret_cast<const m::mlx5_wqe_data_seg*>(ring.data() + 16 * (2 + av_ds));
    EXPECT_EQ(data->byte_count.value(), 64u);
    EXPECT_EQ(data->lkey.value(), 0x55u);
    EXPECT_EQ(data->addr.value(), 0xaabbccddeeff0011ull);
  }
}

// The parallel window never takes a DCI's WQE, not even a NOP it would take from an RC QP.
TEST(DcWindow, WindowWqeSizeRefusesEveryWqeOfADci) {
  std::vector<uint8_t> ring(4 * m::MLX5_SEND_WQE_BB, 0);
  sn::QpContext qp{};
  qp.qpn = sn::QPN_BASE;
  qp.sq = m::send_ring{ring.data(), 4};
  m::mlx5_wqe_ctrl_seg nop;
  m::set_ctrl_seg(&nop, 0, m::MLX5_OPCODE_NOP, 0, qp.qpn, m::MLX5_WQE_CTRL_CQ_UPDATE, 1, 0,
                  m::be32{0});
  std::memcpy(ring.data(), &nop, sizeof nop);
  qp.transport = sn::QP_TRANSPORT_RC;
  EXPECT_EQ(sn::window_wqe_size(qp, qp.sq, 0, 4), 1u);
  qp.transport = sn::QP_TRANSPORT_DCI;
  EXPECT_EQ(sn::window_wqe_size(qp, qp.sq, 0, 4), 0u);
}

TEST(DcApi, ADciCannotBeConnectedAndHasNoReceiveQueue) {
  DcRig rig;
  EXPECT_THROW(rig.dci->connect(rig.dci->endpoint()), dissect::InvalidArgument);
  nic::QpAttributes with_rq;
  with_rq.rq_wqes = 4;
  EXPECT_THROW(rig.initiator_pd->create_dci(with_rq), dissect::InvalidArgument);
  EXPECT_EQ(rig.dct[0]->endpoint().lid, sn::lid_of_nic(rig.target->nic_id()));
  EXPECT_NE(rig.dct[0]->dctn(), rig.dct[1]->dctn());
}

}  // namespace
