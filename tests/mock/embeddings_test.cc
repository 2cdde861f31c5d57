// The mock's embeddings: deterministic unit vectors per input, `dimensions` honoured, OpenAI's
// and Ollama's shapes, usage counted as for chat prompts.
#include "mock/embeddings.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <cmath>

#include "common/base64.h"

namespace turnpike::mock {
namespace {

namespace json = boost::json;

TEST(MockEmbedding, DeterministicUnitVectorsPerInput) {
  const std::vector<float> a = MockEmbedding("hello", 16);
  EXPECT_EQ(a, MockEmbedding("hello", 16));
  EXPECT_NE(a, MockEmbedding("hello!", 16));
  ASSERT_EQ(a.size(), 16u);
  double norm = 0;
  for (float v : a) norm += static_cast<double>(v) * v;
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_EQ(MockEmbedding("hello", 3).size(), 3u);
}

double CosineOf(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0;
  for (size_t i = 0; i < a.size(); ++i) dot += static_cast<double>(a[i]) * b[i];
  return dot;  // both are unit vectors
}

TEST(MockEmbedding, WordsMakeNearDuplicatesCloseAndOthersFar) {
  const auto a = WordsEmbedding("What is the capital of France?", 1536);
  EXPECT_NEAR(CosineOf(a, WordsEmbedding("what is the CAPITAL of france", 1536)), 1.0, 1e-5);
  EXPECT_NEAR(CosineOf(a, WordsEmbedding("What is the capital of France today?", 1536)),
              6 / std::sqrt(42.0), 1e-5);
  EXPECT_LT(std::abs(CosineOf(a, WordsEmbedding("Recommend a good pizza recipe", 1536))), 0.2);
  EXPECT_EQ(WordsEmbedding("?!", 4), std::vector<float>(4, 0.0F));
}

TEST(MockEmbed, WordsModeRendersWordsVectors) {
  Result<EmbedRequest> request = ParseOpenAiEmbed(R"({"model":"m","input":"a b","dimensions":8})");
  ASSERT_TRUE(request.ok());
  request->words = true;
  EXPECT_EQ(EmbeddingOf(request.value(), 0), WordsEmbedding("a b", 8));
}

TEST(MockEmbed, OpenAiFloatAndBase64CarryTheSameVector) {
  Result<EmbedRequest> floats =
      ParseOpenAiEmbed(R"({"model":"m","input":["x","y"],"dimensions":4})");
  ASSERT_TRUE(floats.ok());
  const json::value f = json::parse(RenderOpenAiEmbeddings(floats.value()));
  ASSERT_EQ(f.at("data").as_array().size(), 2u);
  EXPECT_EQ(f.at("data").at(1).at("index"), 1);
  const json::array& vector = f.at("data").at(0).at("embedding").as_array();
  ASSERT_EQ(vector.size(), 4u);
  const std::vector<float> expected = MockEmbedding("x", 4);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(static_cast<float>(vector[i].to_number<double>()), expected[i]);
  }
  EXPECT_EQ(f.at("usage").at("prompt_tokens"), floats->prompt_tokens);
  EXPECT_GT(floats->prompt_tokens, 0u);

  Result<EmbedRequest> b64 = ParseOpenAiEmbed(
      R"({"model":"m","input":["x","y"],"dimensions":4,"encoding_format":"base64"})");
  ASSERT_TRUE(b64.ok());
  const json::value b = json::parse(RenderOpenAiEmbeddings(b64.value()));
  std::string want;
  AppendFloat32Base64(want, expected.data(), expected.size());
  EXPECT_EQ(b.at("data").at(0).at("embedding").as_string(), want);
}

TEST(MockEmbed, TokenInputsAreSeededApartFromText) {
  Result<EmbedRequest> tokens = ParseOpenAiEmbed(R"({"model":"m","input":[[1,2],[3]]})");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->seeds.size(), 2u);
  EXPECT_EQ(tokens->seeds[0], "tokens:1,2,");
  Result<EmbedRequest> one = ParseOpenAiEmbed(R"({"model":"m","input":[1,2]})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->seeds, std::vector<std::string>{"tokens:1,2,"});
}

TEST(MockEmbed, OllamaShape) {
  Result<EmbedRequest> request =
      ParseOllamaEmbed(R"({"model":"nomic","input":["x"],"truncate":false,"dimensions":4})");
  ASSERT_TRUE(request.ok());
  const json::value answer = json::parse(RenderOllamaEmbed(request.value()));
  EXPECT_EQ(answer.at("model"), "nomic");
  EXPECT_EQ(answer.at("prompt_eval_count"), request->prompt_tokens);
  const json::array& vector = answer.at("embeddings").at(0).as_array();
  const std::vector<float> expected = MockEmbedding("x", 4);
  ASSERT_EQ(vector.size(), 4u);
  EXPECT_EQ(static_cast<float>(vector[3].to_number<double>()), expected[3]);
}

TEST(MockEmbed, BadBodiesNameTheField) {
  EXPECT_EQ(ParseOpenAiEmbed(R"({"input":"x"})").error().param, "model");
  EXPECT_EQ(ParseOpenAiEmbed(R"({"model":"m","input":[]})").error().param, "input");
  EXPECT_EQ(ParseOpenAiEmbed(R"({"model":"m","input":"x","dimensions":0})").error().param,
            "dimensions");
  EXPECT_EQ(ParseOpenAiEmbed(R"({"model":"m","input":"x","encoding_format":"hex"})").error().param,
            "encoding_format");
  EXPECT_EQ(ParseOllamaEmbed(R"({"model":"m","input":[1,2]})").error().param, "input");
}

}  // namespace
}  // namespace turnpike::mock
