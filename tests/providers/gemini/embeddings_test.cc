// Gemini's batchEmbedContents: the request from an OpenAI embeddings request, the answer read
// back.
#include "providers/gemini/embeddings.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

#include "providers/gemini/gemini_provider.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

const GeminiProvider kGemini;

Result<std::string> Build(std::string_view client_body, std::string_view model) {
  Result<EmbeddingsRequest> request = ParseEmbeddingsRequest(client_body);
  EXPECT_TRUE(request.ok());
  if (!request.ok()) return request.error();
  return kGemini.embeddings()->BuildRequest(request.value(), model);
}

TEST(GeminiEmbeddings, EndpointIsBatchEmbedContents) {
  EXPECT_EQ(kGemini.Endpoint({"", "gemini-embedding-001", ""}).embed_path,
            "/v1beta/models/gemini-embedding-001:batchEmbedContents");
  EXPECT_EQ(kGemini.Endpoint({"", "models/gemini-embedding-001", "k"}).embed_path,
            "/v1beta/models/gemini-embedding-001:batchEmbedContents");
}

TEST(GeminiEmbeddings, BuildsOneRequestPerInput) {
  Result<std::string> one = Build(R"({"model":"public","input":"hello"})", "gemini-embedding-001");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(json::parse(one.value()),
            json::parse(R"({"requests":[{"model":"models/gemini-embedding-001",)"
                        R"("content":{"parts":[{"text":"hello"}]}}]})"));
  Result<std::string> many =
      Build(R"({"model":"public","input":["a","b"],"dimensions":256,"encoding_format":"base64"})",
            "models/gemini-embedding-001");
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(
      json::parse(many.value()),
      json::parse(R"({"requests":[)"
                  R"({"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]},)"
                  R"("outputDimensionality":256},)"
                  R"({"model":"models/gemini-embedding-001","content":{"parts":[{"text":"b"}]},)"
                  R"("outputDimensionality":256}]})"));
}

TEST(GeminiEmbeddings, RefusesWhatGeminiCannotExpress) {
  Result<std::string> tokens = Build(R"({"model":"public","input":[[1,2],[3]]})", "m");
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(tokens.error().param, "input");
  Result<std::string> user = Build(R"({"model":"public","input":"a","user":"u1"})", "m");
  ASSERT_FALSE(user.ok());
  EXPECT_EQ(user.error().param, "user");
}

TEST(GeminiEmbeddings, ReadsVectorsWithoutUsage) {
  Result<Embeddings> parsed = kGemini.embeddings()->ParseResponse(
      R"({"embeddings":[{"values":[0.5,-0.25]},{"values":[1,0]}]})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->count(), 2u);
  EXPECT_EQ(parsed->values, (std::vector<float>{0.5F, -0.25F, 1.0F, 0.0F}));
  EXPECT_EQ(parsed->prompt_tokens, -1);  // Gemini reports none: the gateway estimates
}

TEST(GeminiEmbeddings, UnreadableAnswersAndErrors) {
  for (std::string_view body : {R"([])", R"({})", R"({"embeddings":[{"v":[1]}]})",
                                R"({"embeddings":[{"values":[1,2]},{"values":[3]}]})"}) {
    Result<Embeddings> parsed = kGemini.embeddings()->ParseResponse(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().code, ErrorCode::kUpstreamBadResponse) << body;
  }
  Result<Embeddings> error = kGemini.embeddings()->ParseResponse(
      R"({"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}})");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error().message.find("API key not valid"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::providers::gemini
