// Cohere's /v2/embed: the request from an OpenAI embeddings request, the answer read back.
#include "providers/cohere/embeddings.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

#include "providers/cohere/cohere_provider.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

const CohereProvider kCohere;

Result<std::string> Build(std::string_view client_body) {
  Result<EmbeddingsRequest> request = ParseEmbeddingsRequest(client_body);
  EXPECT_TRUE(request.ok());
  if (!request.ok()) return request.error();
  return kCohere.embeddings()->BuildRequest(request.value(), "embed-v4.0");
}

TEST(CohereEmbeddings, EndpointIsV2Embed) {
  EXPECT_EQ(kCohere.Endpoint({"", "m", ""}).embed_path, "/v2/embed");
  EXPECT_EQ(kCohere.Endpoint({"/proxy", "m", "k"}).embed_path, "/proxy/v2/embed");
}

TEST(CohereEmbeddings, BuildsTheRequest) {
  Result<std::string> one = Build(R"({"model":"public","input":"hello"})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(json::parse(one.value()),
            json::parse(R"({"model":"embed-v4.0","texts":["hello"],)"
                        R"("input_type":"search_document","embedding_types":["float"],)"
                        R"("truncate":"NONE"})"));
  Result<std::string> many =
      Build(R"({"model":"public","input":["a","b"],"dimensions":256,"encoding_format":"base64"})");
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(json::parse(many.value()),
            json::parse(R"({"model":"embed-v4.0","texts":["a","b"],)"
                        R"("input_type":"search_document","embedding_types":["float"],)"
                        R"("truncate":"NONE","output_dimension":256})"));
}

TEST(CohereEmbeddings, RefusesWhatCohereCannotExpress) {
  Result<std::string> tokens = Build(R"({"model":"public","input":[1,2,3]})");
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(tokens.error().param, "input");
  std::string body = R"({"model":"public","input":[)";
  for (size_t i = 0; i <= kMaxCohereTexts; ++i) body += (i ? ",\"x\"" : "\"x\"");
  body += "]}";
  Result<std::string> too_many = Build(body);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().param, "input");
  Result<std::string> user = Build(R"({"model":"public","input":"a","user":"u1"})");
  ASSERT_FALSE(user.ok());
  EXPECT_EQ(user.error().param, "user");
}

TEST(CohereEmbeddings, ReadsVectorsAndBilledTokens) {
  Result<Embeddings> parsed = kCohere.embeddings()->ParseResponse(
      R"({"id":"e1","embeddings":{"float":[[0.5,-0.25],[1,0]]},"texts":["a","b"],)"
      R"("meta":{"api_version":{"version":"2"},"billed_units":{"input_tokens":7}},)"
      R"("response_type":"embeddings_by_type"})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->count(), 2u);
  EXPECT_EQ(parsed->dimensions, 2u);
  EXPECT_EQ(parsed->values, (std::vector<float>{0.5F, -0.25F, 1.0F, 0.0F}));
  EXPECT_EQ(parsed->prompt_tokens, 7);
}

TEST(CohereEmbeddings, UnreadableAnswersAreBadResponses) {
  for (std::string_view body : {R"([])", R"({"id":"e1"})", R"({"embeddings":{"int8":[[1]]}})",
                                R"({"embeddings":{"float":[[1,2],[3]]}})"}) {
    Result<Embeddings> parsed = kCohere.embeddings()->ParseResponse(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().code, ErrorCode::kUpstreamBadResponse) << body;
  }
  Result<Embeddings> error =
      kCohere.embeddings()->ParseResponse(R"({"message":"invalid api token"})");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.error().message.find("invalid api token"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::providers::cohere
