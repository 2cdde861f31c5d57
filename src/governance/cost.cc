#include "governance/cost.h"

#include <algorithm>

namespace turnpike::governance {
namespace {

using Wide = __int128;  // token counts times prices can pass 2^63 for absurd inputs

int64_t CeilDiv(int64_t numerator, int64_t denominator) {
  return numerator / denominator + (numerator % denominator != 0 ? 1 : 0);
}

// ceil(sum / 1M) saturated at kMaxCostMicros.
int64_t ToMicros(Wide sum_micro_tokens) {
  Wide micros = (sum_micro_tokens + kTokensPerPriceUnit - 1) / kTokensPerPriceUnit;
  return static_cast<int64_t>(std::min<Wide>(micros, kMaxCostMicros));
}

}  // namespace

CostEstimate EstimateMaxCost(int64_t prompt_bytes, std::optional<int64_t> max_tokens,
                             const ModelPrice* price) {
  CostEstimate estimate;
  estimate.prompt_tokens = CeilDiv(std::max<int64_t>(prompt_bytes, 0), kPromptBytesPerToken);
  int64_t model_max = price != nullptr ? price->max_output_tokens : kUnpricedMaxOutputTokens;
  estimate.output_tokens = max_tokens ? std::clamp<int64_t>(*max_tokens, 0, model_max) : model_max;
  if (price == nullptr) {
    estimate.unpriced = true;
    return estimate;
  }
  // The prompt at the dearer of the input and cache-write prices: a prompt written to the cache
  // must not settle above what was reserved.
  // Likewise the output at the dearer of the output and reasoning prices.
  const int64_t prompt_price = std::max(price->input_micros_per_mtok, price->cache_write());
  const int64_t output_price = std::max(price->output_micros_per_mtok, price->reasoning());
  Wide sum =
      Wide{estimate.prompt_tokens} * prompt_price + Wide{estimate.output_tokens} * output_price;
  estimate.micros = ToMicros(sum);
  return estimate;
}

CostResult Cost(const TokenUsage& usage, const ModelPrice* price) {
  if (price == nullptr) return CostResult{0, true};
  int64_t prompt = std::max<int64_t>(usage.prompt_tokens, 0);
  int64_t cached = std::clamp<int64_t>(usage.cached_tokens, 0, prompt);
  int64_t written = std::clamp<int64_t>(usage.cache_creation_tokens, 0, prompt - cached);
  int64_t completion = std::max<int64_t>(usage.completion_tokens, 0);
  int64_t reasoning = std::clamp<int64_t>(usage.reasoning_tokens, 0, completion);
  Wide sum = Wide{prompt - cached - written} * price->input_micros_per_mtok +
             Wide{cached} * price->cached_input_micros_per_mtok +
             Wide{written} * price->cache_write() +
             Wide{completion - reasoning} * price->output_micros_per_mtok +
             Wide{reasoning} * price->reasoning();
  return CostResult{ToMicros(sum), false};
}

}  // namespace turnpike::governance
