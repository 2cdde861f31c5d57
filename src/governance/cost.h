// Prices and the two cost computations of a request: the maximum it may cost (reserved at
// admission) and what it did cost (settled from the provider's usage).
//
// Units: money is integer micro-USD everywhere (1 USD = 1'000'000); prices are micro-USD per
// million tokens. Results round UP to the next micro-dollar, so a request never costs 0 because
// of rounding and a reservation is never smaller than the settled amount for the same tokens.
//
// Prompt estimate: ceil(prompt_bytes / 3) tokens. English averages ~4 bytes per token with the
// BPE tokenizers in use (tiktoken o200k, Llama 3), code and other languages fewer; 3 makes
// the estimate an over-estimate for nearly all text without a tokenizer on the hot path. The
// over-reservation is released at settlement. The body's JSON syntax counts as prompt bytes,
// which errs the same (safe) way.
//
// Unpriced models: no price entry means cost 0 with `unpriced` set; callers must log and count
// it, never treat it as free silently.
//
// Thread safety: pure functions. Errors: none; inputs are clamped (negative counts are 0,
// cached tokens are at most the prompt tokens); results saturate at kMaxCostMicros.
#pragma once

#include <cstdint>
#include <optional>

namespace turnpike::governance {

inline constexpr int64_t kMicrosPerUsd = 1'000'000;
inline constexpr int64_t kTokensPerPriceUnit = 1'000'000;  // prices are per million tokens
inline constexpr int64_t kPromptBytesPerToken = 3;
// Output budget of a request that names no max_tokens on a model without a price entry (which
// would carry the model's max output). Used only for the TPM reservation: the cost is 0 anyway.
inline constexpr int64_t kUnpricedMaxOutputTokens = 4096;
// Any larger cost saturates (2^47 micro-USD, ~140 million USD; see BudgetCounter's packing).
inline constexpr int64_t kMaxCostMicros = (int64_t{1} << 47) - 1;

struct ModelPrice {
  int64_t input_micros_per_mtok = 0;
  int64_t output_micros_per_mtok = 0;
  int64_t cached_input_micros_per_mtok = 0;
  int64_t max_output_tokens = 0;  // the model's largest completion; > 0
  // Prompt tokens written to the provider's prompt cache (Anthropic's cache_creation, 1.25x the
  // input price for 5-minute entries). kSameAsInput: priced as input, for providers that do not
  // bill cache writes apart.
  int64_t cache_write_micros_per_mtok = kSameAsInput;
  // Completion tokens a reasoning model spent thinking (OpenAI's reasoning_tokens, Gemini's
  // thoughts). kSameAsOutput: priced as output, as every provider bills them today.
  int64_t reasoning_micros_per_mtok = kSameAsOutput;

  static constexpr int64_t kSameAsInput = -1;
  static constexpr int64_t kSameAsOutput = -1;
  int64_t cache_write() const {
    return cache_write_micros_per_mtok < 0 ? input_micros_per_mtok : cache_write_micros_per_mtok;
  }
  int64_t reasoning() const {
    return reasoning_micros_per_mtok < 0 ? output_micros_per_mtok : reasoning_micros_per_mtok;
  }
};

struct CostEstimate {
  int64_t micros = 0;         // upper bound of the request's cost; 0 if unpriced
  int64_t prompt_tokens = 0;  // estimated
  int64_t output_tokens = 0;  // max_tokens, or the model's max output
  bool unpriced = false;

  int64_t total_tokens() const { return prompt_tokens + output_tokens; }
};

// `max_tokens`: the request's completion limit (max_tokens / max_completion_tokens /
// max_output_tokens), nullopt if absent. It is capped at the model's max output. `price` is
// null for an unknown model. Prompt and output tokens are reserved at the dearer of their two
// prices (input / cache write, output / reasoning): the settlement never exceeds it.
CostEstimate EstimateMaxCost(int64_t prompt_bytes, std::optional<int64_t> max_tokens,
                             const ModelPrice* price);

// What the provider reported; `cached_tokens` is the part of `prompt_tokens` read from its
// prompt cache (OpenAI prompt_tokens_details.cached_tokens; for Anthropic, the adapter adds
// cache reads into both fields), `cache_creation_tokens` the part written to it (Anthropic's
// cache_creation_input_tokens, also counted in prompt_tokens); `reasoning_tokens` the part of
// `completion_tokens` a reasoning model spent thinking.
struct TokenUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t cache_creation_tokens = 0;
  int64_t reasoning_tokens = 0;
};

struct CostResult {
  int64_t micros = 0;
  bool unpriced = false;
};

// Prompt tokens read from the cache at the cached price, those written to it at the cache-write
// price, the rest at the input price (each token is priced once; reads and writes are clamped
// to the prompt), completion tokens at the output price except the reasoning part, at the
// reasoning price (clamped to the completion).
CostResult Cost(const TokenUsage& usage, const ModelPrice* price);

}  // namespace turnpike::governance
