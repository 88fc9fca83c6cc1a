#include "dissect/moe/routing.h"

#include <numeric>
#include <stdexcept>
#include <string>

#include "dissect/moe/numerics.h"

namespace dissect::moe {
namespace {

// splitmix64: a tiny, well-mixed generator whose stream depends only on the seed.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

SplitMix stream(uint64_t seed, uint32_t rank, uint32_t token, uint32_t purpose) {
  SplitMix m{seed ^ (uint64_t{rank} << 40) ^ (uint64_t{token} << 8) ^ purpose};
  m.next();
  return m;
}

// BF16 values whose magnitude differs per 128-element group (2^-3 .. 2^3), so every group gets
// its own scale and the FP8 rounding differs from group to group.
void fill_token(const MoeShape& s, uint64_t seed, uint32_t rank, uint32_t token, uint16_t* out) {
  SplitMix m = stream(seed, rank, token, 1);
  for (uint32_t i = 0; i < s.hidden; ++i) {
    const float magnitude = power_of_two(static_cast<int>((i / SCALE_GROUP + token) % 7) - 3);
    const float unit = static_cast<float>(m.unit() * 2.0 - 1.0);
    out[i] = float_to_bf16(unit * magnitude);
  }
}

// Distinct experts by a partial Fisher-Yates shuffle; each entry masked with the given chance.
void route_token(const MoeShape& s, const RoutingOptions& o, uint32_t rank, uint32_t token,
                 int32_t* idx, float* weights) {
  SplitMix m = stream(o.seed, rank, token, 2);
  std::vector<int32_t> experts(s.experts);
  std::iota(experts.begin(), experts.end(), 0);
  for (uint32_t k = 0; k < s.top_k; ++k) {
    const uint32_t pick = k + static_cast<uint32_t>(m.next() % (s.experts - k));
    std::swap(experts[k], experts[pick]);
    idx[k] = m.unit() < o.masked_fraction ? -1 : experts[k];
    weights[k] = static_cast<float>(1 + m.next() % 1024) / 1024.0f;  // (0, 1], exact in float
  }
}

}  // namespace

std::string shape_error(const MoeShape& s) {
  auto bad = [](const char* field, uint32_t v, const char* rule) {
    return std::string("moe shape: ") + field + " " + std::to_string(v) + " " + rule;
  };
  if (s.hidden == 0 || s.hidden % SCALE_GROUP != 0) return bad("hidden", s.hidden, "is not a positive multiple of 128");
  if (s.ranks == 0) return bad("ranks", s.ranks, "must be at least 1");
  if (s.experts == 0 || s.experts % s.ranks != 0) return bad("experts", s.experts, "is not a positive multiple of the ranks");
  if (s.top_k == 0 || s.top_k > s.experts || s.top_k > MAX_TOP_K) return bad("top-k", s.top_k, "must be 1..min(experts, 32)");
  if (s.max_tokens == 0 || s.max_tokens > MAX_TOKENS_PER_RANK) return bad("max tokens", s.max_tokens, "must be 1..128");
  if (s.tokens == 0 || s.tokens > s.max_tokens) return bad("tokens", s.tokens, "must be 1..max tokens");
  return {};
}

RankInputs make_inputs(const MoeShape& s, const RoutingOptions& o, uint32_t rank) {
  const std::string error = shape_error(s);
  if (!error.empty()) throw std::invalid_argument(error);
  if (!(o.masked_fraction >= 0 && o.masked_fraction <= 1)) {
    throw std::invalid_argument("moe routing: masked fraction " + std::to_string(o.masked_fraction) +
                                " is not in 0..1");
  }
  RankInputs in;
  in.x.resize(size_t{s.tokens} * s.hidden);
  in.topk_idx.resize(size_t{s.tokens} * s.top_k);
  in.topk_weights.resize(size_t{s.tokens} * s.top_k);
  for (uint32_t t = 0; t < s.tokens; ++t) {
    fill_token(s, o.seed, rank, t, in.x.data() + size_t{t} * s.hidden);
    route_token(s, o, rank, t, in.topk_idx.data() + size_t{t} * s.top_k,
                in.topk_weights.data() + size_t{t} * s.top_k);
  }
  return in;
}

uint64_t selections(const MoeShape& s, const RankInputs& in) {
  uint64_t n = 0;
  for (size_t i = 0; i < size_t{s.tokens} * s.top_k; ++i) n += in.topk_idx[i] >= 0 ? 1 : 0;
  return n;
}

}  // namespace dissect::moe
