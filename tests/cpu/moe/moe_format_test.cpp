// The MoE client's formats, routing and reference checks (no NIC): E4M3 and BF16 encodings, the
// DeepSeek-V3 message sizes, seeded routing with masked entries, and checks that catch corruption.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "dissect/moe/handle.h"
#include "dissect/moe/layout.h"
#include "dissect/moe/lanes.h"
#include "dissect/moe/message.h"
#include "dissect/moe/reference.h"
#include "dissect/moe/routing.h"

namespace moe = dissect::moe;

namespace {

TEST(MoeFormat, DeepSeekV3SizesAreDeepEPs) {
  const moe::MoeShape s;  // the default shape
  EXPECT_EQ(moe::dispatch_message_bytes(s), 7408u) << "16 B header + 7,168 B + 56 x 4 B";
  EXPECT_EQ(moe::combine_message_bytes(s), 14336u);
  EXPECT_EQ(moe::scales_per_token(s), 56u);
  EXPECT_EQ(moe::local_experts(s), 32u);
  EXPECT_EQ(moe::required_sq_wqebbs(s), 256u) << "128 messages and a signal on one QP";
  EXPECT_EQ(moe::shape_error(s), "");
}

TEST(MoeFormat, ABadShapeIsRefusedByFieldAndValue) {
  moe::MoeShape s;
  s.hidden = 7000;
  EXPECT_NE(moe::shape_error(s).find("hidden 7000"), std::string::npos) << moe::shape_error(s);
  s = {};
  s.experts = 250;
  EXPECT_NE(moe::shape_error(s).find("experts 250"), std::string::npos);
  s = {};
  s.tokens = 129;
  EXPECT_NE(moe::shape_error(s).find("tokens 129"), std::string::npos);
  s = {};
  s.top_k = 0;
  EXPECT_NE(moe::shape_error(s).find("top-k 0"), std::string::npos);
  EXPECT_THROW(moe::make_inputs(s, {}, 0), std::invalid_argument);
}

TEST(MoeFormat, E4M3EncodesKnownValuesAndRoundsToEven) {
  EXPECT_EQ(moe::float_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(moe::float_to_e4m3(-2.0f), 0xc0);
  EXPECT_EQ(moe::float_to_e4m3(448.0f), 0x7e);
  EXPECT_EQ(moe::float_to_e4m3(1000.0f), 0x7e) << "saturates";
  EXPECT_EQ(moe::float_to_e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(moe::float_to_e4m3(0x1.0p-9f), 0x01) << "smallest subnormal";
  EXPECT_EQ(moe::float_to_e4m3(0x1.0p-11f), 0x00) << "below half the smallest rounds to zero";
  EXPECT_EQ(moe::float_to_e4m3(1.0625f), 0x38) << "tie between 1 and 1.125 goes to even";
  EXPECT_EQ(moe::float_to_e4m3(1.1875f), 0x3a) << "tie between 1.125 and 1.25 goes to even";
  EXPECT_EQ(moe::float_to_e4m3(1.9999f), 0x40) << "mantissa carry into the next exponent";
  EXPECT_EQ(moe::float_to_e4m3(0x1.ep-7f), 0x08) << "subnormal rounding up to the smallest normal";
}

TEST(MoeFormat, EveryFiniteE4M3CodeRoundTrips) {
  for (uint32_t code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) continue;  // NaN
    const float v = moe::e4m3_to_float(static_cast<uint8_t>(code));
    EXPECT_EQ(moe::float_to_e4m3(v), code) << "code " << code << " value " << v;
  }
  EXPECT_EQ(moe::e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(moe::e4m3_to_float(0x01), 0x1.0p-9f);
}

TEST(MoeFormat, Bf16RoundsToNearestEven) {
  EXPECT_EQ(moe::float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(moe::float_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(moe::float_to_bf16(moe::bits_float(0x3f808000u)), 0x3f80) << "tie to even (down)";
  EXPECT_EQ(moe::float_to_bf16(moe::bits_float(0x3f818000u)), 0x3f82) << "tie to even (up)";
  EXPECT_EQ(moe::float_to_bf16(moe::bits_float(0x3f808001u)), 0x3f81);
  EXPECT_EQ(moe::bf16_to_float(0x3f80), 1.0f);
}

TEST(MoeFormat, PackedMessageHasHeaderScalesAndBoundedError) {
  moe::MoeShape s;
  s.hidden = 256, s.experts = 8, s.ranks = 2, s.top_k = 2, s.tokens = 4, s.max_tokens = 4;
  const moe::RankInputs in = moe::make_inputs(s, {7, 0}, 1);
  const std::vector<uint8_t> m = moe::reference_message(s, in, 3);
  ASSERT_EQ(m.size(), 16u + 256 + 8);
  int32_t token;
  std::memcpy(&token, m.data(), 4);
  EXPECT_EQ(token, 3);
  std::vector<uint8_t> copy = m;
  const float* scales = moe::message_scales(copy.data(), s);
  for (uint32_t g = 0; g < 2; ++g) {
    float amax = 0;
    for (uint32_t i = 0; i < 128; ++i) amax = std::fmax(amax, std::fabs(moe::bf16_to_float(in.x[3 * 256 + g * 128 + i])));
    EXPECT_FLOAT_EQ(scales[g], amax / 448.0f) << "group " << g;
    for (uint32_t i = 0; i < 128; ++i) {
      const float x = moe::bf16_to_float(in.x[3 * 256 + g * 128 + i]);
      const float back = moe::e4m3_to_float(moe::message_fp8(copy.data())[g * 128 + i]) * scales[g];
      EXPECT_LE(std::fabs(back - x), amax / 16 + 1e-6f) << "E4M3 keeps 3 mantissa bits: group " << g;
    }
  }
}

TEST(MoeRouting, SeededDistinctAndMaskedAtTheAskedFraction) {
  moe::MoeShape s;  // 128 tokens, top-8 of 256
  const moe::RankInputs a = moe::make_inputs(s, {42, 0.0}, 3);
  EXPECT_EQ(a.topk_idx, moe::make_inputs(s, {42, 0.0}, 3).topk_idx) << "same seed, same routing";
  EXPECT_NE(a.topk_idx, moe::make_inputs(s, {43, 0.0}, 3).topk_idx) << "another seed differs";
  EXPECT_NE(a.topk_idx, moe::make_inputs(s, {42, 0.0}, 4).topk_idx) << "another rank differs";
  EXPECT_EQ(moe::selections(s, a), 128u * 8);
  for (uint32_t t = 0; t < s.tokens; ++t) {
    std::set<int32_t> experts(a.topk_idx.begin() + t * 8, a.topk_idx.begin() + t * 8 + 8);
    EXPECT_EQ(experts.size(), 8u) << "token " << t << " routes to 8 distinct experts";
    for (int32_t e : experts) EXPECT_TRUE(e >= 0 && e < 256);
  }
  const moe::RankInputs masked = moe::make_inputs(s, {42, 0.25}, 3);
  const uint64_t kept = moe::selections(s, masked);
  EXPECT_GT(kept, 1024u * 0.65);
  EXPECT_LT(kept, 1024u * 0.85) << "about 25% of 1,024 entries masked";
  EXPECT_EQ(moe::selections(s, moe::make_inputs(s, {42, 1.0}, 3)), 0u);
  EXPECT_THROW(moe::make_inputs(s, {42, 1.5}, 3), std::invalid_argument);
}

// A hand-built correct dispatch output passes the check; one flipped byte, a duplicated token or
// a wrong count fails it, naming the rank and expert.
TEST(MoeReference, DispatchCheckCatchesCorruption) {
  moe::MoeShape s;
  s.hidden = 128, s.experts = 4, s.ranks = 2, s.top_k = 2, s.tokens = 6, s.max_tokens = 6;
  std::vector<moe::RankInputs> inputs = {moe::make_inputs(s, {5, 0.2}, 0), moe::make_inputs(s, {5, 0.2}, 1)};
  const uint32_t rank = 1, cap = moe::expert_capacity(s), local = moe::local_experts(s);
  std::vector<uint8_t> x(local * cap * s.hidden);
  std::vector<float> scales(local * cap);
  std::vector<int32_t> src(local * cap, -1);
  std::vector<uint64_t> range(local * s.ranks);
  std::vector<uint32_t> count(local);
  for (uint32_t l = 0; l < local; ++l) {
    for (uint32_t source = 0; source < s.ranks; ++source) {
      const auto tokens = moe::routed_tokens(s, inputs[source], rank * local + l);
      range[l * s.ranks + source] = (uint64_t{tokens.size()} << 32) | count[l];
      for (size_t i = tokens.size(); i-- > 0;) {  // reversed: slot order must not matter
        const uint32_t row = l * cap + count[l]++;
        std::vector<uint8_t> m = moe::reference_message(s, inputs[source], tokens[i]);
        std::memcpy(&x[row * s.hidden], moe::message_fp8(m.data()), s.hidden);
        scales[row] = *moe::message_scales(m.data(), s);
        src[row] = static_cast<int32_t>(tokens[i]);
      }
    }
  }
  const moe::DispatchView view{x.data(), scales.data(), src.data(), range.data(), count.data()};
  moe::CheckReport good;
  moe::check_dispatch(s, inputs, rank, view, good);
  ASSERT_TRUE(good.ok()) << (good.first.empty() ? "nothing checked" : good.first[0]);
  x[5] ^= 1;
  moe::CheckReport flipped;
  moe::check_dispatch(s, inputs, rank, view, flipped);
  EXPECT_EQ(flipped.mismatches, 1u);
  ASSERT_FALSE(flipped.first.empty());
  EXPECT_NE(flipped.first[0].find("rank 1 expert 2"), std::string::npos) << flipped.first[0];
  x[5] ^= 1;
  ASSERT_GE(count[0], 2u);
  src[1] = src[0];
  moe::CheckReport twice;
  moe::check_dispatch(s, inputs, rank, view, twice);
  EXPECT_GE(twice.mismatches, 1u);
  range[0] += uint64_t{1} << 32;
  moe::CheckReport counted;
  moe::check_dispatch(s, inputs, rank, view, counted);
  EXPECT_GE(counted.mismatches, 1u);
  ASSERT_FALSE(counted.first.empty());
  EXPECT_NE(counted.first.back().find("expert 2 from rank 0: count"), std::string::npos)
      << counted.first.back();
}

TEST(MoeReference, CombinedOutputIsTheWeightedSumOfTheExperts) {
  moe::MoeShape s;
  s.hidden = 128, s.experts = 4, s.ranks = 2, s.top_k = 2, s.tokens = 3, s.max_tokens = 3;
  std::vector<moe::RankInputs> inputs = {moe::make_inputs(s, {9, 0.0}, 0), moe::make_inputs(s, {9, 0.0}, 1)};
  const std::vector<uint16_t> c = moe::reference_combined(s, inputs[0], 1);
  // By hand: dequantise, apply each expert's gain, weight, sum in float.
  std::vector<uint8_t> m = moe::reference_message(s, inputs[0], 1);
  const float scale = *moe::message_scales(m.data(), s);
  for (uint32_t i = 0; i < s.hidden; ++i) {
    double sum = 0;
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t e = static_cast<uint32_t>(inputs[0].topk_idx[2 + k]);
      const float out = moe::bf16_to_float(moe::float_to_bf16(
          moe::e4m3_to_float(moe::message_fp8(m.data())[i]) * scale * moe::expert_gain(e)));
      sum += inputs[0].topk_weights[2 + k] * out;
    }
    EXPECT_NEAR(moe::bf16_to_float(c[i]), sum, std::fabs(sum) / 128 + 1e-6) << i;
  }
  std::vector<uint16_t> all;
  for (uint32_t t = 0; t < 3; ++t) {
    auto r = moe::reference_combined(s, inputs[0], t);
    all.insert(all.end(), r.begin(), r.end());
  }
  moe::CheckReport ok;
  moe::check_combine(s, inputs, 0, all.data(), ok);
  EXPECT_TRUE(ok.ok());
  all[200] ^= 1;
  moe::CheckReport bad;
  moe::check_combine(s, inputs, 0, all.data(), bad);
  EXPECT_EQ(bad.mismatches, 1u);
  EXPECT_NE(bad.first[0].find("rank 0 token 1 element 72"), std::string::npos) << bad.first[0];
}

}  // namespace
