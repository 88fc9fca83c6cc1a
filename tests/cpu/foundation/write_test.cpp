// Writes land byte-exact, and nothing outside the target range is touched.
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <new>
#include <vector>

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

// A 16-byte-aligned payload is copied a block at a time but for its partial last block (words and
// bytes, never a load past the payload): the 0xff after the payload must never reach the WQE.
// Every length builds the same segment from an aligned source followed by 0xff as from an
// unaligned copy of it (the word/byte path).
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

// The inline segment byte for byte against the PRM format, written straight into the send ring:
// the BE32 byte count with MLX5_INLINE_SEG, the payload, zero padding to 16 B, and no other ring
// byte touched. Every length 0..260 (the register path to 223 B, the general path beyond), from
// sources at 0, 1, 2, 3, 4, 8 and 12 bytes past a 16-byte boundary, each in a heap block that ends
// with the payload (ASan: no load past it), at WQE starts that keep the segment contiguous and at
// starts where it wraps to slot 0 (the last 1-4 WQEBBs, and a free-running index past the ring).
TEST(Write, InlineSegmentIsThePrmFormatForEverySizeAlignmentAndRingPosition) {
  namespace mlx5 = dissect::mlx5;
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 32;
  attributes.max_inline = 220;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  const size_t ring_bytes = size_t{qp.sq.wqebb_count} * mlx5::MLX5_SEND_WQE_BB;
  const uint64_t w = qp.sq.wqebb_count;
  const uint64_t starts[] = {0, 5, w - 4, w - 3, w - 2, w - 1, 3 * w - 2};
  constexpr uint8_t kRingCanary = 0xa5;
  uint32_t cases = 0, wrapped = 0;
  for (uint32_t length = 0; length <= 260; ++length) {
    const uint32_t chunks = mlx5::inline_ds(length);
    std::vector<uint8_t> expected(16 * chunks, 0);
    const uint32_t header = mlx5::be32::from_host(length | mlx5::MLX5_INLINE_SEG).raw;
    std::memcpy(expected.data(), &header, 4);
    for (uint32_t offset : {0u, 1u, 2u, 3u, 4u, 8u, 12u}) {
      const size_t block = offset + length;
      auto* storage = static_cast<uint8_t*>(::operator new[](block == 0 ? 1 : block,
                                                              std::align_val_t{16}));
      uint8_t* payload = storage + offset;
      fill_pattern(payload, length, length * 16 + offset);
      std::memcpy(expected.data() + 4, payload, length);
      for (uint64_t start : starts) {
        std::memset(qp.sq.buffer, kRingCanary, ring_bytes);
        gda::write_inline_payload(qp, start, payload, length);
        std::vector<bool> in_segment(ring_bytes, false);
        for (uint32_t c = 0; c < chunks; ++c) {
          const uint8_t* chunk = qp.sq.segment(start, 2 + c);
          const size_t at = static_cast<size_t>(chunk - qp.sq.buffer);
          for (uint32_t b = 0; b < 16; ++b) {
            ASSERT_EQ(chunk[b], expected[16 * c + b])
                << "segment byte " << 16 * c + b << " of a " << length << " B payload at offset "
                << offset << ", WQE at " << start;
            in_segment[at + b] = true;
          }
        }
        for (size_t i = 0; i < ring_bytes; ++i) {
          if (!in_segment[i]) {
            ASSERT_EQ(qp.sq.buffer[i], kRingCanary)
                << "ring byte " << i << " outside the segment of a " << length
                << " B payload at offset " << offset << ", WQE at " << start;
          }
        }
        ++cases;
        const uint64_t slot = start & qp.sq.mask();
        if (slot + (1 + chunks) / mlx5::MLX5_DS_PER_WQEBB >= w) ++wrapped;
      }
      ::operator delete[](storage, std::align_val_t{16});
    }
  }
  EXPECT_EQ(cases, 261u * 7 * std::size(starts));
  EXPECT_GT(wrapped, 1000u) << "the sweep must build segments that wrap the ring";
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
