#include "governance/default_prices.h"

#include <array>

namespace turnpike::governance {
namespace {

// USD per million tokens -> micro-USD per million tokens.
constexpr int64_t Usd(double usd) { return static_cast<int64_t>(usd * 1'000'000 + 0.5); }

constexpr ModelPrice Price(double input, double output, double cached_input,
                           int64_t max_output_tokens) {
  return ModelPrice{Usd(input), Usd(output), Usd(cached_input), max_output_tokens};
}

// Anthropic bills prompt-cache writes apart: 1.25x the input price (5-minute entries; 1-hour
// entries cost 2x and are not told apart in usage, so they are under-priced here).
constexpr ModelPrice AnthropicPrice(double input, double output, double cached_input,
                                    int64_t max_output_tokens) {
  return ModelPrice{Usd(input), Usd(output), Usd(cached_input), max_output_tokens,
                    Usd(input * 1.25)};
}

// Input, output, cached input (USD per million tokens), and the model's largest completion;
// cache writes as input unless the provider bills them apart (AnthropicPrice).
// Sources: openai.com/api/pricing, anthropic.com/pricing (cache reads), ai.google.dev/pricing
// (prompts up to 200k tokens), cohere.com/pricing, as of kDefaultPricesDate.
constexpr std::array kPrices = {
    DefaultPrice{"gpt-4o", Price(2.50, 10.00, 1.25, 16'384)},
    DefaultPrice{"gpt-4o-mini", Price(0.15, 0.60, 0.075, 16'384)},
    DefaultPrice{"gpt-4.1", Price(2.00, 8.00, 0.50, 32'768)},
    DefaultPrice{"gpt-4.1-mini", Price(0.40, 1.60, 0.10, 32'768)},
    DefaultPrice{"gpt-4.1-nano", Price(0.10, 0.40, 0.025, 32'768)},
    DefaultPrice{"o3", Price(2.00, 8.00, 0.50, 100'000)},
    DefaultPrice{"o4-mini", Price(1.10, 4.40, 0.275, 100'000)},
    DefaultPrice{"text-embedding-3-small", Price(0.02, 0.0, 0.02, 1)},
    DefaultPrice{"text-embedding-3-large", Price(0.13, 0.0, 0.13, 1)},
    DefaultPrice{"claude-opus-4-1", AnthropicPrice(15.00, 75.00, 1.50, 32'000)},
    DefaultPrice{"claude-sonnet-4-0", AnthropicPrice(3.00, 15.00, 0.30, 64'000)},
    DefaultPrice{"claude-3-7-sonnet-latest", AnthropicPrice(3.00, 15.00, 0.30, 64'000)},
    DefaultPrice{"claude-3-5-haiku-latest", AnthropicPrice(0.80, 4.00, 0.08, 8'192)},
    DefaultPrice{"gemini-2.5-pro", Price(1.25, 10.00, 0.31, 65'536)},
    DefaultPrice{"gemini-2.5-flash", Price(0.30, 2.50, 0.075, 65'536)},
    DefaultPrice{"gemini-2.0-flash", Price(0.10, 0.40, 0.025, 8'192)},
    DefaultPrice{"command-a-03-2025", Price(2.50, 10.00, 2.50, 8'000)},
    DefaultPrice{"command-r7b-12-2024", Price(0.0375, 0.15, 0.0375, 4'000)},
};

}  // namespace

std::span<const DefaultPrice> DefaultPrices() { return kPrices; }

}  // namespace turnpike::governance
