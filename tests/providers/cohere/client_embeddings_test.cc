// Cohere's v2 embed as a client API: read as an OpenAI embeddings body (what cannot be carried
// kept under its own name for the upstream's check), answers rendered in Cohere's shape.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/cohere/cohere_provider.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

const EmbeddingsClient& Client() {
  static const CohereProvider kCohere;
  return *kCohere.embeddings_client();
}

TEST(CohereEmbeddingsClient, TextsBecomeAnOpenAiBody) {
  Result<std::string> body = Client().ToOpenAiBody(
      R"({"model": "embed", "texts": ["a", "b"], "input_type": "search_query",
          "embedding_types": ["float"], "truncate": "NONE", "output_dimension": 256})",
      {});
  ASSERT_TRUE(body.ok()) << body.error().param;
  EXPECT_EQ(json::parse(body.value()),
            json::parse(R"({"model": "embed", "input": ["a", "b"], "dimensions": 256})"));
}

TEST(CohereEmbeddingsClient, WhatOthersCannotGiveIsKeptByName) {
  Result<std::string> body = Client().ToOpenAiBody(
      R"({"model": "embed", "texts": ["a"], "input_type": "clustering",
          "embedding_types": ["int8"], "truncate": "END", "max_tokens": 5})",
      {});
  ASSERT_TRUE(body.ok());
  const json::value parsed = json::parse(body.value());
  EXPECT_TRUE(parsed.as_object().contains("embedding_types"));
  EXPECT_TRUE(parsed.as_object().contains("truncate"));
  EXPECT_TRUE(parsed.as_object().contains("max_tokens"));
  EXPECT_EQ(Client().ToOpenAiBody(R"({"model": "embed", "texts": ["a"]})", {}).error().param,
            "input_type");
  EXPECT_EQ(Client()
                .ToOpenAiBody(R"({"model": "embed", "texts": ["a"], "input_type": "x"})", {})
                .error()
                .param,
            "input_type");
  EXPECT_EQ(
      Client().ToOpenAiBody(R"({"model": "embed", "input_type": "clustering"})", {}).error().param,
      "texts");
}

TEST(CohereEmbeddingsClient, Answer) {
  Embeddings answer;
  answer.dimensions = 2;
  answer.values = {0.5f, 1.0f};
  answer.prompt_tokens = 7;
  EXPECT_EQ(json::parse(Client().Render(answer, {"", false, "req-1"})), json::parse(R"({
    "id": "req-1", "embeddings": {"float": [[0.5, 1]]}, "texts": [],
    "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": 7}},
    "response_type": "embeddings_by_type"})"));
}

}  // namespace
}  // namespace turnpike::providers::cohere
