// NVSHMEM IBGDA on the softnic: NVSHMEM's own internal device path (ibgda_device.cuh from
// nvidia-nvshmem-cu13) posts into a 256-WQEBB softnic QP whose send CQ is collapsed, as NVSHMEM's
// are (peers::nvshmem_ibgda::attributes), and the GPU engine completes it: one put per quiet, and
// thousands outstanding between quiets (NVSHMEM's reserve waiting for ring slots itself).
//
//   nvshmem_gpu_test <case>     exit 0 pass, 1 fail, 77 skipped (reason on stderr)
#include "dissect/peers/nvshmem_ibgda.cuh"

#include <cstdio>
#include <cstring>

#include "dissect/common/error.h"
#include "peer_test_support.h"

namespace nic = dissect::nic;
namespace softnic = dissect::softnic;
namespace ibgda = dissect::peers::nvshmem_ibgda;
using namespace dissect::gputest;

namespace {

DISSECT_HD inline uint64_t p_value(uint32_t i) { return pattern_value(7000 + i); }

// `n` pointer puts (put i at slot i), then `p_count` 8 B inline puts at slot n, each followed by
// NVSHMEM's quiet poll; the bytes are read back by this thread after quiet returned.
__global__ void ibgda_puts(nvshmemi_ibgda_device_qp_t* qp, uint8_t* src, uint32_t lkey, uint8_t* dst,
                           uint32_t rkey, uint32_t n, uint32_t p_count, uint32_t* result) {
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* s = src + size_t{i} * SLOT;
    const uint32_t len = put_length(i);
    for (uint32_t b = 0; b < len; ++b) s[b] = pattern_byte(i, b);
    ibgda::put(qp, reinterpret_cast<uint64_t>(s), ibgda::mkey(lkey),
               reinterpret_cast<uint64_t>(dst + size_t{i} * SLOT), ibgda::mkey(rkey), len);
    const int verdict = ibgda::quiet(qp);
    if (verdict != 0) return fail(result, 1, i, static_cast<uint32_t>(verdict));
    const volatile uint8_t* d = dst + size_t{i} * SLOT;
    for (uint32_t b = 0; b < len; ++b) {
      if (d[b] != pattern_byte(i, b)) return fail(result, 2, i, b);
    }
  }
  uint64_t* word = reinterpret_cast<uint64_t*>(dst + size_t{n} * SLOT);
  for (uint32_t i = 0; i < p_count; ++i) {
    ibgda::p<uint64_t>(qp, p_value(i), reinterpret_cast<uint64_t>(word), ibgda::mkey(rkey));
    const int verdict = ibgda::quiet(qp);
    if (verdict != 0) return fail(result, 3, i, static_cast<uint32_t>(verdict));
    if (*reinterpret_cast<volatile uint64_t*>(word) != p_value(i)) return fail(result, 4, i, 0);
  }
  result[0] = 0;
}

int run_puts_land() {
  if (device_count_or_skip() == 0) return SKIP;
  constexpr uint32_t n = 300, p_count = 70'000;  // the 16-bit wqe_counter wraps once
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu,
                            size_t{n + 1} * SLOT, ibgda::attributes(nic::Placement::gpu));
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  ibgda::upload_state(stream.s);
  const ibgda::Qp qp(pe.qp->handle(), 0, stream.s);
  ibgda_puts<<<1, 1, 0, stream.s>>>(qp.device_qp(), pe.src, pe.src_mr.lkey, peer.dst,
                                    peer.dst_mr.rkey, n, p_count, layout->result);
  GT_CHECK(wait_stream(stream.s, 90), "IBGDA put kernel did not finish; engine: %s",
           pe.nic->describe_status().c_str());
  GT_CHECK(layout->result[0] == 0, "check %u failed at op %u (detail %d); engine: %s",
           layout->result[0], layout->result[1], static_cast<int>(layout->result[2]),
           pe.nic->describe_status().c_str());
  const auto dst = read_back(peer.dst, peer.bytes, stream.s);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < put_length(i); ++b) {
      GT_CHECK(dst[size_t{i} * SLOT + b] == pattern_byte(i, b), "put %u byte %u", i, b);
    }
  }
  const ibgda::Records after = qp.read_back(stream.s);
  GT_CHECK(after.qp.mvars.tx_wq.prod_idx == n + p_count && after.qp.mvars.tx_wq.cons_idx == n + p_count,
           "NVSHMEM counters: prod_idx %llu, cons_idx %llu",
           static_cast<unsigned long long>(after.qp.mvars.tx_wq.prod_idx),
           static_cast<unsigned long long>(after.qp.mvars.tx_wq.cons_idx));
  std::printf("ok: %u RDMA writes + %u inline writes through %s %s's internal path "
              "(reserve, write WQE, submit_requests, poll_cq) on the softnic GPU engine\n",
              n, p_count, ibgda::LIBRARY, ibgda::version().c_str());
  return 0;
}

constexpr uint32_t WORDS = 4096;  // many_outstanding's landing words

// `n` 8 B inline puts, put i to word i % WORDS, with NVSHMEM's quiet only every `burst` puts and
// at the end: up to the ring's depth outstanding, ibgda_reserve_wqe_slots polling for a free slot.
__global__ void ibgda_many_outstanding(nvshmemi_ibgda_device_qp_t* qp, uint64_t* words,
                                       uint32_t rkey, uint32_t n, uint32_t burst,
                                       uint32_t* result) {
  for (uint32_t i = 0; i < n; ++i) {
    ibgda::p<uint64_t>(qp, p_value(i), reinterpret_cast<uint64_t>(words + i % WORDS),
                       ibgda::mkey(rkey));
    if ((i + 1) % burst == 0 || i + 1 == n) {
      const int verdict = ibgda::quiet(qp);
      if (verdict != 0) return fail(result, 1, i, static_cast<uint32_t>(verdict));
    }
  }
  result[0] = 0;
}

int run_many_outstanding() {
  if (device_count_or_skip() == 0) return SKIP;
  constexpr uint32_t n = 70'000, burst = 1000;  // 4 rings between quiets; 16-bit wrap once
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu,
                            size_t{WORDS} * 8, ibgda::attributes(nic::Placement::gpu));
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  ibgda::upload_state(stream.s);
  const ibgda::Qp qp(pe.qp->handle(), 0, stream.s);
  ibgda_many_outstanding<<<1, 1, 0, stream.s>>>(qp.device_qp(),
                                                reinterpret_cast<uint64_t*>(peer.dst),
                                                peer.dst_mr.rkey, n, burst, layout->result);
  GT_CHECK(wait_stream(stream.s, 90), "IBGDA burst kernel did not finish; engine: %s",
           pe.nic->describe_status().c_str());
  GT_CHECK(layout->result[0] == 0, "check %u failed at put %u (verdict %d); engine: %s",
           layout->result[0], layout->result[1], static_cast<int>(layout->result[2]),
           pe.nic->describe_status().c_str());
  const auto dst = read_back(peer.dst, size_t{WORDS} * 8, stream.s);
  for (uint32_t w = 0; w < WORDS; ++w) {
    const uint32_t last = w + (n - 1 - w) / WORDS * WORDS;  // the last put to word w
    uint64_t got = 0;
    std::memcpy(&got, &dst[size_t{w} * 8], 8);
    GT_CHECK(got == p_value(last), "word %u holds %llx, put %u wrote %llx", w,
             static_cast<unsigned long long>(got), last,
             static_cast<unsigned long long>(p_value(last)));
  }
  const ibgda::Records after = qp.read_back(stream.s);
  GT_CHECK(after.qp.mvars.tx_wq.prod_idx == n && after.qp.mvars.tx_wq.cons_idx == n,
           "NVSHMEM counters: prod_idx %llu, cons_idx %llu",
           static_cast<unsigned long long>(after.qp.mvars.tx_wq.prod_idx),
           static_cast<unsigned long long>(after.qp.mvars.tx_wq.cons_idx));
  const auto c = pe.nic->counters(pe.qp->qpn());
  GT_CHECK(c.cqes_written == n && c.error_cqes == 0, "softnic: %llu CQEs, %llu errors",
           static_cast<unsigned long long>(c.cqes_written),
           static_cast<unsigned long long>(c.error_cqes));
  std::printf("ok: %u inline writes, quiet every %u (ring %u WQEBBs), through %s %s on a "
              "collapsed CQ\n", n, burst, pe.qp->handle().sq.wqebb_count, ibgda::LIBRARY,
              ibgda::version().c_str());
  return 0;
}

// One inline put on each QP of a two-QP RC table, then NVSHMEM's all-QP quiet
// (nvshmemi_ibgda_quiet) from this one thread: it must retire both, walking the table as nvshmem_quiet does.
__global__ void ibgda_quiet_all(void* table, uint8_t* dst0, uint32_t rkey0, uint8_t* dst1,
                                uint32_t rkey1, uint32_t* result) {
  nvshmemi_ibgda_device_qp_t* q0 = ibgda::rc_table_qp(table, 2, 0);
  nvshmemi_ibgda_device_qp_t* q1 = ibgda::rc_table_qp(table, 2, 1);
  ibgda::p<uint64_t>(q0, p_value(10), reinterpret_cast<uint64_t>(dst0), ibgda::mkey(rkey0));
  ibgda::p<uint64_t>(q1, p_value(11), reinterpret_cast<uint64_t>(dst1), ibgda::mkey(rkey1));
  const int verdict = ibgda::quiet_all(q0);
  if (verdict != 0) return fail(result, 1, 0, static_cast<uint32_t>(verdict));
  const uint64_t retired = *reinterpret_cast<volatile uint64_t*>(&q1->mvars.tx_wq.cons_idx);
  if (retired != 1) return fail(result, 2, 1, static_cast<uint32_t>(retired));
  if (*reinterpret_cast<volatile uint64_t*>(dst0) != p_value(10)) return fail(result, 3, 0, 0);
  if (*reinterpret_cast<volatile uint64_t*>(dst1) != p_value(11)) return fail(result, 3, 1, 0);
  result[0] = 0;
}

int run_quiet_all() {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096,
                            ibgda::attributes(nic::Placement::gpu));
  Pe& a = layout->pe[0];
  Pe& b = layout->pe[1];
  Stream stream(0);
  // The table in the records' pool: no cudaMalloc beside the running engine.
  const dissect::peers::DeviceRecord home(0, ibgda::rc_table_bytes(2), stream.s);
  const nic::QpHandle handles[2] = {a.qp->handle(), b.qp->handle()};
  ibgda::upload_rc_table(handles, 2, home.get(), stream.s);
  ibgda::upload_state(stream.s, ibgda::rc_table_qps(home.get()), 2);
  ibgda_quiet_all<<<1, 1, 0, stream.s>>>(home.get(), b.dst, b.dst_mr.rkey, a.dst, a.dst_mr.rkey,
                                         layout->result);
  GT_CHECK(wait_stream(stream.s, 15), "quiet_all kernel did not finish; engine: %s",
           a.nic->describe_status().c_str());
  GT_CHECK(layout->result[0] == 0, "check %u failed on QP %u (detail %u)", layout->result[0],
           layout->result[1], layout->result[2]);
  std::printf("ok: nvshmemi_ibgda_quiet retired a put on each QP of a 2-QP RC table\n");
  return 0;
}

__global__ void ibgda_bad_rkey(nvshmemi_ibgda_device_qp_t* qp, uint8_t* dst, uint32_t bad_rkey,
                               uint32_t* result) {
  ibgda::p<uint64_t>(qp, p_value(1), reinterpret_cast<uint64_t>(dst), ibgda::mkey(bad_rkey));
  result[0] = static_cast<uint32_t>(ibgda::quiet(qp));
}

int run_bad_rkey() {
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu, 4096,
                            ibgda::attributes(nic::Placement::gpu));
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  Stream stream(0);
  ibgda::upload_state(stream.s);
  const ibgda::Qp qp(pe.qp->handle(), 0, stream.s);
  ibgda_bad_rkey<<<1, 1, 0, stream.s>>>(qp.device_qp(), peer.dst, peer.dst_mr.rkey ^ 0x5500,
                                        layout->result);
  GT_CHECK(wait_stream(stream.s, 15), "kernel did not finish");
  GT_CHECK(layout->result[0] == dissect::mlx5::MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
           "quiet verdict %d, expected syndrome 0x13", static_cast<int>(layout->result[0]));
  GT_CHECK(read_back(peer.dst, 64, stream.s) == std::vector<uint8_t>(64, 0), "bad-rkey write landed");
  std::printf("ok: bad rkey -> error CQE 0x13 through NVSHMEM's ibgda_poll_cq\n");
  return 0;
}

// Host only: the records' internal pointers, and a QP NVSHMEM's poll cannot run on refused.
int run_make_records() {
  alignas(64) static uint8_t ring[64];
  alignas(64) static dissect::mlx5::mlx5_cqe64 cqe[1];
  alignas(8) static dissect::mlx5::be32 dbrec[2];
  alignas(8) static uint64_t doorbell;
  nic::QpHandle h{};
  h.sq = dissect::mlx5::send_ring{ring, 1};
  h.qpn = 0x42;
  h.dbrec_send = &dbrec[1];
  h.doorbell = &doorbell;
  h.send_cq = nic::CqHandle{cqe, 1, 0x42, nullptr, 1};
  auto* home = reinterpret_cast<ibgda::Records*>(uintptr_t{0x100000});
  const ibgda::Records r = ibgda::make_records(h, home);
  GT_CHECK(r.qp.tx_wq.cq == &home->cq && r.cq.prod_idx == &home->qp.mvars.tx_wq.prod_idx &&
               r.cq.cons_idx == &home->qp.mvars.tx_wq.cons_idx &&
               r.cq.ready_head == &home->qp.mvars.tx_wq.ready_head, "record pointers");
  GT_CHECK(r.qp.tx_wq.wqe == ring && r.qp.tx_wq.bf == &doorbell && r.qp.tx_wq.nwqes == 1, "SQ");
  h.send_cq.collapsed = 0;
  bool refused = false;
  try {
    ibgda::make_records(h, home);
  } catch (const dissect::InvalidArgument& e) {
    refused = std::strstr(e.what(), "not collapsed") != nullptr;
  }
  GT_CHECK(refused, "a QP whose send CQ is not collapsed was not refused by name");
  std::printf("ok: nvshmemi_ibgda_device_qp_t + cq from a QpHandle\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Cases cases = {
      {"make_records", [] { return run_make_records(); }},
      {"puts_land", [] { return run_puts_land(); }},
      {"many_outstanding", [] { return run_many_outstanding(); }},
      {"quiet_all", [] { return run_quiet_all(); }},
      {"bad_rkey_error_cqe", [] { return run_bad_rkey(); }},
  };
  return run_cases(argc, argv, cases);
}
