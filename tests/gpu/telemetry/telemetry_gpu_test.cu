// GPU-submitted traffic is counted: one GPU thread posts pointer writes, inline writes of 1..220 B
// (one to four WQEBBs) and doorbell batches through the softnic GPU engine; when the PE finalises
// the QP's counter block is copied back from GPU memory, and the telemetry file must show exactly
// the traffic sent, a histogram holding exactly the sampled WQEs (N = 4), and conform to the schema.
// Exits 77 without a CUDA device.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "dissect/gda/gda.h"
#include "dissect/telemetry/session.h"
#include "gpu_test_support.h"
#include "json_schema.h"

namespace dissect::gputest {
namespace {

using Policy = gda::counted<gda::ordering::gpu_fence>;  // the hooks compiled in
using telemetry::test::JsonValue;

constexpr uint32_t SLOT = 256;
constexpr uint32_t PUTS = 48;     // pointer puts, then as many inline puts
constexpr uint32_t BATCHES = 12;  // of BATCH writes under one doorbell
constexpr uint32_t BATCH = 8;
constexpr uint64_t SAMPLE = 4;

DISSECT_HD uint32_t pointer_length(uint32_t i) { return 1 + (i * 37) % 200; }
DISSECT_HD uint32_t inline_length(uint32_t i) { return 1 + (i * 53) % 220; }

__global__ void traffic(nic::QpHandle qp, uint8_t* src, uint32_t lkey, uint8_t* dst, uint32_t rkey,
                        uint32_t* result) {
  uint32_t status = 0;
  uint64_t end = 0;
  for (uint32_t i = 0; i < PUTS && status == 0; ++i) {
    gda::WriteRequest r{reinterpret_cast<uint64_t>(src), lkey, pointer_length(i),
                        reinterpret_cast<uint64_t>(dst + size_t{i} * SLOT), rkey};
    status = static_cast<uint32_t>(gda::put<Policy>(qp, r, gda::Completion::signaled, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  for (uint32_t i = 0; i < PUTS && status == 0; ++i) {
    uint8_t payload[220];
    for (uint32_t b = 0; b < inline_length(i); ++b) payload[b] = pattern_byte(i, b);
    gda::InlineWriteRequest r{payload, inline_length(i), reinterpret_cast<uint64_t>(dst), rkey};
    status = static_cast<uint32_t>(gda::put_inline<Policy>(qp, r, gda::Completion::signaled, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  for (uint32_t k = 0; k < BATCHES && status == 0; ++k) {
    gda::WriteRequest requests[BATCH];
    for (uint32_t j = 0; j < BATCH; ++j) {
      requests[j] = gda::WriteRequest{reinterpret_cast<uint64_t>(src), lkey, 64,
                                      reinterpret_cast<uint64_t>(dst + size_t{j} * SLOT), rkey};
    }
    status = static_cast<uint32_t>(gda::post_writes<Policy>(qp, requests, BATCH, &end));
    if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  }
  *result = status;
}

struct Expected {
  uint64_t wqes = 0, bytes = 0, doorbells = 0, cqes = 0, sampled = 0, wqebbs = 0;
  void add(uint64_t payload, uint32_t ds) {
    const uint64_t size = mlx5::wqebbs_for_ds(ds);
    // The post hook's rule: sampled when the WQE covers a ring index that is a multiple of N.
    sampled += ((0 - wqebbs) & (SAMPLE - 1)) < size;
    ++wqes;
    bytes += payload;
    wqebbs += size;
  }
};

Expected expected_traffic() {
  Expected e;
  for (uint32_t i = 0; i < PUTS; ++i) e.add(pointer_length(i), mlx5::RC_WRITE_DS);
  for (uint32_t i = 0; i < PUTS; ++i) e.add(inline_length(i), mlx5::rc_write_inline_ds(inline_length(i)));
  for (uint32_t k = 0; k < BATCHES * BATCH; ++k) e.add(64, mlx5::RC_WRITE_DS);
  e.doorbells = e.cqes = 2 * PUTS + BATCHES;
  return e;
}

const JsonValue* find_qp(const JsonValue& document, int64_t qpn, const JsonValue** channel_out) {
  for (const JsonValue& device : document.at("devices")) {
    if (device.at("roce_device").get<std::string>().rfind("softnic-gpu", 0) != 0) continue;
    for (const JsonValue& channel : device.at("channels")) {
      for (const JsonValue& qp : channel.at("queue_pairs")) {
        if (qp.at("id").get<int64_t>() == qpn) {
          *channel_out = &channel;
          return &qp;
        }
      }
    }
  }
  return nullptr;
}

int run() {
  if (!gda::TELEMETRY_COMPILED) {
    std::fprintf(stderr, "built with DISSECT_WITH_TELEMETRY=OFF: skipped\n");
    return SKIP;
  }
  if (device_count_or_skip() == 0) return SKIP;
  auto layout = make_layout("one-gpu", softnic::EngineKind::gpu_kernel, nic::Placement::gpu,
                            size_t{PUTS} * SLOT);
  Pe& pe = layout->pe[0];
  Pe& peer = layout->pe[1];
  const nic::QpHandle qp = pe.qp->handle();
  GT_CHECK(qp.telemetry != nullptr && qp.post_stamps != nullptr, "the GPU engine's QP got no GPU telemetry slot");
  cudaStream_t stream = nullptr;
  GT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  traffic<<<1, 1, 0, stream>>>(qp, pe.src, pe.src_mr.lkey, peer.dst, peer.dst_mr.rkey, layout->result);
  GT_CHECK(wait_stream(stream, 30), "kernel did not finish: %s", pe.nic->describe_status().c_str());
  GT_CHECK(layout->result[0] == 0, "device status %u: %s", layout->result[0], pe.nic->describe_status().c_str());

  // The PE finalises: its GPU blocks are gathered, then the file is written.
  telemetry::Session* session = telemetry::process_session();
  GT_CHECK(session != nullptr, "telemetry is not on");
  GT_CHECK(session->finalize(), "the telemetry file was not written");
  const JsonValue document = telemetry::test::parse_json(telemetry::test::read_text_file(session->output_path()));
  const JsonValue schema = telemetry::test::parse_json(
      telemetry::test::read_text_file(std::string(DISSECT_SOURCE_DIR) + "/docs/telemetry.schema.json"));
  const std::vector<std::string> violations = telemetry::test::validate(document, schema);
  GT_CHECK(violations.empty(), "schema: %s", violations.empty() ? "" : violations[0].c_str());

  const JsonValue* channel = nullptr;
  const JsonValue* q = find_qp(document, pe.qp->qpn(), &channel);
  GT_CHECK(q != nullptr, "QP 0x%x is not in %s", pe.qp->qpn(), session->output_path().c_str());
  const Expected e = expected_traffic();
  auto expect = [&](const JsonValue& object, const char* key, uint64_t want) {
    const int64_t got = object.at(key).get<int64_t>();
    GT_CHECK(got == static_cast<int64_t>(want), "%s = %lld, expected %llu", key,
             static_cast<long long>(got), static_cast<unsigned long long>(want));
  };
  expect(*q, "num_wqe_sent", e.wqes);
  expect(*q, "num_write_wqe", e.wqes);
  expect(*q, "tx_bytes", e.bytes);
  expect(*q, "num_wqebb", e.wqebbs);
  expect(*q, "num_doorbells", e.doorbells);
  expect(q->at("wqes_per_doorbell"), "total", e.wqes);
  expect(q->at("wqes_per_doorbell"), "max", BATCH);
  expect(*q, "num_wqe_completed", e.wqes);
  expect(*q, "num_wqe_rcvd", e.cqes);
  expect(*q, "num_cq_errors", 0);
  uint64_t histogram = 0;
  for (const JsonValue& bucket : q->at("wqe_completion_histogram")) histogram += bucket.at("num_wqe").get<int64_t>();
  expect(*q, "num_wqe_sampled", histogram);
  GT_CHECK(histogram == e.sampled, "histogram holds %llu WQEs, the 1-in-%llu rule samples %llu",
           static_cast<unsigned long long>(histogram), static_cast<unsigned long long>(SAMPLE),
           static_cast<unsigned long long>(e.sampled));
  expect(*channel, "num_wqe_sent", e.wqes);
  std::printf("ok: %llu GPU-submitted WQEs (%llu B, %llu doorbells, %llu sampled) counted in %s\n",
              static_cast<unsigned long long>(e.wqes), static_cast<unsigned long long>(e.bytes),
              static_cast<unsigned long long>(e.doorbells), static_cast<unsigned long long>(e.sampled),
              session->output_path().c_str());
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace
}  // namespace dissect::gputest

int main() {
  // Before anything starts the process session: it reads the environment once.
  std::string directory;
  if (const char* given = std::getenv("DISSECT_TELEMETRY_OUTPUT_DIR")) {
    directory = given;
  } else {
    char name[] = "/tmp/dissect-telemetry-gpu-XXXXXX";
    if (mkdtemp(name) == nullptr) return 1;
    directory = name;
  }
  setenv("DISSECT_TELEMETRY_ENABLE", "1", 1);
  setenv("DISSECT_TELEMETRY_OUTPUT_DIR", directory.c_str(), 1);
  setenv("DISSECT_TELEMETRY_LATENCY_SAMPLE", "4", 1);
  try {
    return dissect::gputest::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "telemetry_gpu_test: %s\n", e.what());
    return 1;
  }
}
