// GDAKI on the softnic: DOCA GPUNetIO's own device verbs (bundled with NCCL, nvidia-nccl-cu13)
// post into a softnic QP through peers::gdaki's record and are completed by the GPU engine.
//
//   gdaki_gpu_test <case>     exit 0 pass, 1 fail, 77 skipped (reason on stderr)
#include "dissect/peers/gdaki.cuh"

#include <cstdio>
#include <cstring>

#include "dissect/common/error.h"
#include "peer_test_support.h"

namespace nic = dissect::nic;
namespace softnic = dissect::softnic;
namespace gdaki = dissect::peers::gdaki;
using namespace dissect::gputest;

namespace {

DISSECT_HD inline uint64_t p_value(uint32_t i) { return pattern_value(5000 + i); }

// `n` pointer puts of 1..200 B (put i at slot i) then `p_count` 8 B _p (all at slot n, the last
// one stays): each waited for with gdaki::wait, and each put's bytes read back by this thread
// after the wait returned, which they can only be if the engine wrote them before its CQE.
__global__ void doca_puts(doca_gpu_dev_verbs_qp* qp, uint8_t* src, uint32_t lkey, uint8_t* dst,
                          uint32_t rkey, uint32_t n, uint32_t p_count, uint32_t* result) {
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* s = src + size_t{i} * SLOT;
    const uint32_t len = put_length(i);
    for (uint32_t b = 0; b < len; ++b) s[b] = pattern_byte(i, b);
    doca_gpu_dev_verbs_ticket_t ticket;
    doca_gpu_dev_verbs_put(qp, {reinterpret_cast<uint64_t>(dst + size_t{i} * SLOT), gdaki::mkey(rkey)},
                           {reinterpret_cast<uint64_t>(s), gdaki::mkey(lkey)}, len, &ticket);
    if (ticket != i) return fail(result, 1, i, static_cast<uint32_t>(ticket));
    const int verdict = gdaki::wait(qp, ticket);
    if (verdict != gdaki::WAIT_OK) return fail(result, 2, i, static_cast<uint32_t>(-verdict));
    const volatile uint8_t* d = dst + size_t{i} * SLOT;
    for (uint32_t b = 0; b < len; ++b) {
      if (d[b] != pattern_byte(i, b)) return fail(result, 3, i, b);
    }
  }
  uint64_t* word = reinterpret_cast<uint64_t*>(dst + size_t{n} * SLOT);
  for (uint32_t i = 0; i < p_count; ++i) {
    doca_gpu_dev_verbs_ticket_t ticket;
    doca_gpu_dev_verbs_p<uint64_t>(qp, {reinterpret_cast<uint64_t>(word), gdaki::mkey(rkey)},
                                   p_value(i), &ticket);
    const int verdict = gdaki::wait(qp, ticket);
    if (verdict != gdaki::WAIT_OK) return fail(result, 4, i, static_cast<uint32_t>(-verdict));
    if (*reinterpret_cast<volatile uint64_t*>(word) != p_value(i)) return fail(result, 5, i, 0);
  }
  result[0] = 0;
}

int run_puts_land() {
  if (device_count_or_skip() == 0) return SKIP;
  // 70,000 _p: DOCA's 16-bit WQE index (in the doorbell, the dbrec and the CQE) wraps once.
  constexpr uint32_t n = 600, p_count = 70'000;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu,
                            size_t{n + 1} * SLOT);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  const gdaki::Qp qp(pe.qp->handle(), nic::Placement::gpu, 0, stream.s);
  doca_puts<<<1, 1, 0, stream.s>>>(qp.device_qp(), pe.src, pe.src_mr.lkey, peer.dst,
                                   peer.dst_mr.rkey, n, p_count, layout->result);
  GT_CHECK(wait_stream(stream.s, 60), "DOCA put kernel did not finish; engine: %s",
           pe.nic->describe_status().c_str());
  GT_CHECK(layout->result[0] == 0, "check %u failed at op %u (detail %u); engine: %s",
           layout->result[0], layout->result[1], layout->result[2], pe.nic->describe_status().c_str());
  const auto dst = read_back(peer.dst, peer.bytes, stream.s);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < SLOT; ++b) {
      const uint8_t want = b < put_length(i) ? pattern_byte(i, b) : 0;
      GT_CHECK(dst[size_t{i} * SLOT + b] == want, "put %u byte %u: 0x%x", i, b, dst[size_t{i} * SLOT + b]);
    }
  }
  uint64_t last;
  std::memcpy(&last, &dst[size_t{n} * SLOT], 8);
  GT_CHECK(last == p_value(p_count - 1), "last _p landed 0x%llx", static_cast<unsigned long long>(last));
  const doca_gpu_dev_verbs_qp after = qp.read_back(stream.s);
  GT_CHECK(after.sq_wqe_pi == n + p_count && after.cq_sq.cqe_ci == n + p_count,
           "DOCA counters: sq_wqe_pi %llu, cqe_ci %llu", static_cast<unsigned long long>(after.sq_wqe_pi),
           static_cast<unsigned long long>(after.cq_sq.cqe_ci));
  const auto counters = pe.nic->counters(pe.qp->qpn());
  GT_CHECK(counters.wqes_executed == n + p_count, "engine executed %llu WQEs",
           static_cast<unsigned long long>(counters.wqes_executed));
  std::printf("ok: %u doca_gpu_dev_verbs_put + %u doca_gpu_dev_verbs_p<uint64_t> (%s %s) through "
              "the softnic GPU engine, 16-bit index wrapped\n", n, p_count, gdaki::LIBRARY,
              gdaki::version().c_str());
  return 0;
}

// Posts one _p and polls its CQE once (no wait): [0] = what poll_one_cq_at said (EBUSY expected:
// the engine is stopped), [1] = the ticket.
__global__ void doca_post_and_peek(doca_gpu_dev_verbs_qp* qp, uint8_t* dst, uint32_t rkey,
                                   uint32_t* result) {
  doca_gpu_dev_verbs_ticket_t ticket;
  doca_gpu_dev_verbs_p<uint64_t>(qp, {reinterpret_cast<uint64_t>(dst), gdaki::mkey(rkey)}, p_value(7),
                                 &ticket);
  const uint64_t began = doca_gpu_dev_verbs_query_globaltimer();
  while (doca_gpu_dev_verbs_query_globaltimer() - began < 2'000'000) {}  // 2 ms for a CQE to show
  result[0] = static_cast<uint32_t>(doca_gpu_dev_verbs_poll_one_cq_at<>(&qp->cq_sq, ticket));
  result[1] = static_cast<uint32_t>(ticket);
}

__global__ void doca_wait(doca_gpu_dev_verbs_qp* qp, uint64_t ticket, uint32_t* result) {
  result[2] = static_cast<uint32_t>(-gdaki::wait(qp, ticket, 2'000'000'000ull));
}

// DOCA's wait returns only after the softnic's CQE: with the engine stopped the CQE is absent
// (poll_one_cq_at: EBUSY) and nothing landed; after drain() (the engine ran until idle, writing
// the CQE) a second kernel's wait returns WAIT_OK and the bytes are there.
int run_wait_after_cqe() {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096);
  softnic::SoftNic& engine = *layout->nics[0];
  engine.stop();
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  const gdaki::Qp qp(pe.qp->handle(), nic::Placement::gpu, 0, stream.s);
  doca_post_and_peek<<<1, 1, 0, stream.s>>>(qp.device_qp(), peer.dst, peer.dst_mr.rkey, layout->result);
  GT_CHECK(wait_stream(stream.s, 15), "posting kernel did not finish");
  GT_CHECK(layout->result[0] == EBUSY, "CQE before the engine ran: poll_one_cq_at = %d",
           static_cast<int>(layout->result[0]));
  GT_CHECK(engine.counters(pe.qp->qpn()).wqes_executed == 0, "the stopped engine executed WQEs");
  GT_CHECK(read_back(peer.dst, 8, stream.s) == std::vector<uint8_t>(8, 0), "bytes landed early");
  engine.drain();
  doca_wait<<<1, 1, 0, stream.s>>>(qp.device_qp(), layout->result[1], layout->result);
  GT_CHECK(wait_stream(stream.s, 15), "waiting kernel did not finish");
  GT_CHECK(layout->result[2] == 0, "gdaki::wait after drain: -%u", layout->result[2]);
  uint64_t landed;
  const auto dst = read_back(peer.dst, 8, stream.s);
  std::memcpy(&landed, dst.data(), 8);
  GT_CHECK(landed == p_value(7), "landed 0x%llx", static_cast<unsigned long long>(landed));
  std::printf("ok: no CQE and no bytes while the engine was stopped; wait returned after drain()\n");
  return 0;
}

__global__ void doca_bad_rkey(doca_gpu_dev_verbs_qp* qp, uint8_t* dst, uint32_t bad_rkey,
                              uint32_t* result) {
  doca_gpu_dev_verbs_ticket_t ticket;
  doca_gpu_dev_verbs_p<uint64_t>(qp, {reinterpret_cast<uint64_t>(dst), gdaki::mkey(bad_rkey)},
                                 p_value(1), &ticket);
  const int verdict = gdaki::wait(qp, ticket);
  result[0] = static_cast<uint32_t>(-verdict);
  result[1] = verdict == gdaki::WAIT_CQE_ERROR ? gdaki::error_syndrome(qp, ticket) : 0;
}

int run_bad_rkey() {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  const gdaki::Qp qp(pe.qp->handle(), nic::Placement::gpu, 0, stream.s);
  doca_bad_rkey<<<1, 1, 0, stream.s>>>(qp.device_qp(), peer.dst, peer.dst_mr.rkey ^ 0x5500,
                                       layout->result);
  GT_CHECK(wait_stream(stream.s, 15), "kernel did not finish");
  GT_CHECK(layout->result[0] == static_cast<uint32_t>(-gdaki::WAIT_CQE_ERROR),
           "verdict -%u, expected the error CQE's -EIO", layout->result[0]);
  GT_CHECK(layout->result[1] == dissect::mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
           "syndrome 0x%x", layout->result[1]);
  GT_CHECK(read_back(peer.dst, 64, stream.s) == std::vector<uint8_t>(64, 0), "bad-rkey write landed");
  std::printf("ok: bad rkey -> error CQE 0x%x through DOCA's poll; engine: %s\n", layout->result[1],
              pe.nic->describe_status().c_str());
  return 0;
}

// Host only (no GPU): the record's fields from a handle, byte for byte where DOCA reads them.
int run_make_qp_fields() {
  alignas(64) static uint8_t ring[64 * 64];
  alignas(64) static dissect::mlx5::mlx5_cqe64 cqes[64];
  alignas(8) static dissect::mlx5::be32 dbrec[2];
  alignas(8) static uint64_t doorbell;
  nic::QpHandle h{};
  h.sq = dissect::mlx5::send_ring{ring, 64};
  h.qpn = 0x123456;
  h.dbrec_send = &dbrec[1];
  h.doorbell = &doorbell;
  h.send_cq = nic::CqHandle{cqes, 64, 0x77, nullptr};
  const doca_gpu_dev_verbs_qp q = gdaki::make_qp(h, nic::Placement::gpu);
  GT_CHECK(q.sq_wqe_daddr == ring && q.sq_wqe_num == 64 && q.sq_wqe_mask == 63, "SQ ring");
  GT_CHECK(q.sq_dbrec == reinterpret_cast<__be32*>(&dbrec[1]) && q.sq_db == &doorbell, "doorbells");
  const uint8_t want_3ds[4] = {0x12, 0x34, 0x56, 0x03};  // BE32(qpn << 8 | 3), as the WQE holds it
  GT_CHECK(std::memcmp(&q.sq_num_shift8_be_3ds, want_3ds, 4) == 0, "qpn_ds bytes");
  GT_CHECK(q.cq_sq.cqe_daddr == reinterpret_cast<uint8_t*>(cqes) && q.cq_sq.cqe_num == 64 &&
               q.cq_sq.cq_num == 0x77 && q.cq_sq.cqe_ci == 0, "send CQ");
  GT_CHECK(q.nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB, "handler %d", q.nic_handler);
  GT_CHECK(gdaki::mkey(0x11223344) == 0x44332211, "mkey 0x%x", gdaki::mkey(0x11223344));
  h.send_cq.cqe_count = 32;
  bool refused = false;
  try {
    gdaki::make_qp(h, nic::Placement::gpu);
  } catch (const dissect::InvalidArgument& e) {
    refused = std::strstr(e.what(), "send CQ of 32") != nullptr;
  }
  GT_CHECK(refused, "a CQ shallower than the SQ was not refused by name");
  std::printf("ok: doca_gpu_dev_verbs_qp from a QpHandle\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Cases cases = {
      {"make_qp_fields", [] { return run_make_qp_fields(); }},
      {"puts_land", [] { return run_puts_land(); }},
      {"wait_after_cqe", [] { return run_wait_after_cqe(); }},
      {"bad_rkey_error_cqe", [] { return run_bad_rkey(); }},
  };
  return run_cases(argc, argv, cases);
}
