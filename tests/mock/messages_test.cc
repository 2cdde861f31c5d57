// The mock's Anthropic route, POST /v1/messages: replies, streams, tool calls, faults and
// errors in the shapes of https://docs.anthropic.com/en/api/messages and
// .../messages-streaming, with the same x-mock-* headers as the OpenAI route.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock/chat_request.h"
#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;
constexpr std::string_view kMessages = "/v1/messages";
constexpr int kTokens = 4;
constexpr int kRetryAfter = 3;

MockOptions Options() {
  MockOptions options;
  options.tokens = kTokens;
  options.retry_after_s = kRetryAfter;
  return options;
}

std::string Body(bool stream, std::string_view extra = {}) {
  std::string body = R"({"model":"claude-test","max_tokens":100,"messages":[{"role":"user",)"
                     R"("content":"Hi"}])";
  if (stream) body += R"(,"stream":true)";
  if (!extra.empty()) body += "," + std::string(extra);
  return body + "}";
}

// The headers every Messages request carries (the API answers 400 without anthropic-version),
// plus `extra`.
Headers Versioned(std::pair<std::string, std::string> extra = {}) {
  Headers headers = {{"anthropic-version", "2023-06-01"}};
  if (!extra.first.empty()) headers.push_back(std::move(extra));
  return headers;
}

constexpr std::string_view kTools =
    R"("tools":[{"name":"get_weather","input_schema":{"type":"object"}}])";

// (event name, data) pairs of an SSE body.
std::vector<std::pair<std::string, json::value>> Events(std::string_view body) {
  std::vector<std::pair<std::string, json::value>> events;
  std::string name;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view line = body.substr(pos, end - pos);
    if (line.starts_with("event: ")) name = std::string(line.substr(7));
    if (line.starts_with("data: ")) events.emplace_back(name, json::parse(line.substr(6)));
    pos = end + 1;
  }
  return events;
}

std::string Content(int tokens) {
  std::string text;
  for (int i = 0; i < tokens; ++i) text += "tok" + std::to_string(i) + " ";
  return text;
}

TEST(MockMessages, NonStreamHasAnthropicShape) {
  RunningMock mock(Options());
  const std::string body = Body(false);
  Reply reply = Send(mock.port(), "POST", kMessages, body, Versioned());
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json::object message = json::parse(reply.body).as_object();
  EXPECT_TRUE(message.at("id").as_string().starts_with("msg_mock_"));
  EXPECT_EQ(message.at("type"), "message");
  EXPECT_EQ(message.at("role"), "assistant");
  EXPECT_EQ(message.at("model"), "claude-test");
  EXPECT_EQ(message.at("content"),
            json::array({json::object{{"type", "text"}, {"text", Content(kTokens)}}}));
  EXPECT_EQ(message.at("stop_reason"), "end_turn");
  EXPECT_TRUE(message.at("stop_sequence").is_null());
  EXPECT_EQ(message.at("usage").at("input_tokens"), static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(message.at("usage").at("output_tokens"), kTokens);
}

TEST(MockMessages, CountTokensCountsTheBodyAsPrompts) {
  RunningMock mock(Options());
  const std::string body = Body(false);
  Reply counted = Send(mock.port(), "POST", "/v1/messages/count_tokens", body);
  EXPECT_EQ(counted.status, 200u);
  EXPECT_EQ(boost::json::parse(counted.body).at("input_tokens"),
            static_cast<int64_t>(body.size() / 4));
}

TEST(MockMessages, CacheTokensAreReportedOutsideInputTokens) {
  MockOptions options = Options();
  options.cached_tokens = 3;
  options.cache_write_tokens = 2;
  RunningMock mock(options);
  const std::string body = Body(false);
  const int64_t prompt = static_cast<int64_t>(body.size() / 4);
  const json::value expected = {{"input_tokens", prompt - 5},
                                {"cache_creation_input_tokens", 2},
                                {"cache_read_input_tokens", 3},
                                {"output_tokens", kTokens}};
  Reply reply = Send(mock.port(), "POST", kMessages, body, Versioned());
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(json::parse(reply.body).at("usage"), expected);
  Reply stream = Send(mock.port(), "POST", kMessages, Body(true), Versioned());
  ASSERT_EQ(stream.status, 200u);
  const auto events = Events(stream.body);
  ASSERT_FALSE(events.empty());
  const json::value& start = events.front().second.at("message").at("usage");
  EXPECT_EQ(start.at("cache_read_input_tokens"), 3);
  EXPECT_EQ(start.at("cache_creation_input_tokens"), 2);
  EXPECT_EQ(start.at("input_tokens"), static_cast<int64_t>(Body(true).size() / 4) - 5);
}

TEST(MockMessages, StreamFollowsTheEventFlow) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages, Body(true), Versioned());
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.headers["Content-Type"], "text/event-stream");
  auto events = Events(reply.body);
  std::vector<std::string> names;
  for (const auto& [name, data] : events) {
    EXPECT_EQ(data.at("type"), name.c_str()) << "the event name repeats the data's type";
    names.push_back(name);
  }
  std::vector<std::string> expected = {"message_start", "content_block_start", "ping"};
  for (int i = 0; i < kTokens; ++i) expected.push_back("content_block_delta");
  for (const char* name : {"content_block_stop", "message_delta", "message_stop"}) {
    expected.push_back(name);
  }
  EXPECT_EQ(names, expected);
  const json::value& start = events[0].second.at("message");
  EXPECT_EQ(start.at("role"), "assistant");
  EXPECT_TRUE(start.at("content").as_array().empty());
  std::string text;
  for (int i = 0; i < kTokens; ++i) {
    const json::value& delta = events[static_cast<size_t>(3 + i)].second;
    EXPECT_EQ(delta.at("index"), 0);
    EXPECT_EQ(delta.at("delta").at("type"), "text_delta");
    text += delta.at("delta").at("text").as_string();
  }
  EXPECT_EQ(text, Content(kTokens));
  const json::value& delta = events[events.size() - 2].second;
  EXPECT_EQ(delta.at("delta").at("stop_reason"), "end_turn");
  EXPECT_EQ(delta.at("usage").at("output_tokens"), kTokens);
  EXPECT_EQ(Stats(mock.port()).at("streams_completed"), 1);
}

TEST(MockMessages, MaxTokensCapsTheReply) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages,
                     R"({"model":"m","max_tokens":2,"messages":[]})", Versioned());
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json::value message = json::parse(reply.body);
  EXPECT_EQ(message.at("content").at(0).at("text"), Content(2).c_str());
  EXPECT_EQ(message.at("stop_reason"), "max_tokens");
}

TEST(MockMessages, StreamedToolUseArrivesAsInputJsonDeltas) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages, Body(true, kTools),
                     Versioned({"x-mock-tool-call", "1"}));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  auto events = Events(reply.body);
  const json::value& block = events.at(1).second.at("content_block");
  EXPECT_EQ(block.at("type"), "tool_use");
  EXPECT_EQ(block.at("name"), "get_weather");
  EXPECT_TRUE(block.at("id").as_string().starts_with("toolu_mock_"));
  std::string arguments;
  int deltas = 0;
  for (const auto& [name, data] : events) {
    if (name != "content_block_delta") continue;
    EXPECT_EQ(data.at("delta").at("type"), "input_json_delta");
    arguments += data.at("delta").at("partial_json").as_string();
    ++deltas;
  }
  EXPECT_GT(deltas, 1);
  EXPECT_EQ(json::parse(arguments), json::parse(R"({"location":"Paris"})"));
  EXPECT_EQ(events[events.size() - 2].second.at("delta").at("stop_reason"), "tool_use");
}

TEST(MockMessages, NonStreamToolUse) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages, Body(false, kTools),
                     Versioned({"x-mock-tool-call", "1"}));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json::value message = json::parse(reply.body);
  EXPECT_EQ(message.at("stop_reason"), "tool_use");
  const json::value& block = message.at("content").at(0);
  EXPECT_EQ(block.at("type"), "tool_use");
  EXPECT_EQ(block.at("input"), json::parse(R"({"location":"Paris"})"));
}

TEST(MockMessages, ToolCallsOptionCallsWithoutTheHeader) {
  MockOptions options = Options();
  options.tool_calls = true;
  RunningMock mock(options);
  Reply with_tools = Send(mock.port(), "POST", kMessages, Body(false, kTools), Versioned());
  ASSERT_EQ(with_tools.status, 200u) << with_tools.body;
  json::value message = json::parse(with_tools.body);
  EXPECT_EQ(message.at("stop_reason"), "tool_use");
  EXPECT_EQ(message.at("content").at(0).at("type"), "tool_use");
  // Without tools there is nothing to call: text as usual.
  Reply without = Send(mock.port(), "POST", kMessages, Body(false), Versioned());
  ASSERT_EQ(without.status, 200u);
  EXPECT_EQ(json::parse(without.body).at("stop_reason"), "end_turn");
}

TEST(MockMessages, MissingMaxTokensIsAnAnthropic400) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages, R"({"model":"m","messages":[]})", Versioned());
  ASSERT_EQ(reply.status, 400u);
  json::value error = json::parse(reply.body);
  EXPECT_EQ(error.at("type"), "error");
  EXPECT_EQ(error.at("error").at("type"), "invalid_request_error");
  EXPECT_TRUE(error.at("error").at("message").as_string().starts_with("max_tokens: "));
}

TEST(MockMessages, MissingVersionHeaderIsAnAnthropic400) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages, Body(false));
  ASSERT_EQ(reply.status, 400u);
  json::value error = json::parse(reply.body);
  EXPECT_EQ(error.at("error").at("type"), "invalid_request_error");
  EXPECT_TRUE(error.at("error").at("message").as_string().starts_with("anthropic-version: "));
}

TEST(MockMessages, FaultsUseAnthropicErrors) {
  RunningMock mock(Options());
  struct Case {
    std::string fault;
    unsigned status;
    std::string type;
  };
  for (const Case& c : {Case{"500", 500, "api_error"}, Case{"503", 529, "overloaded_error"},
                        Case{"429", 429, "rate_limit_error"}}) {
    Reply reply =
        Send(mock.port(), "POST", kMessages, Body(true), Versioned({"x-mock-fault", c.fault}));
    EXPECT_EQ(reply.status, c.status) << c.fault;
    json::value error = json::parse(reply.body);
    EXPECT_EQ(error.at("type"), "error");
    EXPECT_EQ(error.at("error").at("type"), c.type.c_str());
    if (c.status == 429) {
      EXPECT_EQ(reply.headers["Retry-After"], std::to_string(kRetryAfter));
    }
  }
  EXPECT_EQ(Stats(mock.port()).at("faults_injected").at("503"), 1);
}

TEST(MockMessages, CloseWithoutDoneOmitsTheEnd) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kMessages, Body(true),
                     Versioned({"x-mock-fault", "close-without-done"}));
  ASSERT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body.find("message_delta"), std::string::npos) << reply.body;
  EXPECT_EQ(reply.body.find("message_stop"), std::string::npos);
  EXPECT_NE(reply.body.find("content_block_delta"), std::string::npos);
}

TEST(MockMessages, ResetCutsTheStream) {
  RunningMock mock(Options());
  Reply reply =
      Send(mock.port(), "POST", kMessages, Body(true), Versioned({"x-mock-fault", "reset"}));
  EXPECT_TRUE(reply.error) << reply.body;
  EXPECT_EQ(reply.body.find("message_stop"), std::string::npos);
}

TEST(MockMessages, TokensHeaderOverridesTheOption) {
  RunningMock mock(Options());
  Reply reply =
      Send(mock.port(), "POST", kMessages, Body(false), Versioned({"x-mock-tokens", "2"}));
  ASSERT_EQ(reply.status, 200u);
  EXPECT_EQ(json::parse(reply.body).at("content").at(0).at("text"), Content(2).c_str());
}

TEST(MockMessages, GetIsNotAllowed) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "GET", kMessages);
  EXPECT_EQ(reply.status, 405u);
}

// Extended thinking: a signed thinking block first (whole), or a thinking block streamed as
// thinking_delta events and a signature_delta before the text block at index 1; the bounds
// Anthropic checks are checked.
TEST(MockMessages, ThinkingComesFirstSignedInBothShapes) {
  RunningMock mock(Options());
  auto body = [](bool stream, std::string_view thinking, int max_tokens = 4000) {
    std::string text = Body(stream, thinking);
    const std::string limit = R"("max_tokens":100)";
    return text.replace(text.find(limit), limit.size(),
                        R"("max_tokens":)" + std::to_string(max_tokens));
  };
  const std::string thinking = R"("thinking":{"type":"enabled","budget_tokens":1024})";
  Reply whole = Send(mock.port(), "POST", kMessages, body(false, thinking), Versioned());
  ASSERT_EQ(whole.status, 200u) << whole.body;
  json::object message = json::parse(whole.body).as_object();
  const json::array& content = message.at("content").as_array();
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[0].at("type"), "thinking");
  EXPECT_EQ(content[0].at("thinking"), "think0 think1 think2 ");
  EXPECT_FALSE(content[0].at("signature").as_string().empty());
  EXPECT_EQ(content[1].at("text").as_string(), Content(kTokens));
  EXPECT_EQ(message.at("usage").at("output_tokens").as_int64(), kTokens + kMockReasoningTokens);

  Reply streamed = Send(mock.port(), "POST", kMessages, body(true, thinking), Versioned());
  ASSERT_EQ(streamed.status, 200u);
  int thinking_deltas = 0, signatures = 0, text_at_1 = 0;
  for (const auto& [name, data] : Events(streamed.body)) {
    if (name != "content_block_delta") continue;
    const json::value& type = data.at("delta").at("type");
    if (type == "thinking_delta") ++thinking_deltas;
    if (type == "signature_delta") ++signatures;
    if (type == "text_delta" && data.at("index") == 1) ++text_at_1;
  }
  EXPECT_EQ(thinking_deltas, kMockReasoningTokens);
  EXPECT_EQ(signatures, 1);
  EXPECT_EQ(text_at_1, kTokens);

  // Below Anthropic's minimum budget; a budget not below max_tokens; an unknown type.
  EXPECT_EQ(Send(mock.port(), "POST", kMessages,
                 body(false, R"("thinking":{"type":"enabled","budget_tokens":500})"), Versioned())
                .status,
            400u);
  EXPECT_EQ(Send(mock.port(), "POST", kMessages, body(false, thinking, 1024), Versioned()).status,
            400u);
  EXPECT_EQ(Send(mock.port(), "POST", kMessages, body(false, R"("thinking":{"type":"sometimes"})"),
                 Versioned())
                .status,
            400u);
}

}  // namespace
}  // namespace turnpike::mock::testing
