// Error mapping both ways: Anthropic's documented statuses and types
// (https://docs.claude.com/en/api/errors) against OpenAI's envelope.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;

struct Mapping {
  int anthropic_status;
  std::string anthropic_type;
  int openai_status;
  std::string openai_type;
};

class AnthropicErrorTest : public ::testing::TestWithParam<Mapping> {};

TEST_P(AnthropicErrorTest, MapsToOpenAiAndBack) {
  const Mapping& m = GetParam();
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  const std::string body = R"({"type":"error","error":{"type":")" + m.anthropic_type +
                           R"(","message":"why"},"request_id":"req_1"})";
  const Error error = anthropic.ParseError(m.anthropic_status, body);
  EXPECT_EQ(error.message, "why");
  ErrorReply to_openai = openai.RenderError(error);
  EXPECT_EQ(to_openai.status, m.openai_status);
  EXPECT_EQ(json::parse(to_openai.body).at("error").at("type"), m.openai_type.c_str());
  // And an Anthropic client of an OpenAI upstream that answered with that status.
  ErrorReply back = anthropic.RenderError(openai.ParseError(m.openai_status, to_openai.body));
  const json::value parsed = json::parse(back.body);
  EXPECT_EQ(parsed.at("type"), "error");
  EXPECT_EQ(parsed.at("error").at("message"), "why");
  if (m.anthropic_type != "api_error") {
    EXPECT_EQ(back.status, m.anthropic_status);
    EXPECT_EQ(parsed.at("error").at("type"), m.anthropic_type.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Documented, AnthropicErrorTest,
    ::testing::Values(Mapping{400, "invalid_request_error", 400, "invalid_request_error"},
                      Mapping{401, "authentication_error", 401, "authentication_error"},
                      Mapping{403, "permission_error", 403, "permission_error"},
                      Mapping{404, "not_found_error", 404, "invalid_request_error"},
                      Mapping{413, "request_too_large", 413, "invalid_request_error"},
                      Mapping{429, "rate_limit_error", 429, "rate_limit_error"},
                      Mapping{500, "api_error", 502, "server_error"},
                      Mapping{529, "overloaded_error", 503, "server_error"}));

TEST(AnthropicError, BodyThatIsNotJsonKeepsTheStatus) {
  const anthropic::AnthropicProvider anthropic;
  const Error error = anthropic.ParseError(429, "<html>slow down</html>");
  EXPECT_EQ(error.code, ErrorCode::kRateLimited);
  EXPECT_NE(error.message.find("429"), std::string::npos);
}

TEST(ErrorIn2xx, IsReturnedAsTheErrorItCarries) {
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  Result<Response> from_anthropic = anthropic.ParseResponse(
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
  ASSERT_FALSE(from_anthropic.ok());
  EXPECT_EQ(from_anthropic.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(openai.RenderError(from_anthropic.error()).status, 503);
  Result<Response> from_openai =
      openai.ParseResponse(R"({"error":{"message":"boom","type":"server_error"}})");
  ASSERT_FALSE(from_openai.ok());
  EXPECT_EQ(from_openai.error().message, "boom");
  EXPECT_EQ(anthropic.RenderError(from_openai.error()).status, 502);
}

TEST(AnthropicError, ParamPrefixesTheMessage) {
  const anthropic::AnthropicProvider anthropic;
  ErrorReply reply =
      anthropic.RenderError(Error{ErrorCode::kInvalidRequest, "Field required", "max_tokens"});
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(json::parse(reply.body),
            json::parse(R"({"type":"error","error":{"type":"invalid_request_error",)"
                        R"("message":"max_tokens: Field required"}})"));
}

}  // namespace
}  // namespace turnpike::providers
