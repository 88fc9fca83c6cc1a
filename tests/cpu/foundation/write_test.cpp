// Writes land byte-exact, and nothing outside the target range is touched.
#include <gtest/gtest.h>

#include <cstring>

#include "dissect/gda/gda.h"
#include "dissect/gda/recv.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::fill_pattern;
using dissect::testing::Loopback;
using Policy = gda::ordering::system_release_store;

namespace {

constexpr uint8_t kCanary = 0x5a;

void expect_landed(const Loopback& lb, size_t offset, size_t length, uint32_t seed) {
  std::vector<uint8_t> expected(length);
  fill_pattern(expected.data(), length, seed);
  ASSERT_EQ(0, std::memcmp(lb.destination.data() + offset, expected.data(), length))
      << "payload of " << length << " bytes at offset " << offset;
  for (size_t i = 0; i < lb.destination.size(); ++i) {
    if (i >= offset && i < offset + length) continue;
    ASSERT_EQ(lb.destination[i], kCanary) << "byte " << i << " outside the write was touched";
  }
}

TEST(Write, PointerPayloadsFromOneByteToOneMebibyte) {
  Loopback lb({}, (1 << 20) + 64);
  const auto qp = lb.qp();
  uint32_t seed = 1;
  for (size_t length = 1; length <= (1u << 20); length = length < 64 ? length + 1 : length * 2 + 7) {
    if (length > (1u << 20)) length = 1u << 20;
    const size_t offset = length % 13;  // unaligned destinations too
    std::memset(lb.destination.data(), kCanary, lb.destination.size());
    fill_pattern(lb.source.data() + 3, length, seed);
    uint64_t end = 0;
    gda::WriteRequest request{lb.source_address(3), lb.source_mr.lkey, static_cast<uint32_t>(length),
                              lb.destination_address(offset), lb.destination_mr.rkey};
    ASSERT_EQ(gda::put<Policy>(qp, request, gda::Completion::signaled, &end), gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
    expect_landed(lb, offset, length, seed);
    ++seed;
    if (length == (1u << 20)) break;
  }
}

TEST(Write, EveryInlineSizeUpToTheLimit) {
  dissect::nic::QpAttributes attributes;
  attributes.max_inline = 220;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  for (uint32_t length = 1; length <= qp.max_inline; ++length) {
    std::memset(lb.destination.data(), kCanary, lb.destination.size());
    // Odd sizes come from an unaligned address: the builder reads aligned payloads by words.
    std::vector<uint8_t> storage(length + 4);
    uint8_t* payload = storage.data() + (length % 2);
    fill_pattern(payload, length, length);
    uint64_t end = 0;
    gda::InlineWriteRequest request{payload, length, lb.destination_address(length),
                                    lb.destination_mr.rkey};
    ASSERT_EQ(gda::put_inline<Policy>(qp, request, gda::Completion::signaled, &end), gda::Status::ok);
    std::memset(storage.data(), 0, storage.size());  // the WQE carries its own copy
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
    expect_landed(lb, length, length, length);
  }
}

// A 16-byte-aligned payload is copied a block at a time, reading past its last byte up to the end
// of that block: those bytes must never reach the WQE. Every length builds the same segment from
// an aligned source followed by 0xff as from an unaligned copy of it (the word/byte path).
TEST(Write, InlineSegmentIsTheSameFromAlignedAndUnalignedSources) {
  dissect::nic::QpAttributes attributes;
  attributes.max_inline = 220;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  alignas(16) uint8_t aligned[256 + 16];
  uint8_t unaligned_storage[256 + 16];
  uint8_t* unaligned = unaligned_storage + 1;
  for (uint32_t length = 0; length <= qp.max_inline; ++length) {
    std::memset(aligned, 0xff, sizeof aligned);
    fill_pattern(aligned, length, length);
    std::memcpy(unaligned, aligned, length);
    const uint32_t segment_bytes = 16 * dissect::mlx5::inline_ds(length);
    std::vector<uint8_t> from_aligned(segment_bytes), from_unaligned(segment_bytes);
    for (auto [source, out] : {std::pair{static_cast<const uint8_t*>(aligned), &from_aligned},
                               std::pair{static_cast<const uint8_t*>(unaligned), &from_unaligned}}) {
      gda::write_inline_payload(qp, 0, source, length);
      for (uint32_t c = 0; c < segment_bytes / 16; ++c) {
        std::memcpy(out->data() + 16 * c, qp.sq.segment(0, 2 + c), 16);
      }
    }
    ASSERT_EQ(from_aligned, from_unaligned) << "inline segment of " << length << " bytes";
    for (uint32_t b = 4 + length; b < segment_bytes; ++b) {
      ASSERT_EQ(from_aligned[b], 0) << "padding byte " << b << " of a " << length << " B payload";
    }
  }
}

TEST(Write, WithImmediateDeliversTheImmediateAfterThePayload) {
  dissect::nic::QpAttributes attributes;
  attributes.rq_wqes = 16;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  const auto rq = lb.responder->recv_handle();
  gda::post_receives(rq, 4);
  for (uint32_t i = 0; i < 40; ++i) {
    if (i % 4 == 0 && i != 0) gda::post_receives(rq, 4);
    fill_pattern(lb.source.data(), 100, i);
    uint64_t end = 0;
    gda::WriteRequest request{lb.source_address(), lb.source_mr.lkey, 100, lb.destination_address(),
                              lb.destination_mr.rkey};
    const auto immediate = dissect::mlx5::be32::from_host(0xc0de0000u + i);
    ASSERT_EQ(gda::put_with_immediate<Policy>(qp, request, immediate, gda::Completion::signaled, &end),
              gda::Status::ok);
    gda::ImmediateCompletion completion{};
    ASSERT_EQ(gda::wait_receive(rq, &completion, lb.responder->qpn()), gda::Status::ok);
    EXPECT_EQ(completion.opcode, dissect::mlx5::MLX5_CQE_RESP_WR_IMM);
    EXPECT_EQ(completion.immediate.value(), 0xc0de0000u + i);
    EXPECT_EQ(completion.byte_count, 100u);
    ASSERT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), 100));
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
  }
}

TEST(Write, FetchAddReturnsThePreviousValue) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  uint64_t* target = reinterpret_cast<uint64_t*>(lb.destination.data() + 64);
  uint64_t* result = reinterpret_cast<uint64_t*>(lb.source.data() + 128);
  *target = 1000;
  uint64_t expected = 1000;
  for (uint64_t i = 1; i <= 50; ++i) {
    uint64_t end = 0;
    gda::FetchAddRequest request{lb.destination_address(64), lb.destination_mr.rkey, i,
                                 lb.source_address(128), lb.source_mr.lkey};
    ASSERT_EQ(gda::fetch_add<Policy>(qp, request, &end), gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
    EXPECT_EQ(*result, expected);
    expected += i;
  }
  EXPECT_EQ(*target, expected);
}

}  // namespace
