// Ollama's /api/embed: the request from an OpenAI embeddings request, the answer read back.
#include "providers/ollama/embeddings.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "providers/ollama/ollama_provider.h"

namespace turnpike::providers::ollama {
namespace {

namespace json = boost::json;

const OllamaProvider kOllama;

Result<std::string> Build(std::string_view client_body) {
  Result<EmbeddingsRequest> request = ParseEmbeddingsRequest(client_body);
  EXPECT_TRUE(request.ok());
  if (!request.ok()) return request.error();
  return kOllama.embeddings()->BuildRequest(request.value(), "nomic-embed-text");
}

TEST(OllamaEmbeddings, EndpointIsApiEmbed) {
  EXPECT_EQ(kOllama.Endpoint({"", "m", ""}).embed_path, "/api/embed");
  EXPECT_EQ(kOllama.Endpoint({"/proxy", "m", ""}).embed_path, "/proxy/api/embed");
}

TEST(OllamaEmbeddings, BuildsTheRequest) {
  Result<std::string> one = Build(R"({"model":"public","input":"hello"})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(json::parse(one.value()),
            json::parse(R"({"model":"nomic-embed-text","input":"hello","truncate":false})"));
  Result<std::string> many =
      Build(R"({"model":"public","input":["a","b"],"dimensions":256,"encoding_format":"base64"})");
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(json::parse(many.value()),
            json::parse(R"({"model":"nomic-embed-text","input":["a","b"],"truncate":false,)"
                        R"("dimensions":256})"));
}

TEST(OllamaEmbeddings, RefusesWhatOllamaCannotExpress) {
  for (const char* body :
       {R"({"model":"m","input":[1,2]})", R"({"model":"m","input":[[1],[2]]})"}) {
    Result<std::string> built = Build(body);
    ASSERT_FALSE(built.ok()) << body;
    EXPECT_EQ(built.error().code, ErrorCode::kInvalidRequest);
    EXPECT_EQ(built.error().param, "input");
  }
  Result<std::string> user = Build(R"({"model":"m","input":"x","user":"u"})");
  ASSERT_FALSE(user.ok());
  EXPECT_EQ(user.error().param, "user");
  Result<std::string> unknown = Build(R"({"model":"m","input":"x","extra":1})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().param, "extra");
  EXPECT_TRUE(Build(R"({"model":"m","input":"x","user":null})").ok());
}

TEST(OllamaEmbeddings, ReadsTheAnswer) {
  Result<Embeddings> answer = kOllama.embeddings()->ParseResponse(
      R"({"model":"nomic-embed-text","embeddings":[[0.5,-1],[0.25,2]],)"
      R"("total_duration":14143917,"load_duration":1019500,"prompt_eval_count":8})");
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->model, "nomic-embed-text");
  EXPECT_EQ(answer->prompt_tokens, 8);
  EXPECT_EQ(answer->count(), 2u);
  EXPECT_EQ(answer->dimensions, 2u);
  EXPECT_EQ(answer->values, (std::vector<float>{0.5f, -1.0f, 0.25f, 2.0f}));
}

TEST(OllamaEmbeddings, MapsErrors) {
  Result<Embeddings> in_body = kOllama.embeddings()->ParseResponse(R"({"error":"model busy"})");
  ASSERT_FALSE(in_body.ok());
  EXPECT_EQ(in_body.error().code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(in_body.error().message, "model busy");
  EXPECT_FALSE(kOllama.embeddings()->ParseResponse(R"({"model":"m"})").ok());
  EXPECT_FALSE(kOllama.embeddings()->ParseResponse(R"({"embeddings":[[1],[1,2]]})").ok());
  const Error missing =
      kOllama.ParseError(404, R"({"error":"model \"x\" not found, try pulling it first"})");
  EXPECT_EQ(missing.code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.message, "model \"x\" not found, try pulling it first");
}

}  // namespace
}  // namespace turnpike::providers::ollama
