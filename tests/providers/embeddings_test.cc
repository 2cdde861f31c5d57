// The embeddings request every dialect starts from, and the answer in OpenAI's shape.
#include "providers/embeddings.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;

TEST(ParseEmbeddingsRequest, ReadsTheFourInputShapes) {
  Result<EmbeddingsRequest> text = ParseEmbeddingsRequest(R"({"model":"m","input":"hi"})");
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->model, "m");
  EXPECT_EQ(text->kind, EmbeddingsInput::kText);
  EXPECT_EQ(text->input_count, 1u);
  EXPECT_EQ(text->input_tokens, 0);
  EXPECT_EQ(text->format, EncodingFormat::kFloat);
  EXPECT_FALSE(text->dimensions);

  Result<EmbeddingsRequest> texts = ParseEmbeddingsRequest(
      R"({"model":"m","input":["a","b","c"],"encoding_format":"base64","dimensions":8})");
  ASSERT_TRUE(texts.ok());
  EXPECT_EQ(texts->kind, EmbeddingsInput::kTexts);
  EXPECT_EQ(texts->input_count, 3u);
  EXPECT_EQ(texts->format, EncodingFormat::kBase64);
  EXPECT_EQ(texts->dimensions, 8);

  Result<EmbeddingsRequest> tokens = ParseEmbeddingsRequest(R"({"model":"m","input":[1,2,3]})");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(tokens->kind, EmbeddingsInput::kTokens);
  EXPECT_EQ(tokens->input_count, 1u);
  EXPECT_EQ(tokens->input_tokens, 3);

  Result<EmbeddingsRequest> arrays = ParseEmbeddingsRequest(
      R"({"model":"m","input":[[1,2],[3]],"user":"u","encoding_format":null})");
  ASSERT_TRUE(arrays.ok());
  EXPECT_EQ(arrays->kind, EmbeddingsInput::kTokenArrays);
  EXPECT_EQ(arrays->input_count, 2u);
  EXPECT_EQ(arrays->input_tokens, 3);
  EXPECT_EQ(arrays->format, EncodingFormat::kFloat);
}

TEST(ParseEmbeddingsRequest, BadInputNamesTheParam) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case cases[] = {
      {R"(not json)", ""},
      {R"([1])", ""},
      {R"({"input":"x"})", "model"},
      {R"({"model":7,"input":"x"})", "model"},
      {R"({"model":"","input":"x"})", "model"},
      {R"({"model":"m"})", "input"},
      {R"({"model":"m","input":null})", "input"},
      {R"({"model":"m","input":""})", "input"},
      {R"({"model":"m","input":[]})", "input"},
      {R"({"model":"m","input":{"a":1}})", "input"},
      {R"({"model":"m","input":["a",2]})", "input[1]"},
      {R"({"model":"m","input":["a",""]})", "input[1]"},
      {R"({"model":"m","input":[1,-2]})", "input[1]"},
      {R"({"model":"m","input":[1,2.5]})", "input[1]"},
      {R"({"model":"m","input":[[1],[]]})", "input[1]"},
      {R"({"model":"m","input":[[1],[2,"x"]]})", "input[1][1]"},
      {R"({"model":"m","input":[[1],"x"]})", "input[1]"},
      {R"({"model":"m","input":"x","encoding_format":"binary"})", "encoding_format"},
      {R"({"model":"m","input":"x","dimensions":0})", "dimensions"},
      {R"({"model":"m","input":"x","dimensions":"8"})", "dimensions"},
      {R"({"model":"m","input":"x","user":1})", "user"},
  };
  for (const Case& c : cases) {
    Result<EmbeddingsRequest> parsed = ParseEmbeddingsRequest(c.body);
    ASSERT_FALSE(parsed.ok()) << c.body;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidRequest) << c.body;
    EXPECT_EQ(parsed.error().param, c.param) << c.body;
  }
}

TEST(ParseEmbeddingsRequest, RefusesMoreThan2048Inputs) {
  std::string many = R"({"model":"m","input":[)";
  for (size_t i = 0; i <= kMaxEmbeddingsInputs; ++i) many += i == 0 ? "\"a\"" : ",\"a\"";
  many += "]}";
  Result<EmbeddingsRequest> parsed = ParseEmbeddingsRequest(many);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().param, "input");
}

Embeddings TwoVectors() {
  Embeddings e;
  e.model = "m\"x";
  e.prompt_tokens = 5;
  EXPECT_TRUE(AppendVector(e, json::parse("[1, -2]")).ok());
  EXPECT_TRUE(AppendVector(e, json::parse("[0.5, 0.25]")).ok());
  return e;
}

TEST(RenderEmbeddings, FloatsInOpenAiShape) {
  EXPECT_EQ(RenderEmbeddings(TwoVectors(), EncodingFormat::kFloat),
            R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,-2]},)"
            R"({"object":"embedding","index":1,"embedding":[0.5,0.25]}],"model":"m\"x",)"
            R"("usage":{"prompt_tokens":5,"total_tokens":5}})");
}

TEST(RenderEmbeddings, Base64OfFloat32LittleEndian) {
  Embeddings e = TwoVectors();
  e.prompt_tokens = -1;  // not reported: rendered as 0
  EXPECT_EQ(
      RenderEmbeddings(e, EncodingFormat::kBase64),
      R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":"AACAPwAAAMA="},)"
      R"({"object":"embedding","index":1,"embedding":"AAAAPwAAgD4="}],"model":"m\"x",)"
      R"("usage":{"prompt_tokens":0,"total_tokens":0}})");
}

TEST(RenderEmbeddings, FloatsRoundTripAsFloat32) {
  Embeddings e;
  ASSERT_TRUE(AppendVector(e, json::parse("[0.1, 0.333333333333]")).ok());
  const std::string out = RenderEmbeddings(e, EncodingFormat::kFloat);
  EXPECT_NE(out.find("[0.1,0.33333334]"), std::string::npos) << out;
}

TEST(AppendVector, RefusesWhatIsNotAVector) {
  Embeddings e;
  EXPECT_EQ(AppendVector(e, json::parse("[]")).error().code, ErrorCode::kUpstreamBadResponse);
  EXPECT_FALSE(AppendVector(e, json::parse(R"("AACAPw==")")).ok());
  EXPECT_FALSE(AppendVector(e, json::parse(R"([1,"x"])")).ok());
  EXPECT_FALSE(AppendVector(e, json::parse("[1e300]")).ok());
  ASSERT_TRUE(AppendVector(e, json::parse("[1,2,3]")).ok());
  EXPECT_FALSE(AppendVector(e, json::parse("[1,2]")).ok());  // another length
  EXPECT_EQ(e.count(), 1u);
}

TEST(EmbeddingsApi, OnlyDialectsWithAnEmbeddingsApiOfferOne) {
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_NE(openai.embeddings(), nullptr);
  EXPECT_EQ(openai.Endpoint({"/v1", "m", "k"}).embed_path, "/v1/embeddings");
  EXPECT_EQ(anthropic.embeddings(), nullptr);
  EXPECT_EQ(anthropic.Endpoint({"/v1", "m", "k"}).embed_path, "");
}

TEST(OpenAiEmbeddings, ForwardsTheBodyWithTheModelReplaced) {
  const openai::OpenAiProvider openai;
  Result<EmbeddingsRequest> request = ParseEmbeddingsRequest(
      R"({"model":"public","input":[[1,2]],"encoding_format":"base64","dimensions":4,"x":true})");
  ASSERT_TRUE(request.ok());
  Result<std::string> body = openai.embeddings()->BuildRequest(request.value(), "upstream");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(json::parse(body.value()),
            json::parse(R"({"model":"upstream","input":[[1,2]],"encoding_format":"base64",)"
                        R"("dimensions":4,"x":true})"));
}

TEST(OpenAiEmbeddings, ParsesFloatAnswersAndErrors) {
  const openai::OpenAiProvider openai;
  Result<Embeddings> ok = openai.embeddings()->ParseResponse(
      R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,1]}],)"
      R"("model":"text-embedding-3-small","usage":{"prompt_tokens":3,"total_tokens":3}})");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->model, "text-embedding-3-small");
  EXPECT_EQ(ok->prompt_tokens, 3);
  EXPECT_EQ(ok->values, (std::vector<float>{0.5f, 1.0f}));
  Result<Embeddings> error =
      openai.embeddings()->ParseResponse(R"({"error":{"message":"nope","type":"x"}})");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().message, "nope");
  EXPECT_FALSE(
      openai.embeddings()->ParseResponse(R"({"data":[{"index":1,"embedding":[1]}]})").ok());
}

}  // namespace
}  // namespace turnpike::providers
