// Gemini's error envelope both ways, the endpoint, and whole answers that are errors.
#include "providers/gemini/wire.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/gemini/gemini_provider.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

std::string GoogleError(int code, std::string_view status, std::string_view extra = "") {
  return R"({"error":{"code":)" + std::to_string(code) + R"(,"message":"m","status":")" +
         std::string(status) + "\"" + std::string(extra) + "}}";
}

TEST(GeminiErrors, StatusNamesMapToCodes) {
  const struct {
    int http;
    std::string_view status;
    ErrorCode code;
  } cases[] = {
      {400, "INVALID_ARGUMENT", ErrorCode::kInvalidRequest},
      {400, "FAILED_PRECONDITION", ErrorCode::kInvalidRequest},
      {401, "UNAUTHENTICATED", ErrorCode::kUnauthorized},
      {403, "PERMISSION_DENIED", ErrorCode::kForbidden},
      {404, "NOT_FOUND", ErrorCode::kNotFound},
      {429, "RESOURCE_EXHAUSTED", ErrorCode::kRateLimited},
      {500, "INTERNAL", ErrorCode::kUpstreamBadResponse},
      {503, "UNAVAILABLE", ErrorCode::kUnavailable},
      {504, "DEADLINE_EXCEEDED", ErrorCode::kUpstreamTimeout},
      {429, "SOMETHING_NEW", ErrorCode::kRateLimited},  // unknown name: the HTTP status decides
  };
  for (const auto& c : cases) {
    const Error error = ParseErrorBody(c.http, GoogleError(c.http, c.status));
    EXPECT_EQ(error.code, c.code) << c.status;
    EXPECT_EQ(error.message, "m") << c.status;
  }
}

TEST(GeminiErrors, AnInvalidKeyIsUnauthorized) {
  const Error error = ParseErrorBody(
      400, GoogleError(400, "INVALID_ARGUMENT",
                       R"(,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",)"
                       R"("reason":"API_KEY_INVALID","domain":"googleapis.com"}])"));
  EXPECT_EQ(error.code, ErrorCode::kUnauthorized);
}

TEST(GeminiErrors, ABodyThatIsNotAnErrorObjectKeepsTheStatus) {
  EXPECT_EQ(ParseErrorBody(503, "<html>busy</html>").code, ErrorCode::kUnavailable);
  EXPECT_EQ(ParseErrorBody(500, "").code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(ParseErrorBody(404, R"({"error":"gone"})").code, ErrorCode::kNotFound);
}

TEST(GeminiErrors, RenderedInGeminisOwnEnvelope) {
  const ErrorReply reply =
      RenderErrorReply(Error{ErrorCode::kRateLimited, "Slow \"down\"", "contents"});
  EXPECT_EQ(reply.status, 429);
  EXPECT_EQ(json::parse(reply.body), json::parse(R"({"error":{"code":429,
      "message":"contents: Slow \"down\"","status":"RESOURCE_EXHAUSTED"}})"));
}

TEST(GeminiProvider, EndpointPutsTheModelInThePathAndTheKeyInAHeader) {
  const GeminiProvider provider;
  const UpstreamEndpoint endpoint = provider.Endpoint({"/proxy", "gemini-2.5-flash", "k-123"});
  EXPECT_EQ(endpoint.path, "/proxy/v1beta/models/gemini-2.5-flash:generateContent");
  EXPECT_EQ(endpoint.stream_path,
            "/proxy/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  EXPECT_EQ(endpoint.authorization, "");
  EXPECT_EQ(endpoint.extra_headers, "x-goog-api-key: k-123");
  const UpstreamEndpoint keyless = provider.Endpoint({"", "models/gemini-2.0-flash", ""});
  EXPECT_EQ(keyless.path, "/v1beta/models/gemini-2.0-flash:generateContent");
  EXPECT_EQ(keyless.extra_headers, "");
}

TEST(GeminiProvider, AnErrorObjectInA2xxBodyIsAnError) {
  const GeminiProvider provider;
  Result<Response> parsed = provider.ParseResponse(GoogleError(429, "RESOURCE_EXHAUSTED"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kRateLimited);
  Result<Response> unknown = provider.ParseResponse(R"({"error":{"message":"odd"}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(unknown.error().message, "odd");
}

TEST(GeminiProvider, WholeAnswersThatCannotBeExpressedAreBadResponses) {
  const GeminiProvider provider;
  for (std::string_view body : {
           std::string_view("[]"),
           std::string_view(R"({"candidates":[]})"),
           std::string_view(R"({"candidates":[{"index":0},{"index":1}]})"),
           std::string_view(R"({"candidates":[{"content":{"parts":[
               {"inlineData":{"mimeType":"image/png","data":"AA=="}}]}}]})"),
       }) {
    Result<Response> parsed = provider.ParseResponse(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().code, ErrorCode::kUpstreamBadResponse) << body;
  }
}

TEST(GeminiProvider, WholeFunctionCallsGetIdsAndTheToolCallsFinish) {
  const GeminiProvider provider;
  Result<Response> parsed = provider.ParseResponse(R"({"candidates":[{"content":{"parts":[
      {"text":"plan","thought":true},{"functionCall":{"name":"f","args":{"a":1}}},
      {"functionCall":{"id":"x9","name":"g"}}],"role":"model"},"finishReason":"STOP"}],
      "responseId":"R","modelVersion":"gemini-2.5-flash"})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->text, "");
  ASSERT_EQ(parsed->tool_calls.size(), 2u);
  EXPECT_EQ(parsed->tool_calls[0].id, "call_R_0");
  EXPECT_EQ(json::parse(parsed->tool_calls[0].arguments), json::parse(R"({"a":1})"));
  EXPECT_EQ(parsed->tool_calls[1].id, "x9");
  EXPECT_EQ(parsed->tool_calls[1].arguments, "{}");
  EXPECT_EQ(parsed->finish, FinishReason::kToolCalls);
  EXPECT_FALSE(parsed->usage.present());
}

TEST(GeminiProvider, WholeFunctionCallsCarryTheirThoughtSignatureInTheId) {
  const GeminiProvider provider;
  Result<Response> parsed = provider.ParseResponse(R"({"candidates":[{"content":{"parts":[
      {"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"Cik+/w=="},
      {"functionCall":{"name":"g"}},{"thoughtSignature":"c2ln"}],"role":"model"},
      "finishReason":"STOP"}],"responseId":"R"})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->tool_calls.size(), 2u);
  EXPECT_EQ(parsed->tool_calls[0].id, "call_R_0_ts_Cik-_w");
  EXPECT_EQ(parsed->tool_calls[1].id, "call_R_1");
  Result<Response> bad = provider.ParseResponse(R"({"candidates":[{"content":{"parts":[
      {"functionCall":{"name":"f"},"thoughtSignature":"A"}]}}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kUpstreamBadResponse);
}

}  // namespace
}  // namespace turnpike::providers::gemini
