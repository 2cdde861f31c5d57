// The mock's chat completion replies, checked field by field against OpenAI's shapes.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;
constexpr std::string_view kChat = "/v1/chat/completions";
constexpr int kTokens = 5;
constexpr std::string_view kToolsField =
    R"("tools":[{"type":"function","function":{"name":"get_weather","parameters":{}}}])";

MockOptions FiveTokens() {
  MockOptions options;
  options.tokens = kTokens;
  return options;
}

std::string Content(int tokens) {
  std::string text;
  for (int i = 0; i < tokens; ++i) text += "tok" + std::to_string(i) + " ";
  return text;
}

TEST(MockChat, NonStreamHasOpenAiShape) {
  RunningMock mock(FiveTokens());
  const std::string body = ChatBody(false);
  Reply reply = Send(mock.port(), "POST", kChat, body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.headers["Content-Type"], "application/json");
  json::object doc = json::parse(reply.body).as_object();
  EXPECT_TRUE(doc.at("id").as_string().starts_with("chatcmpl-mock-"));
  EXPECT_EQ(doc.at("object"), "chat.completion");
  EXPECT_GT(doc.at("created").as_int64(), 0);
  EXPECT_EQ(doc.at("model"), "gpt-test");
  const json::object& choice = doc.at("choices").as_array().at(0).as_object();
  EXPECT_EQ(choice.at("index"), 0);
  EXPECT_EQ(choice.at("message").at("role"), "assistant");
  EXPECT_EQ(Text(choice.at("message").at("content")), Content(kTokens));
  EXPECT_EQ(choice.at("finish_reason"), "stop");
  const json::object& usage = doc.at("usage").as_object();
  EXPECT_EQ(usage.at("prompt_tokens"), static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(usage.at("completion_tokens"), kTokens);
  EXPECT_EQ(usage.at("total_tokens"), static_cast<int64_t>(body.size() / 4 + kTokens));
}

TEST(MockChat, CachedTokensAreReportedInPromptTokensDetails) {
  MockOptions options = FiveTokens();
  options.cached_tokens = 3;
  options.cache_write_tokens = 2;  // OpenAI has no field for cache writes
  RunningMock mock(options);
  const std::string body = ChatBody(false);
  Reply reply = Send(mock.port(), "POST", kChat, body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value usage = json::parse(reply.body).at("usage");
  EXPECT_EQ(usage.at("prompt_tokens"), static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(usage.at("prompt_tokens_details"), json::parse(R"({"cached_tokens":3})"));
}

TEST(MockChat, MaxTokensCapsTheReply) {
  RunningMock mock(FiveTokens());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false, false, R"("max_tokens":2)"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json::value doc = json::parse(reply.body);
  EXPECT_EQ(Text(doc.at("choices").at(0).at("message").at("content")), Content(2));
  EXPECT_EQ(doc.at("choices").at(0).at("finish_reason"), "length");
  EXPECT_EQ(doc.at("usage").at("completion_tokens"), 2);
}

TEST(MockChat, TokensHeaderOverridesTheOption) {
  RunningMock mock(FiveTokens());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false), {{"x-mock-tokens", "3"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(Text(json::parse(reply.body).at("choices").at(0).at("message").at("content")),
            Content(3));
}

// role chunk, one chunk per token, the finish chunk, [DONE]; no usage anywhere.
TEST(MockChat, StreamWithoutUsage) {
  RunningMock mock(FiveTokens());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(true));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_FALSE(reply.error) << reply.error.message();
  EXPECT_EQ(reply.headers["Content-Type"], "text/event-stream");
  std::vector<std::string> data = SseData(reply.body);
  ASSERT_EQ(data.size(), static_cast<size_t>(kTokens + 3));
  EXPECT_EQ(data.back(), "[DONE]");
  std::vector<json::value> events = SseEvents(reply.body);
  ASSERT_EQ(events.size(), static_cast<size_t>(kTokens + 2));
  const std::string id(events[0].at("id").as_string());
  for (const json::value& event : events) {
    EXPECT_EQ(Text(event.at("id")), id);
    EXPECT_EQ(event.at("object"), "chat.completion.chunk");
    EXPECT_EQ(event.at("model"), "gpt-test");
    EXPECT_FALSE(event.as_object().contains("usage"));
  }
  EXPECT_EQ(events[0].at("choices").at(0).at("delta"),
            json::parse(R"({"role":"assistant","content":""})"));
  for (int i = 0; i < kTokens; ++i) {
    const json::value& choice = events[static_cast<size_t>(i + 1)].at("choices").at(0);
    EXPECT_EQ(Text(choice.at("delta").at("content")), "tok" + std::to_string(i) + " ");
    EXPECT_TRUE(choice.at("finish_reason").is_null());
  }
  const json::value& last = events.back().at("choices").at(0);
  EXPECT_TRUE(last.at("delta").as_object().empty());
  EXPECT_EQ(last.at("finish_reason"), "stop");
}

// With include_usage every chunk carries "usage":null and a usage chunk precedes [DONE].
TEST(MockChat, StreamWithUsage) {
  RunningMock mock(FiveTokens());
  const std::string body = ChatBody(true, true);
  Reply reply = Send(mock.port(), "POST", kChat, body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  std::vector<std::string> data = SseData(reply.body);
  ASSERT_EQ(data.size(), static_cast<size_t>(kTokens + 4));
  EXPECT_EQ(data.back(), "[DONE]");
  std::vector<json::value> events = SseEvents(reply.body);
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_TRUE(events[i].at("usage").is_null()) << data[i];
  }
  EXPECT_EQ(events[events.size() - 2].at("choices").at(0).at("finish_reason"), "stop");
  const json::value& usage_chunk = events.back();
  EXPECT_TRUE(usage_chunk.at("choices").as_array().empty());
  EXPECT_EQ(usage_chunk.at("usage").at("prompt_tokens"), static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(usage_chunk.at("usage").at("completion_tokens"), kTokens);
  EXPECT_EQ(usage_chunk.at("usage").at("total_tokens"),
            static_cast<int64_t>(body.size() / 4 + kTokens));
}

TEST(MockChat, StreamedToolCallArrivesInFragments) {
  RunningMock mock(FiveTokens());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(true, false, kToolsField),
                     {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  std::vector<json::value> events = SseEvents(reply.body);
  ASSERT_GE(events.size(), 4u);
  const json::value& first = events[0].at("choices").at(0).at("delta");
  EXPECT_EQ(first.at("role"), "assistant");
  EXPECT_EQ(first.at("tool_calls").at(0).at("function").at("name"), "get_weather");
  EXPECT_TRUE(first.at("tool_calls").at(0).at("id").as_string().starts_with("call_mock_"));
  std::string arguments;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    const json::value& call = events[i].at("choices").at(0).at("delta").at("tool_calls").at(0);
    EXPECT_EQ(call.at("index"), 0);
    arguments += call.at("function").at("arguments").as_string();
  }
  EXPECT_GT(events.size(), 4u) << "the arguments must come in several fragments";
  EXPECT_EQ(arguments, R"({"location":"Paris"})");
  EXPECT_EQ(events.back().at("choices").at(0).at("finish_reason"), "tool_calls");
}

TEST(MockChat, NonStreamToolCall) {
  RunningMock mock(FiveTokens());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false, false, kToolsField),
                     {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  json::value choice = json::parse(reply.body).at("choices").at(0);
  EXPECT_EQ(choice.at("finish_reason"), "tool_calls");
  EXPECT_TRUE(choice.at("message").at("content").is_null());
  const json::value& call = choice.at("message").at("tool_calls").at(0);
  EXPECT_EQ(call.at("type"), "function");
  EXPECT_EQ(call.at("function").at("name"), "get_weather");
  EXPECT_EQ(call.at("function").at("arguments"), R"({"location":"Paris"})");
}

TEST(MockChat, ToolCallHeaderWithoutToolsGivesText) {
  RunningMock mock(FiveTokens());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false), {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(Text(json::parse(reply.body).at("choices").at(0).at("message").at("content")),
            Content(kTokens));
}

TEST(MockChat, ModelEchoIsEscaped) {
  RunningMock mock(FiveTokens());
  const std::string body = R"({"model":"a\"b\\c","messages":[],"stream":true})";
  Reply reply = Send(mock.port(), "POST", kChat, body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  for (const json::value& event : SseEvents(reply.body)) EXPECT_EQ(event.at("model"), "a\"b\\c");
}

}  // namespace
}  // namespace turnpike::mock::testing
