#include "providers/registry.h"

#include <gtest/gtest.h>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::providers {
namespace {

TEST(Registry, FindsEachDialectByItsConfiguredName) {
  Registry registry;
  EXPECT_TRUE(registry.Add(std::make_unique<openai::OpenAiProvider>()));
  EXPECT_TRUE(registry.Add(std::make_unique<anthropic::AnthropicProvider>()));
  ASSERT_NE(registry.Find("anthropic"), nullptr);
  EXPECT_EQ(registry.Find("anthropic")->name(), "anthropic");
  ASSERT_NE(registry.Find("openai"), nullptr);
  EXPECT_EQ(registry.Find("openai")->name(), "openai");
  EXPECT_EQ(registry.Find("gemini"), nullptr);
}

TEST(Registry, KeepsTheFirstOfTwoWithTheSameName) {
  Registry registry;
  EXPECT_TRUE(registry.Add(std::make_unique<openai::OpenAiProvider>()));
  const Provider* first = registry.Find("openai");
  EXPECT_FALSE(registry.Add(std::make_unique<openai::OpenAiProvider>()));
  EXPECT_EQ(registry.Find("openai"), first);
}

}  // namespace
}  // namespace turnpike::providers
