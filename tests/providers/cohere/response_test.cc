// Whole answers and error bodies: what becomes an answer, and what becomes which error.
#include <gtest/gtest.h>

#include "providers/cohere/cohere_provider.h"

namespace turnpike::providers::cohere {
namespace {

const CohereProvider kCohere;

TEST(CohereResponse, AnErrorBodyUnder200IsAnError) {
  Result<Response> out = kCohere.ParseResponse(R"({"id":"e","message":"model overloaded"})");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(out.error().message, "model overloaded");
}

TEST(CohereResponse, ErrorAndTimeoutFinishReasonsAreErrors) {
  Result<Response> error = kCohere.ParseResponse(
      R"({"id":"a","finish_reason":"ERROR","message":{"role":"assistant","content":[]}})");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().code, ErrorCode::kUpstreamBadResponse);
  Result<Response> timeout = kCohere.ParseResponse(
      R"({"id":"a","finish_reason":"TIMEOUT","message":{"role":"assistant","content":[]}})");
  ASSERT_FALSE(timeout.ok());
  EXPECT_EQ(timeout.error().code, ErrorCode::kUpstreamTimeout);
}

TEST(CohereResponse, NotJsonOrNoMessageIsABadResponse) {
  EXPECT_EQ(kCohere.ParseResponse("<html>").error().code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(kCohere.ParseResponse(R"({"id":"a"})").error().code, ErrorCode::kUpstreamBadResponse);
}

TEST(CohereResponse, ThinkingIsSkippedAndOtherBlocksAreRefused) {
  Result<Response> out = kCohere.ParseResponse(
      R"({"id":"a","finish_reason":"COMPLETE","message":{"role":"assistant","content":[)"
      R"({"type":"thinking","thinking":"hmm"},{"type":"text","text":"hi"}]}})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->text, "hi");
  EXPECT_EQ(out->finish, FinishReason::kStop);
  EXPECT_FALSE(out->usage.present());
  Result<Response> other = kCohere.ParseResponse(
      R"({"id":"a","finish_reason":"COMPLETE","message":{"role":"assistant","content":[)"
      R"({"type":"document","document":{}}]}})");
  EXPECT_FALSE(other.ok());
}

TEST(CohereResponse, ToolCallsKeepTheirArguments) {
  Result<Response> out = kCohere.ParseResponse(
      R"({"id":"a","finish_reason":"TOOL_CALL","message":{"role":"assistant",)"
      R"("tool_plan":"plan","tool_calls":[{"id":"c1","type":"function","function":)"
      R"({"name":"f","arguments":"{\"x\":1}"}},{"id":"c2","type":"function","function":)"
      R"({"name":"g","arguments":""}}]}})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->text, "");
  ASSERT_EQ(out->tool_calls.size(), 2u);
  EXPECT_EQ(out->tool_calls[0].arguments, R"({"x":1})");
  EXPECT_EQ(out->tool_calls[1].name, "g");
  EXPECT_EQ(out->tool_calls[1].arguments, "{}");
  EXPECT_EQ(out->finish, FinishReason::kToolCalls);
}

struct StatusCase {
  int status;
  ErrorCode code;
};

class CohereErrorStatusTest : public ::testing::TestWithParam<StatusCase> {};

TEST_P(CohereErrorStatusTest, MapsTheStatus) {
  Error error = kCohere.ParseError(GetParam().status, R"({"id":"x","message":"why"})");
  EXPECT_EQ(error.code, GetParam().code);
  EXPECT_EQ(error.message, "why");
}

INSTANTIATE_TEST_SUITE_P(Cohere, CohereErrorStatusTest,
                         ::testing::Values(StatusCase{400, ErrorCode::kInvalidRequest},
                                           StatusCase{401, ErrorCode::kUnauthorized},
                                           StatusCase{402, ErrorCode::kForbidden},
                                           StatusCase{404, ErrorCode::kNotFound},
                                           StatusCase{422, ErrorCode::kInvalidRequest},
                                           StatusCase{429, ErrorCode::kRateLimited},
                                           StatusCase{500, ErrorCode::kUpstreamBadResponse},
                                           StatusCase{503, ErrorCode::kUnavailable},
                                           StatusCase{504, ErrorCode::kUpstreamTimeout}));

TEST(CohereError, ABodyThatIsNotJsonKeepsTheStatus) {
  Error error = kCohere.ParseError(503, "upstream connect error");
  EXPECT_EQ(error.code, ErrorCode::kUnavailable);
  EXPECT_NE(error.message.find("503"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::providers::cohere
