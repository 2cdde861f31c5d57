// Gemini's embeddings as a client API: :embedContent / :batchEmbedContents read as an OpenAI
// embeddings body, answers rendered in Gemini's shapes, the batch identity body.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/gemini/gemini_provider.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

const EmbeddingsClient& Client() {
  static const GeminiProvider kGemini;
  return *kGemini.embeddings_client();
}

TEST(GeminiEmbeddingsClient, BatchAndSingleBecomeOpenAiBodies) {
  const EmbeddingsCall batch{"emb", false, ""};
  Result<std::string> body = Client().ToOpenAiBody(R"({"requests": [
    {"model": "models/emb", "content": {"parts": [{"text": "a"}, {"text": "b"}]},
     "outputDimensionality": 8, "taskType": "RETRIEVAL_QUERY"},
    {"content": {"parts": [{"text": "c"}]}, "outputDimensionality": 8}]})",
                                                   batch);
  ASSERT_TRUE(body.ok()) << body.error().param;
  EXPECT_EQ(json::parse(body.value()),
            json::parse(R"({"model": "emb", "input": ["a\nb", "c"], "dimensions": 8})"));
  const EmbeddingsCall single{"emb", true, ""};
  body = Client().ToOpenAiBody(R"({"content": {"parts": [{"text": "a"}]}})", single);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(json::parse(body.value()), json::parse(R"({"model": "emb", "input": ["a"]})"));
}

TEST(GeminiEmbeddingsClient, RefusalsNameTheField) {
  const EmbeddingsCall batch{"emb", false, ""};
  auto param = [&](std::string_view body, const EmbeddingsCall& call) {
    Result<std::string> out = Client().ToOpenAiBody(body, call);
    EXPECT_FALSE(out.ok()) << body;
    return out.ok() ? std::string("<accepted>") : out.error().param;
  };
  EXPECT_EQ(param("{", batch), "");
  EXPECT_EQ(param(R"({"requests": []})", batch), "requests");
  EXPECT_EQ(param(R"({"requests": [{"content": {"parts": [{"inlineData": {}}]}}]})", batch),
            "requests[0].content.parts[0]");
  EXPECT_EQ(
      param(R"({"requests": [{"content": {"parts": [{"text": "a"}]}, "outputDimensionality": 8},
                      {"content": {"parts": [{"text": "b"}]}}]})",
            batch),
      "requests[1].outputDimensionality");
  EXPECT_EQ(param(R"({"content": {"parts": [{"text": "a"}]}, "extra": 1})", {"emb", true, ""}),
            "extra");
}

TEST(GeminiEmbeddingsClient, AnswersAndIdentity) {
  Embeddings answer;
  answer.dimensions = 2;
  answer.values = {0.5f, 1.0f, -2.0f, 0.25f};
  EXPECT_EQ(json::parse(Client().Render(answer, {"emb", false, ""})),
            json::parse(R"({"embeddings": [{"values": [0.5, 1]}, {"values": [-2, 0.25]}]})"));
  answer.values.resize(2);
  EXPECT_EQ(json::parse(Client().Render(answer, {"emb", true, ""})),
            json::parse(R"({"embedding": {"values": [0.5, 1]}})"));
  EXPECT_TRUE(Client().ServesIdentity({"emb", false, ""}));
  EXPECT_FALSE(Client().ServesIdentity({"emb", true, ""}));
  Result<std::string> identity = Client().IdentityBody(
      R"({"requests": [{"model": "models/emb", "taskType": "X", "content": {}}]})", "up");
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(
      json::parse(identity.value()),
      json::parse(R"({"requests": [{"model": "models/up", "taskType": "X", "content": {}}]})"));
}

}  // namespace
}  // namespace turnpike::providers::gemini
