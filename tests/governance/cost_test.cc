#include "governance/cost.h"

#include <gtest/gtest.h>

namespace turnpike::governance {
namespace {

// $2.50 / $10.00 / $1.25 per million input / output / cached input tokens.
constexpr ModelPrice kPrice{2'500'000, 10'000'000, 1'250'000, 16'384};

TEST(CostTest, PromptTokensAreEstimatedAtThreeBytesRoundedUp) {
  EXPECT_EQ(EstimateMaxCost(0, 0, &kPrice).prompt_tokens, 0);
  EXPECT_EQ(EstimateMaxCost(1, 0, &kPrice).prompt_tokens, 1);
  EXPECT_EQ(EstimateMaxCost(3, 0, &kPrice).prompt_tokens, 1);
  EXPECT_EQ(EstimateMaxCost(4, 0, &kPrice).prompt_tokens, 2);
  EXPECT_EQ(EstimateMaxCost(3'000, 0, &kPrice).prompt_tokens, 1'000);
  EXPECT_EQ(EstimateMaxCost(-5, 0, &kPrice).prompt_tokens, 0);
}

TEST(CostTest, OutputIsMaxTokensCappedAtTheModelsMaximum) {
  EXPECT_EQ(EstimateMaxCost(0, 100, &kPrice).output_tokens, 100);
  EXPECT_EQ(EstimateMaxCost(0, std::nullopt, &kPrice).output_tokens, 16'384);
  EXPECT_EQ(EstimateMaxCost(0, 1'000'000, &kPrice).output_tokens, 16'384);
}

TEST(CostTest, EstimateIsTheMaximumCostRoundedUp) {
  // 3000 bytes -> 1000 prompt tokens: 2500 micro-USD; 500 output tokens: 5000 micro-USD.
  CostEstimate estimate = EstimateMaxCost(3'000, 500, &kPrice);
  EXPECT_EQ(estimate.micros, 7'500);
  EXPECT_EQ(estimate.total_tokens(), 1'500);
  EXPECT_FALSE(estimate.unpriced);
  // 1 prompt token at 2.5 micro-USD rounds up to 3.
  EXPECT_EQ(EstimateMaxCost(1, 0, &kPrice).micros, 3);
}

TEST(CostTest, UnknownPriceIsFlaggedNeverSilentlyFree) {
  CostEstimate estimate = EstimateMaxCost(300, std::nullopt, nullptr);
  EXPECT_TRUE(estimate.unpriced);
  EXPECT_EQ(estimate.micros, 0);
  EXPECT_EQ(estimate.prompt_tokens, 100);
  EXPECT_EQ(estimate.output_tokens, kUnpricedMaxOutputTokens);
  CostResult cost = Cost({1'000, 1'000, 0}, nullptr);
  EXPECT_TRUE(cost.unpriced);
  EXPECT_EQ(cost.micros, 0);
}

TEST(CostTest, CachedTokensArePricedOnceAtTheCachedPrice) {
  // 1000 prompt tokens of which 400 cached, 200 completion tokens:
  // 600 * 2.5 + 400 * 1.25 + 200 * 10 = 1500 + 500 + 2000 = 4000 micro-USD.
  CostResult cost = Cost({1'000, 200, 400}, &kPrice);
  EXPECT_FALSE(cost.unpriced);
  EXPECT_EQ(cost.micros, 4'000);
  EXPECT_EQ(Cost({1'000, 200, 0}, &kPrice).micros, 4'500);
}

TEST(CostTest, BadUsageIsClamped) {
  EXPECT_EQ(Cost({100, 0, 500}, &kPrice).micros, 125);  // cached > prompt: all 100 cached
  EXPECT_EQ(Cost({-1, -1, -1}, &kPrice).micros, 0);
  EXPECT_EQ(Cost({int64_t{1} << 62, 0, 0}, &kPrice).micros, kMaxCostMicros);
}

TEST(CostTest, EstimateCoversTheActualCostOfTheSameTokens) {
  CostEstimate estimate = EstimateMaxCost(3'001, 77, &kPrice);
  CostResult actual = Cost({estimate.prompt_tokens, estimate.output_tokens, 0}, &kPrice);
  EXPECT_EQ(actual.micros, estimate.micros);
}

// Anthropic-style: writes to the prompt cache cost 1.25x input, reads 0.1x.
constexpr ModelPrice kCachingPrice{3'000'000, 15'000'000, 300'000, 64'000, 3'750'000};

TEST(CostTest, CacheWritesArePricedOnceAtTheirOwnPrice) {
  // 1000 prompt tokens: 400 read from the cache, 500 written to it, 100 plain; 10 completion:
  // 100 * 3 + 400 * 0.3 + 500 * 3.75 + 10 * 15 = 300 + 120 + 1875 + 150 = 2445 micro-USD.
  EXPECT_EQ(Cost({1'000, 10, 400, 500}, &kCachingPrice).micros, 2'445);
  // Without a cache-write price, writes cost what input costs.
  EXPECT_EQ(Cost({1'000, 10, 400, 500}, &kPrice).micros, 1'500 + 500 + 100);
  // Writes are clamped to the prompt left after reads.
  EXPECT_EQ(Cost({1'000, 0, 400, 5'000}, &kCachingPrice).micros, 120 + 600 * 3.75);
}

TEST(CostTest, EstimateCoversAPromptWrittenToTheCache) {
  CostEstimate estimate = EstimateMaxCost(3'000, 100, &kCachingPrice);
  CostResult all_written = Cost(
      {estimate.prompt_tokens, estimate.output_tokens, 0, estimate.prompt_tokens}, &kCachingPrice);
  EXPECT_EQ(all_written.micros, estimate.micros);
}

// A reasoning model whose thinking is billed above its visible output: $2 / $8, reasoning $12.
constexpr ModelPrice kReasoningPrice{
    2'000'000, 8'000'000, 500'000, 100'000, ModelPrice::kSameAsInput, 12'000'000};

TEST(CostTest, ReasoningTokensArePricedOnceAtTheirOwnPrice) {
  // 1000 prompt tokens; 300 completion tokens of which 200 reasoning:
  // 1000 * 2 + 100 * 8 + 200 * 12 = 2000 + 800 + 2400 = 5200 micro-USD.
  EXPECT_EQ(Cost({1'000, 300, 0, 0, 200}, &kReasoningPrice).micros, 5'200);
  // Reasoning is clamped to the completion: 300 of 300 at 12.
  EXPECT_EQ(Cost({1'000, 300, 0, 0, 900}, &kReasoningPrice).micros, 2'000 + 3'600);
  EXPECT_EQ(Cost({1'000, 300, 0, 0, -5}, &kReasoningPrice).micros, 2'000 + 2'400);
}

TEST(CostTest, ReasoningDefaultsToTheOutputPrice) {
  EXPECT_EQ(kPrice.reasoning(), kPrice.output_micros_per_mtok);
  // 1000 * 2.5 + 300 * 10, whatever part of the completion was reasoning.
  EXPECT_EQ(Cost({1'000, 300, 0, 0, 200}, &kPrice).micros, 5'500);
  EXPECT_EQ(Cost({1'000, 300, 0, 0, 0}, &kPrice).micros, 5'500);
}

TEST(CostTest, EstimateCoversACompletionSpentReasoning) {
  CostEstimate estimate = EstimateMaxCost(3'000, 500, &kReasoningPrice);
  // 1000 * 2 + 500 * 12: the output reserved at the dearer reasoning price.
  EXPECT_EQ(estimate.micros, 8'000);
  CostResult all_reasoning =
      Cost({estimate.prompt_tokens, estimate.output_tokens, 0, 0, estimate.output_tokens},
           &kReasoningPrice);
  EXPECT_EQ(all_reasoning.micros, estimate.micros);
  CostResult none = Cost({estimate.prompt_tokens, estimate.output_tokens}, &kReasoningPrice);
  EXPECT_LT(none.micros, estimate.micros);
  // A cheaper reasoning price leaves the reservation at the output price.
  constexpr ModelPrice cheap{2'000'000, 8'000'000, 500'000, 100'000, ModelPrice::kSameAsInput,
                             1'000'000};
  EXPECT_EQ(EstimateMaxCost(3'000, 500, &cheap).micros, 2'000 + 4'000);
}

}  // namespace
}  // namespace turnpike::governance
