// The mock's Ollama route, POST /api/chat: whole answers, NDJSON streams (stream defaults to
// true), tool calls, faults and errors in the shapes of
// https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion, with the
// same x-mock-* headers as the OpenAI route.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;
constexpr std::string_view kChat = "/api/chat";
constexpr int kTokens = 4;

MockOptions Options() {
  MockOptions options;
  options.tokens = kTokens;
  return options;
}

std::string Body(std::string_view extra = {}, std::string_view model = "llama3.2") {
  std::string body =
      R"({"model":")" + std::string(model) + R"(","messages":[{"role":"user","content":"Hi"}])";
  if (!extra.empty()) body += "," + std::string(extra);
  return body + "}";
}

// The objects of an NDJSON body, one per line; fails the test on a line that is not one.
std::vector<json::object> Lines(std::string_view body) {
  std::vector<json::object> lines;
  while (!body.empty()) {
    const size_t eol = body.find('\n');
    EXPECT_NE(eol, std::string_view::npos) << "every line ends in \\n";
    if (eol == std::string_view::npos) break;
    lines.push_back(json::parse(body.substr(0, eol)).as_object());
    body.remove_prefix(eol + 1);
  }
  return lines;
}

TEST(MockOllama, StreamsNdjsonByDefault) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, Body());
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.headers["content-type"], "application/x-ndjson");
  const std::vector<json::object> lines = Lines(reply.body);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kTokens + 1));
  std::string text;
  for (int i = 0; i < kTokens; ++i) {
    EXPECT_EQ(lines[i].at("model"), "llama3.2");
    EXPECT_TRUE(lines[i].at("created_at").is_string());
    EXPECT_EQ(lines[i].at("done"), false);
    EXPECT_EQ(lines[i].at("message").at("role"), "assistant");
    text += lines[i].at("message").at("content").as_string();
  }
  EXPECT_EQ(text, "tok0 tok1 tok2 tok3 ");
  const json::object& done = lines.back();
  EXPECT_EQ(done.at("done"), true);
  EXPECT_EQ(done.at("done_reason"), "stop");
  EXPECT_EQ(done.at("eval_count"), kTokens);
  EXPECT_GT(done.at("prompt_eval_count").as_int64(), 0);
}

TEST(MockOllama, WholeAnswerWhenStreamIsFalseAndNumPredictCuts) {
  RunningMock mock(Options());
  Reply reply =
      Send(mock.port(), "POST", kChat, Body(R"("stream":false,"options":{"num_predict":2})"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.headers["content-type"], "application/json");
  const json::object answer = json::parse(reply.body).as_object();
  EXPECT_EQ(answer.at("message").at("content"), "tok0 tok1 ");
  EXPECT_EQ(answer.at("done"), true);
  EXPECT_EQ(answer.at("done_reason"), "length");
  EXPECT_EQ(answer.at("eval_count"), 2);
}

TEST(MockOllama, ToolCallArrivesWholeWithArgumentsAnObject) {
  RunningMock mock(Options());
  const std::string tools = R"("tools":[{"type":"function","function":{"name":"get_weather"}}])";
  Reply streamed = Send(mock.port(), "POST", kChat, Body(tools), {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(streamed.status, 200u) << streamed.body;
  const std::vector<json::object> lines = Lines(streamed.body);
  ASSERT_EQ(lines.size(), 2u) << streamed.body;
  const json::value& call = lines[0].at("message").at("tool_calls").at(0);
  EXPECT_EQ(call.at("function").at("name"), "get_weather");
  EXPECT_EQ(call.at("function").at("arguments"), (json::object{{"location", "Paris"}}));
  EXPECT_EQ(lines[1].at("done_reason"), "stop");

  Reply whole = Send(mock.port(), "POST", kChat, Body(std::string(tools) + R"(,"stream":false)"),
                     {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(whole.status, 200u);
  const json::object answer = json::parse(whole.body).as_object();
  EXPECT_EQ(answer.at("message").at("tool_calls").at(0).at("function").at("name"), "get_weather");
}

TEST(MockOllama, ErrorsAreOllamasErrorObjectWithTheStatus) {
  RunningMock mock(Options());
  Reply fault = Send(mock.port(), "POST", kChat, Body(), {{"x-mock-fault", "500"}});
  EXPECT_EQ(fault.status, 500u);
  EXPECT_TRUE(json::parse(fault.body).at("error").is_string()) << fault.body;
  Reply limited = Send(mock.port(), "POST", kChat, Body(), {{"x-mock-fault", "429"}});
  EXPECT_EQ(limited.status, 429u);
  Reply missing = Send(mock.port(), "POST", kChat, Body("", "llama9:missing"));
  EXPECT_EQ(missing.status, 404u);
  EXPECT_EQ(json::parse(missing.body),
            (json::object{{"error", "model \"llama9:missing\" not found, try pulling it first"}}));
  Reply bad = Send(mock.port(), "POST", kChat, R"({"messages":[]})");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(json::parse(bad.body), (json::object{{"error", "model is required"}}));
}

TEST(MockOllama, CloseWithoutDoneEndsWithoutTheDoneLine) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, Body(), {{"x-mock-fault", "close-without-done"}});
  ASSERT_EQ(reply.status, 200u);
  const std::vector<json::object> lines = Lines(reply.body);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kTokens));
  EXPECT_EQ(lines.back().at("done"), false);
}

}  // namespace
}  // namespace turnpike::mock::testing
