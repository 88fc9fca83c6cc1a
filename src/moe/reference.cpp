#include "dissect/moe/reference.h"

#include <cstring>
#include <map>

#include "dissect/moe/lanes.h"
#include "dissect/moe/message.h"

namespace dissect::moe {

void CheckReport::fail(std::string what) {
  ++mismatches;
  if (first.size() < MAX_DESCRIBED) first.push_back(std::move(what));
}

std::vector<uint32_t> routed_tokens(const MoeShape& s, const RankInputs& source, uint32_t expert) {
  std::vector<uint32_t> tokens;
  for (uint32_t t = 0; t < s.tokens; ++t) {
    for (uint32_t k = 0; k < s.top_k; ++k) {
      if (source.topk_idx[size_t{t} * s.top_k + k] == static_cast<int32_t>(expert)) tokens.push_back(t);
    }
  }
  return tokens;
}

std::vector<uint8_t> reference_message(const MoeShape& s, const RankInputs& source, uint32_t token) {
  std::vector<uint8_t> message(dispatch_message_bytes(s));
  pack_dispatch_message(HostWarp{}, s, source.x.data() + size_t{token} * s.hidden, token,
                        message.data());
  return message;
}

namespace {

std::string where(uint32_t rank, uint32_t expert, uint32_t source) {
  return "rank " + std::to_string(rank) + " expert " + std::to_string(expert) + " from rank " +
         std::to_string(source);
}

// One (local expert, source) pair: `begin`/`count` rows of the packed output.
void check_pair(const MoeShape& s, const RankInputs& source_inputs, uint32_t rank, uint32_t local,
                uint32_t source, const DispatchView& v, CheckReport& report) {
  const uint32_t expert = rank * local_experts(s) + local;
  const std::string at = where(rank, expert, source);
  const std::vector<uint32_t> expected = routed_tokens(s, source_inputs, expert);
  const uint64_t range = v.packed_layout_range[size_t{local} * s.ranks + source];
  const uint32_t count = static_cast<uint32_t>(range >> 32), begin = static_cast<uint32_t>(range);
  if (count != expected.size()) {
    report.fail(at + ": count " + std::to_string(count) + ", expected " + std::to_string(expected.size()));
    return;
  }
  std::map<uint32_t, int> seen;
  for (uint32_t t : expected) seen[t] = 0;
  const uint32_t scale_bytes = scales_per_token(s) * 4;
  for (uint32_t i = 0; i < count; ++i) {
    ++report.checked;
    const size_t row = size_t{local} * expert_capacity(s) + begin + i;
    const int32_t token = v.packed_src_info[row];
    auto it = seen.find(static_cast<uint32_t>(token));
    if (token < 0 || it == seen.end() || it->second++ != 0) {
      report.fail(at + ": row " + std::to_string(begin + i) + " holds source token " +
                  std::to_string(token) + (it == seen.end() ? ", not routed here" : ", twice"));
      continue;
    }
    std::vector<uint8_t> m = reference_message(s, source_inputs, static_cast<uint32_t>(token));
    if (std::memcmp(v.packed_x + row * s.hidden, message_fp8(m.data()), s.hidden) != 0) {
      report.fail(at + " token " + std::to_string(token) + ": FP8 bytes differ");
    } else if (std::memcmp(v.packed_scales + row * scales_per_token(s), message_scales(m.data(), s),
                           scale_bytes) != 0) {
      report.fail(at + " token " + std::to_string(token) + ": scales differ");
    }
  }
}

}  // namespace

void check_dispatch(const MoeShape& s, const std::vector<RankInputs>& inputs, uint32_t rank,
                    const DispatchView& view, CheckReport& report) {
  for (uint32_t local = 0; local < local_experts(s); ++local) {
    uint64_t total = 0;
    for (uint32_t source = 0; source < s.ranks; ++source) {
      check_pair(s, inputs[source], rank, local, source, view, report);
      total += routed_tokens(s, inputs[source], rank * local_experts(s) + local).size();
    }
    if (view.packed_count[local] != total) {
      report.fail("rank " + std::to_string(rank) + " expert " +
                  std::to_string(rank * local_experts(s) + local) + ": packed count " +
                  std::to_string(view.packed_count[local]) + ", expected " + std::to_string(total));
    }
  }
}

std::vector<uint16_t> reference_combined(const MoeShape& s, const RankInputs& in, uint32_t token) {
  const std::vector<uint8_t> m = reference_message(s, in, token);
  std::vector<std::vector<uint16_t>> outputs(s.top_k);
  const int32_t* topk = in.topk_idx.data() + size_t{token} * s.top_k;
  for (uint32_t k = 0; k < s.top_k; ++k) {
    if (topk[k] < 0) continue;
    outputs[k].resize(s.hidden);
    std::vector<uint8_t> copy = m;
    run_expert(HostWarp{}, s, static_cast<uint32_t>(topk[k]), message_fp8(copy.data()),
               message_scales(copy.data(), s), outputs[k].data());
  }
  std::vector<uint16_t> combined(s.hidden);
  combine_token(HostWarp{}, s, in.topk_weights.data() + size_t{token} * s.top_k,
                [&](uint32_t k) -> const uint16_t* { return topk[k] < 0 ? nullptr : outputs[k].data(); },
                combined.data());
  return combined;
}

void check_combine(const MoeShape& s, const std::vector<RankInputs>& inputs, uint32_t rank,
                   const uint16_t* combined_x, CheckReport& report) {
  for (uint32_t t = 0; t < s.tokens; ++t) {
    ++report.checked;
    const std::vector<uint16_t> expected = reference_combined(s, inputs[rank], t);
    const uint16_t* got = combined_x + size_t{t} * s.hidden;
    for (uint32_t i = 0; i < s.hidden; ++i) {
      if (got[i] != expected[i]) {
        report.fail("rank " + std::to_string(rank) + " token " + std::to_string(t) + " element " +
                    std::to_string(i) + ": combined " + std::to_string(bf16_to_float(got[i])) +
                    ", expected " + std::to_string(bf16_to_float(expected[i])));
        break;
      }
    }
  }
}

}  // namespace dissect::moe
