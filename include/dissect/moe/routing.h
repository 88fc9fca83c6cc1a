// Inputs of one rank, generated on the host from a seed: BF16 tokens, top-k routing (distinct
// experts per token, a fraction of entries masked to -1, as DeepEP's tests mask) and weights.
// The same (shape, options, rank) always gives the same inputs, on every rank and every run.
#pragma once

#include <cstdint>
#include <vector>

#include "dissect/moe/shape.h"

namespace dissect::moe {

struct RoutingOptions {
  uint64_t seed = 1;
  double masked_fraction = 0.0;  // probability that a top-k entry is -1 (0..1)
};

struct RankInputs {
  std::vector<uint16_t> x;           // [tokens][hidden] BF16
  std::vector<int32_t> topk_idx;     // [tokens][top_k]: an expert, or -1
  std::vector<float> topk_weights;   // [tokens][top_k]: > 0 (masked entries too; never read)
};

RankInputs make_inputs(const MoeShape& shape, const RoutingOptions& options, uint32_t rank);

// Top-k entries that are not masked, over `tokens` tokens: DeepEP's num_selections summed.
uint64_t selections(const MoeShape& shape, const RankInputs& inputs);

}  // namespace dissect::moe
