// The mock's Gemini routes, POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse: replies, streams, function calls, faults and errors in the
// shapes of https://ai.google.dev/api/generate-content, with the same x-mock-* headers as the
// other routes.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock/gemini_render.h"
#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;
constexpr std::string_view kGenerate = "/v1beta/models/gemini-test:generateContent";
constexpr std::string_view kStream = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";
constexpr int kTokens = 4;
constexpr uint64_t kCached = 3;

MockOptions Options() {
  MockOptions options;
  options.tokens = kTokens;
  options.cached_tokens = kCached;
  return options;
}

std::string Body(std::string_view extra = {}) {
  std::string body = R"({"contents":[{"role":"user","parts":[{"text":"Hi"}]}])";
  if (!extra.empty()) body += "," + std::string(extra);
  return body + "}";
}

constexpr std::string_view kTools =
    R"("tools":[{"functionDeclarations":[{"name":"get_weather","parametersJsonSchema":{}}]}])";

std::string Content(int tokens) {
  std::string text;
  for (int i = 0; i < tokens; ++i) text += "tok" + std::to_string(i) + " ";
  return text;
}

TEST(MockGemini, GenerateContentAnswersAGenerateContentResponse) {
  RunningMock mock(Options());
  const std::string body = Body();
  Reply reply = Send(mock.port(), "POST", kGenerate, body, {{"x-goog-api-key", "k"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value answer = json::parse(reply.body);
  const json::value& candidate = answer.at("candidates").at(0);
  EXPECT_EQ(candidate.at("content").at("role"), "model");
  EXPECT_EQ(Text(candidate.at("content").at("parts").at(0).at("text")), Content(kTokens));
  EXPECT_EQ(candidate.at("finishReason"), "STOP");
  EXPECT_EQ(answer.at("modelVersion"), "gemini-test");
  EXPECT_TRUE(answer.at("responseId").as_string().starts_with("mock-"));
  const json::value& usage = answer.at("usageMetadata");
  const int64_t prompt = static_cast<int64_t>(body.size() / 4);
  EXPECT_EQ(usage.at("promptTokenCount"), prompt);
  EXPECT_EQ(usage.at("candidatesTokenCount"), kTokens);
  EXPECT_EQ(usage.at("totalTokenCount"), prompt + kTokens);
  EXPECT_EQ(usage.at("cachedContentTokenCount"), static_cast<int64_t>(kCached));
}

TEST(MockGemini, MaxOutputTokensCutsTheAnswer) {
  RunningMock mock(Options());
  Reply reply =
      Send(mock.port(), "POST", kGenerate, Body(R"("generationConfig":{"maxOutputTokens":2})"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value candidate = json::parse(reply.body).at("candidates").at(0);
  EXPECT_EQ(Text(candidate.at("content").at("parts").at(0).at("text")), Content(2));
  EXPECT_EQ(candidate.at("finishReason"), "MAX_TOKENS");
}

TEST(MockGemini, StreamIsOneWholeResponsePerEventWithCrlfFraming) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kStream, Body());
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.headers["content-type"], "text/event-stream");
  EXPECT_NE(reply.body.find("\r\n\r\n"), std::string::npos);
  EXPECT_EQ(reply.body.find("[DONE]"), std::string::npos);
  const std::vector<json::value> events = SseEvents(reply.body);
  ASSERT_EQ(events.size(), static_cast<size_t>(kTokens + 1));
  std::string text;
  for (const json::value& event : events) {
    const json::value& candidate = event.at("candidates").at(0);
    text += candidate.at("content").at("parts").at(0).at("text").as_string();
    EXPECT_EQ(event.at("responseId"), events.front().at("responseId"));
    EXPECT_TRUE(event.at("usageMetadata").as_object().contains("promptTokenCount"));
  }
  EXPECT_EQ(text, Content(kTokens));
  EXPECT_FALSE(events.front().at("candidates").at(0).as_object().contains("finishReason"));
  EXPECT_EQ(events.back().at("candidates").at(0).at("finishReason"), "STOP");
  EXPECT_EQ(events.back().at("usageMetadata").at("candidatesTokenCount"), kTokens);
  EXPECT_EQ(Stats(mock.port()).at("streams_completed"), 1);
}

TEST(MockGemini, FunctionCallsArriveWholeWithoutIdsAndSigned) {
  RunningMock mock(Options());
  std::string signature;
  AppendThoughtSignature(signature, "get_weather");
  EXPECT_EQ(signature.size(), 24u);  // 16 bytes in base64, padded
  EXPECT_TRUE(signature.ends_with("=="));
  for (std::string_view target : {kGenerate, kStream}) {
    Reply reply = Send(mock.port(), "POST", target, Body(kTools), {{"x-mock-tool-call", "1"}});
    ASSERT_EQ(reply.status, 200u) << reply.body;
    const std::vector<json::value> events =
        target == kStream ? SseEvents(reply.body) : std::vector{json::parse(reply.body)};
    int calls = 0;
    for (const json::value& event : events) {
      for (const json::value& part :
           event.at("candidates").at(0).at("content").at("parts").as_array()) {
        if (!part.as_object().contains("functionCall")) continue;
        ++calls;
        EXPECT_EQ(part.at("functionCall"),
                  json::parse(R"({"name":"get_weather","args":{"location":"Paris"}})"));
        EXPECT_EQ(part.at("thoughtSignature"), signature.c_str()) << target;
      }
    }
    EXPECT_EQ(calls, 1) << target;
    EXPECT_EQ(events.back().at("candidates").at(0).at("finishReason"), "STOP") << target;
  }
}

// A request whose history has the call of `model_parts`, then its result.
std::string History(std::string_view model_parts, std::string_view after = {}) {
  std::string body = R"({"contents":[{"role":"user","parts":[{"text":"Weather?"}]},)"
                     R"({"role":"model","parts":[)" +
                     std::string(model_parts) +
                     R"(]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather",)"
                     R"("response":{"temp":14}}}]})";
  if (!after.empty()) body += "," + std::string(after);
  return body + "]," + std::string(kTools) + "}";
}

TEST(MockGemini, TheCurrentTurnsFunctionCallsMustCarryTheirSignature) {
  RunningMock mock(Options());
  std::string signature;
  AppendThoughtSignature(signature, "get_weather");
  const std::string call = R"({"functionCall":{"name":"get_weather","args":{}})";
  const std::string signed_call = call + R"(,"thoughtSignature":")" + signature + R"("})";
  for (std::string_view target : {kGenerate, kStream}) {
    Reply kept = Send(mock.port(), "POST", target, History(signed_call + "," + call + "}"));
    EXPECT_EQ(kept.status, 200u) << target << kept.body;  // parallel calls: the first is signed
    Reply dropped = Send(mock.port(), "POST", target, History(call + "}"));
    ASSERT_EQ(dropped.status, 400u) << target << dropped.body;
    const json::value error = json::parse(dropped.body).at("error");
    EXPECT_EQ(error.at("status"), "INVALID_ARGUMENT");
    EXPECT_EQ(error.at("code"), 400);
    const std::string message(error.at("message").as_string());
    EXPECT_TRUE(message.starts_with("Function call is missing a thought_signature")) << message;
    EXPECT_NE(message.find("`default_api:get_weather` , position 2."), std::string::npos)
        << message;
    Reply other =
        Send(mock.port(), "POST", target, History(call + R"(,"thoughtSignature":"AAAA"})"));
    EXPECT_EQ(other.status, 400u) << target << other.body;
  }
  // A later user message starts a new turn: the earlier turn's calls are not checked.
  Reply later = Send(mock.port(), "POST", kGenerate,
                     History(call + "}", R"({"role":"user","parts":[{"text":"Thanks"}]})"));
  EXPECT_EQ(later.status, 200u) << later.body;
}

TEST(MockGemini, ErrorsUseGooglesEnvelope) {
  RunningMock mock(Options());
  Reply limited = Send(mock.port(), "POST", kGenerate, Body(), {{"x-mock-fault", "429"}});
  EXPECT_EQ(limited.status, 429u);
  EXPECT_EQ(json::parse(limited.body).at("error").at("status"), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(json::parse(limited.body).at("error").at("code"), 429);
  Reply overloaded = Send(mock.port(), "POST", kStream, Body(), {{"x-mock-fault", "503"}});
  EXPECT_EQ(overloaded.status, 503u);
  EXPECT_EQ(json::parse(overloaded.body).at("error").at("status"), "UNAVAILABLE");
  Reply invalid = Send(mock.port(), "POST", kGenerate, R"({"contents":[]})");
  EXPECT_EQ(invalid.status, 400u);
  EXPECT_EQ(json::parse(invalid.body).at("error").at("status"), "INVALID_ARGUMENT");
  for (std::string_view target :
       {std::string_view("/v1beta/models/gemini-test:generateAnswer"),
        std::string_view("/v1beta/models/gemini-test:streamGenerateContent")}) {
    Reply unknown = Send(mock.port(), "POST", target, Body());
    EXPECT_EQ(unknown.status, 404u) << target;
    EXPECT_EQ(json::parse(unknown.body).at("error").at("status"), "NOT_FOUND") << target;
  }
  Reply get = Send(mock.port(), "GET", kGenerate);
  EXPECT_EQ(get.status, 404u);
}

TEST(MockGemini, CountTokensCountsTheBodyAsPrompts) {
  RunningMock mock(Options());
  const std::string body = Body();
  Reply counted = Send(mock.port(), "POST", "/v1beta/models/gemini-test:countTokens", body);
  EXPECT_EQ(counted.status, 200u);
  EXPECT_EQ(json::parse(counted.body).at("totalTokens"), static_cast<int64_t>(body.size() / 4));
}

}  // namespace
}  // namespace turnpike::mock::testing
