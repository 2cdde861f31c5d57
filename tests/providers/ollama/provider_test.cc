// The Ollama provider's endpoint, framing, whole answers and error statuses.
#include <gtest/gtest.h>

#include "providers/ollama/ollama_provider.h"

namespace turnpike::providers::ollama {
namespace {

const OllamaProvider kOllama;

TEST(OllamaProvider, EndpointIsApiChatWithBearerOnlyWhenAKeyIsSet) {
  UpstreamEndpoint keyless = kOllama.Endpoint({"", "llama3.2", ""});
  EXPECT_EQ(keyless.path, "/api/chat");
  EXPECT_EQ(keyless.stream_path, "/api/chat");
  EXPECT_EQ(keyless.authorization, "");
  EXPECT_EQ(keyless.extra_headers, "");
  UpstreamEndpoint proxied = kOllama.Endpoint({"/ollama", "llama3.2", "secret"});
  EXPECT_EQ(proxied.path, "/ollama/api/chat");
  EXPECT_EQ(proxied.authorization, "Bearer secret");
}

TEST(OllamaProvider, StreamsAreNdjson) {
  EXPECT_EQ(kOllama.stream_framing(), StreamFraming::kNdjson);
  EXPECT_EQ(StreamContentType(kOllama.stream_framing()), "application/x-ndjson");
}

TEST(OllamaProvider, ErrorStatusesMapToCodes) {
  struct Case {
    int status;
    ErrorCode code;
  };
  for (const Case& c :
       {Case{400, ErrorCode::kInvalidRequest}, Case{404, ErrorCode::kNotFound},
        Case{429, ErrorCode::kRateLimited}, Case{500, ErrorCode::kUpstreamBadResponse},
        Case{503, ErrorCode::kUnavailable}}) {
    const Error error = kOllama.ParseError(c.status, R"({"error":"boom"})");
    EXPECT_EQ(error.code, c.code) << c.status;
    EXPECT_EQ(error.message, "boom");
  }
  const Error not_json = kOllama.ParseError(500, "Internal Server Error");
  EXPECT_EQ(not_json.code, ErrorCode::kUpstreamBadResponse);
  EXPECT_NE(not_json.message.find("500"), std::string::npos);
}

TEST(OllamaProvider, AWholeAnswerMustBeComplete) {
  EXPECT_FALSE(
      kOllama.ParseResponse(R"({"model":"m","message":{"content":"x"},"done":false})").ok());
  EXPECT_FALSE(kOllama.ParseResponse("[]").ok());
  Result<Response> error = kOllama.ParseResponse(R"({"error":"runner died"})");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(error.error().message, "runner died");
}

TEST(OllamaProvider, IsNotAClientDialect) {
  Result<boost::json::object> parsed = kOllama.ParseRequest("{}");
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(kOllama.NewEncoder(EncoderOptions{}), nullptr);
  ErrorReply reply = kOllama.RenderError(Error{ErrorCode::kNotFound, "model \"x\" not found", ""});
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.body, R"({"error":"model \"x\" not found"})");
}

}  // namespace
}  // namespace turnpike::providers::ollama
