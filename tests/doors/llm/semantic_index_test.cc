// The LLM cache's semantic index (semantic_index.h): the threshold, namespaces kept apart, the
// bound per namespace, expiry and drops; and ReadQuestion (semantic_lookup.h), what a request's
// question and context are.
#include "doors/llm/semantic_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/vectors.h"
#include "doors/llm/semantic_lookup.h"

namespace turnpike::doors::llm {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kLater = kNow + 60'000;

// A unit vector in 4 dimensions at `angle` radians from the x axis, in the x-y plane.
std::vector<float> At(double angle) {
  return {static_cast<float>(std::cos(angle)), static_cast<float>(std::sin(angle)), 0, 0};
}

TEST(SemanticIndex, BestMatchAtOrAboveTheThreshold) {
  SemanticIndex index(100);
  index.Insert("ns", At(0), "e-x", kLater);
  index.Insert("ns", At(1.2), "e-far", kLater);
  // cos(0.2) = 0.980: above 0.97, below 0.99.
  std::optional<SemanticMatch> hit = index.Lookup("ns", At(0.2), 0.97F, kNow);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry_id, "e-x");
  EXPECT_NEAR(hit->similarity, std::cos(0.2), 1e-5);
  EXPECT_FALSE(index.Lookup("ns", At(0.2), 0.99F, kNow).has_value());
  // The nearer of two candidates wins.
  index.Insert("ns", At(0.15), "e-nearer", kLater);
  EXPECT_EQ(index.Lookup("ns", At(0.2), 0.9F, kNow)->entry_id, "e-nearer");
  // An equal vector: similarity 1, and a threshold of 1 is met.
  EXPECT_EQ(index.Lookup("ns", At(1.2), 1.0F - 1e-6F, kNow)->entry_id, "e-far");
}

TEST(SemanticIndex, NamespacesAreIsolated) {
  SemanticIndex index(100);
  index.Insert("tenant-a", At(0), "a", kLater);
  EXPECT_FALSE(index.Lookup("tenant-b", At(0), 0.5F, kNow).has_value());
  index.Insert("tenant-b", At(0), "b", kLater);
  EXPECT_EQ(index.Lookup("tenant-a", At(0), 0.5F, kNow)->entry_id, "a");
  EXPECT_EQ(index.Lookup("tenant-b", At(0), 0.5F, kNow)->entry_id, "b");
}

TEST(SemanticIndex, TheOldestIsEvictedPastTheBound) {
  SemanticIndex index(3);
  for (int i = 0; i < 5; ++i) index.Insert("ns", At(i * 0.5), "e" + std::to_string(i), kLater);
  EXPECT_EQ(index.Size("ns", kNow), 3u);
  EXPECT_FALSE(index.Lookup("ns", At(0), 0.99F, kNow).has_value()) << "e0 was evicted";
  EXPECT_FALSE(index.Lookup("ns", At(0.5), 0.99F, kNow).has_value()) << "e1 was evicted";
  EXPECT_EQ(index.Lookup("ns", At(1.0), 0.99F, kNow)->entry_id, "e2");
  EXPECT_EQ(index.Lookup("ns", At(2.0), 0.99F, kNow)->entry_id, "e4");
}

TEST(SemanticIndex, ExpiredAndDroppedEntriesNeverMatch) {
  SemanticIndex index(10);
  index.Insert("ns", At(0), "short", kNow + 10);
  index.Insert("ns", At(1), "long", kLater);
  EXPECT_EQ(index.Lookup("ns", At(0), 0.9F, kNow)->entry_id, "short");
  EXPECT_FALSE(index.Lookup("ns", At(0), 0.9F, kNow + 10).has_value()) << "expired";
  EXPECT_EQ(index.Size("ns", kNow + 10), 1u);
  index.Drop("ns", "long");
  EXPECT_FALSE(index.Lookup("ns", At(1), 0.9F, kNow).has_value()) << "dropped";
}

TEST(SemanticIndex, AnotherLengthNeverMatchesAndResetsTheNamespace) {
  SemanticIndex index(10);
  index.Insert("ns", At(0), "four", kLater);
  const std::vector<float> two = {1, 0};
  EXPECT_FALSE(index.Lookup("ns", two, 0.5F, kNow).has_value());
  index.Insert("ns", two, "two", kLater);
  EXPECT_EQ(index.Size("ns", kNow), 1u);
  EXPECT_EQ(index.Lookup("ns", two, 0.5F, kNow)->entry_id, "two");
}

TEST(Vectors, NormalizeAndCosine) {
  std::vector<float> v = {3, 4};
  ASSERT_TRUE(Normalize(v));
  EXPECT_FLOAT_EQ(v[0], 0.6F);
  EXPECT_FLOAT_EQ(v[1], 0.8F);
  std::vector<float> zero = {0, 0};
  EXPECT_FALSE(Normalize(zero));
  const float a[] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
  const float b[] = {2, 0, 0, 0, 0, 0, 0, 0, 4};
  EXPECT_FLOAT_EQ(Cosine(a, b, 9), 1.0F);
  EXPECT_FLOAT_EQ(Dot(a, b, 9), 10.0F);
  EXPECT_FLOAT_EQ(SquaredDistance(a, b, 9), 5.0F);
}

TEST(ReadQuestion, TheLastUserMessagesTextAndTheRestAsContext) {
  std::optional<SemanticQuestion> q = ReadQuestion(
      "openai",
      R"({"model":"m","messages":[{"role":"system","content":"Be brief."},)"
      R"({"role":"user","content":[{"type":"text","text":"What is"},{"type":"text","text":"X?"}]}]})");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->text, "What is\nX?");
  EXPECT_EQ(q->context, R"({"model":"m","messages":[{"role":"system","content":"Be brief."}]})");
  q = ReadQuestion("anthropic",
                   R"({"model":"c","max_tokens":9,"messages":[{"role":"user","content":"Hi"}]})");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->text, "Hi");
}

TEST(ReadQuestion, SkipsWhatSemanticModeCannotJudge) {
  // Another client dialect, the assistant's turn last, an image, a tool result, no text.
  EXPECT_FALSE(ReadQuestion("gemini", R"({"contents":[]})"));
  EXPECT_FALSE(ReadQuestion("openai", R"({"messages":[{"role":"assistant","content":"Hi"}]})"));
  EXPECT_FALSE(ReadQuestion(
      "openai", R"({"messages":[{"role":"user","content":[{"type":"text","text":"What?"},)"
                R"({"type":"image_url","image_url":{"url":"http://x"}}]}]})"));
  EXPECT_FALSE(ReadQuestion(
      "anthropic",
      R"({"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]})"));
  EXPECT_FALSE(ReadQuestion("openai", R"({"messages":[{"role":"user","content":""}]})"));
  EXPECT_FALSE(ReadQuestion("openai", R"({"messages":[]})"));
  EXPECT_FALSE(ReadQuestion("openai", "not json"));
}

}  // namespace
}  // namespace turnpike::doors::llm
