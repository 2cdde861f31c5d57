// The translator against the mock provider, whose Anthropic, OpenAI, Ollama and Gemini wire
// shapes are written independently (src/mock/): real streams from one dialect, translated, must
// read correctly in the other, down to what the gateway's accounting tee
// (stream::ChatAccumulator) extracts.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "../mock/mock_client.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/translator.h"
#include "stream/chat_accumulator.h"
#include "stream/ndjson_parser.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;
using mock::testing::Reply;
using mock::testing::RunningMock;
using mock::testing::Send;

constexpr int kTokens = 5;

mock::MockOptions Options() {
  mock::MockOptions options;
  options.tokens = kTokens;
  return options;
}

struct Translated {
  std::string out;
  TokenUsage usage;
  int64_t output_bytes = 0;
};

Translated Translate(const Provider& from, const Provider& to, std::string_view upstream) {
  EncoderOptions options;
  options.include_usage = true;
  StreamTranslator translator(from.NewDecoder(), to.NewEncoder(options));
  stream::SseParser parser;
  stream::NdjsonParser lines;
  std::string out;
  auto on_event = [&](const stream::SseEvent& event) {
    Status translated = translator.Translate(event, out);
    EXPECT_TRUE(translated.ok()) << translated.error().message;
  };
  Status fed = from.stream_framing() == StreamFraming::kNdjson ? lines.Feed(upstream, on_event)
                                                               : parser.Feed(upstream, on_event);
  EXPECT_TRUE(fed.ok());
  translator.Finish(out);
  return Translated{std::move(out), translator.usage(), translator.output_bytes()};
}

TEST(MockRoundTrip, AnthropicToolStreamReadsAsOpenAiChunks) {
  RunningMock mock(Options());
  const std::string body =
      R"({"model":"claude-test","max_tokens":100,"stream":true,"messages":[{"role":"user",)"
      R"("content":"Weather?"}],"tools":[{"name":"get_weather","input_schema":{"type":"object"}}]})";
  Reply reply = Send(mock.port(), "POST", "/v1/messages", body,
                     {{"x-mock-tool-call", "1"}, {"anthropic-version", "2023-06-01"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  anthropic::AnthropicProvider anthropic;
  openai::OpenAiProvider openai;
  const Translated translated = Translate(anthropic, openai, reply.body);
  const std::string& out = translated.out;

  stream::ChatAccumulator accumulator;
  stream::SseParser parser;
  Status fed = parser.Feed(out, [&](const stream::SseEvent& event) {
    EXPECT_NE(accumulator.Consume(event.data), stream::ChunkKind::kUnparsed) << event.data;
  });
  ASSERT_TRUE(fed.ok());
  EXPECT_TRUE(accumulator.done());
  ASSERT_EQ(accumulator.choices().size(), 1u);
  const stream::Choice& choice = accumulator.choices()[0];
  EXPECT_EQ(choice.role, "assistant");
  EXPECT_EQ(choice.finish_reason, "tool_calls");
  ASSERT_EQ(choice.tool_calls.size(), 1u);
  EXPECT_EQ(choice.tool_calls[0].name, "get_weather");
  EXPECT_EQ(choice.tool_calls[0].type, "function");
  EXPECT_TRUE(choice.tool_calls[0].id.starts_with("toolu_mock_"));
  EXPECT_EQ(json::parse(choice.tool_calls[0].arguments), json::parse(R"({"location":"Paris"})"));
  EXPECT_EQ(accumulator.usage().prompt_tokens, static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(accumulator.usage().completion_tokens, 5);  // the five argument fragments
  EXPECT_EQ(translated.usage.prompt_tokens, accumulator.usage().prompt_tokens);
  // Output bytes count the name and the escaped argument text: at least the unescaped size.
  EXPECT_GE(translated.output_bytes, static_cast<int64_t>(choice.tool_calls[0].name.size() +
                                                          choice.tool_calls[0].arguments.size()));
}

TEST(MockRoundTrip, OpenAiTextStreamReadsAsAnthropicEvents) {
  RunningMock mock(Options());
  const std::string body = mock::testing::ChatBody(true, true);
  Reply reply = Send(mock.port(), "POST", "/v1/chat/completions", body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  anthropic::AnthropicProvider anthropic;
  openai::OpenAiProvider openai;
  const Translated translated = Translate(openai, anthropic, reply.body);
  const std::string& out = translated.out;

  std::vector<std::string> types;
  std::string text;
  json::value final_delta;
  stream::SseParser parser;
  Status fed = parser.Feed(out, [&](const stream::SseEvent& event) {
    json::value data = json::parse(event.data);
    EXPECT_EQ(data.at("type"), std::string(event.event).c_str());
    types.emplace_back(event.event);
    if (event.event == "content_block_delta") text += data.at("delta").at("text").as_string();
    if (event.event == "message_delta") final_delta = data;
  });
  ASSERT_TRUE(fed.ok());
  std::vector<std::string> expected = {"message_start", "ping", "content_block_start"};
  for (int i = 0; i < kTokens; ++i) expected.push_back("content_block_delta");
  for (const char* type : {"content_block_stop", "message_delta", "message_stop"}) {
    expected.push_back(type);
  }
  EXPECT_EQ(types, expected);
  std::string tokens;
  for (int i = 0; i < kTokens; ++i) tokens += "tok" + std::to_string(i) + " ";
  EXPECT_EQ(text, tokens);
  EXPECT_EQ(final_delta.at("delta").at("stop_reason"), "end_turn");
  EXPECT_EQ(final_delta.at("usage").at("output_tokens"), kTokens);
  EXPECT_EQ(final_delta.at("usage").at("input_tokens"), static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(translated.usage.completion_tokens, kTokens);
  EXPECT_EQ(translated.output_bytes, static_cast<int64_t>(tokens.size()));
}

TEST(MockRoundTrip, OllamaToolStreamReadsAsOpenAiChunks) {
  RunningMock mock(Options());
  const std::string body =
      R"({"model":"llama3.2","messages":[{"role":"user","content":"Weather?"}],)"
      R"("tools":[{"type":"function","function":{"name":"get_weather"}}]})";
  Reply reply = Send(mock.port(), "POST", "/api/chat", body, {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  ollama::OllamaProvider ollama;
  openai::OpenAiProvider openai;
  const Translated translated = Translate(ollama, openai, reply.body);

  stream::ChatAccumulator accumulator;
  stream::SseParser parser;
  Status fed = parser.Feed(translated.out, [&](const stream::SseEvent& event) {
    EXPECT_NE(accumulator.Consume(event.data), stream::ChunkKind::kUnparsed) << event.data;
  });
  ASSERT_TRUE(fed.ok());
  EXPECT_TRUE(accumulator.done());
  ASSERT_EQ(accumulator.choices().size(), 1u);
  const stream::Choice& choice = accumulator.choices()[0];
  EXPECT_EQ(choice.role, "assistant");
  EXPECT_EQ(choice.finish_reason, "tool_calls");
  ASSERT_EQ(choice.tool_calls.size(), 1u);
  EXPECT_EQ(choice.tool_calls[0].name, "get_weather");
  EXPECT_EQ(choice.tool_calls[0].id, "call_0");
  EXPECT_EQ(json::parse(choice.tool_calls[0].arguments), json::parse(R"({"location":"Paris"})"));
  EXPECT_EQ(accumulator.usage().prompt_tokens, static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(translated.usage.prompt_tokens, accumulator.usage().prompt_tokens);
}

TEST(MockRoundTrip, OllamaTextStreamReadsAsAnthropicEvents) {
  RunningMock mock(Options());
  const std::string body =
      R"({"model":"llama3.2","messages":[{"role":"user","content":"Hi"}],"stream":true})";
  Reply reply = Send(mock.port(), "POST", "/api/chat", body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  ollama::OllamaProvider ollama;
  anthropic::AnthropicProvider anthropic;
  const Translated translated = Translate(ollama, anthropic, reply.body);

  std::string text;
  json::value final_delta;
  stream::SseParser parser;
  Status fed = parser.Feed(translated.out, [&](const stream::SseEvent& event) {
    json::value data = json::parse(event.data);
    if (event.event == "content_block_delta") text += data.at("delta").at("text").as_string();
    if (event.event == "message_delta") final_delta = data;
  });
  ASSERT_TRUE(fed.ok());
  std::string tokens;
  for (int i = 0; i < kTokens; ++i) tokens += "tok" + std::to_string(i) + " ";
  EXPECT_EQ(text, tokens);
  EXPECT_EQ(final_delta.at("delta").at("stop_reason"), "end_turn");
  EXPECT_EQ(final_delta.at("usage").at("output_tokens"), kTokens);
  EXPECT_EQ(translated.usage.completion_tokens, kTokens);
}

TEST(MockRoundTrip, GeminiToolStreamReadsAsOpenAiChunks) {
  RunningMock mock(Options());
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"Weather?"}]}],)"
                           R"("tools":[{"functionDeclarations":[{"name":"get_weather"}]}]})";
  Reply reply =
      Send(mock.port(), "POST", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", body,
           {{"x-mock-tool-call", "1"}, {"x-goog-api-key", "k"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  gemini::GeminiProvider gemini;
  openai::OpenAiProvider openai;
  const Translated translated = Translate(gemini, openai, reply.body);

  stream::ChatAccumulator accumulator;
  stream::SseParser parser;
  Status fed = parser.Feed(translated.out, [&](const stream::SseEvent& event) {
    EXPECT_NE(accumulator.Consume(event.data), stream::ChunkKind::kUnparsed) << event.data;
  });
  ASSERT_TRUE(fed.ok());
  EXPECT_TRUE(accumulator.done());
  ASSERT_EQ(accumulator.choices().size(), 1u);
  const stream::Choice& choice = accumulator.choices()[0];
  EXPECT_EQ(choice.role, "assistant");
  EXPECT_EQ(choice.finish_reason, "tool_calls");
  ASSERT_EQ(choice.tool_calls.size(), 1u);
  EXPECT_EQ(choice.tool_calls[0].name, "get_weather");
  EXPECT_TRUE(choice.tool_calls[0].id.starts_with("call_mock-")) << choice.tool_calls[0].id;
  EXPECT_EQ(json::parse(choice.tool_calls[0].arguments), json::parse(R"({"location":"Paris"})"));
  EXPECT_EQ(accumulator.usage().prompt_tokens, static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(accumulator.usage().completion_tokens, 5);  // the mock's tool reply counts 5 tokens
  EXPECT_EQ(translated.usage.prompt_tokens, accumulator.usage().prompt_tokens);
}

TEST(MockRoundTrip, GeminiTextStreamReadsAsAnthropicEvents) {
  mock::MockOptions options = Options();
  options.cached_tokens = 2;
  RunningMock mock(options);
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"Hi"}]}]})";
  Reply reply =
      Send(mock.port(), "POST", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", body);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  gemini::GeminiProvider gemini;
  anthropic::AnthropicProvider anthropic;
  const Translated translated = Translate(gemini, anthropic, reply.body);

  std::vector<std::string> types;
  std::string text;
  json::value final_delta;
  stream::SseParser parser;
  Status fed = parser.Feed(translated.out, [&](const stream::SseEvent& event) {
    json::value data = json::parse(event.data);
    types.emplace_back(event.event);
    if (event.event == "content_block_delta") text += data.at("delta").at("text").as_string();
    if (event.event == "message_delta") final_delta = data;
  });
  ASSERT_TRUE(fed.ok());
  std::vector<std::string> expected = {"message_start", "ping", "content_block_start"};
  for (int i = 0; i < kTokens; ++i) expected.push_back("content_block_delta");
  for (const char* type : {"content_block_stop", "message_delta", "message_stop"}) {
    expected.push_back(type);
  }
  EXPECT_EQ(types, expected);
  std::string tokens;
  for (int i = 0; i < kTokens; ++i) tokens += "tok" + std::to_string(i) + " ";
  EXPECT_EQ(text, tokens);
  EXPECT_EQ(final_delta.at("delta").at("stop_reason"), "end_turn");
  EXPECT_EQ(final_delta.at("usage").at("output_tokens"), kTokens);
  EXPECT_EQ(final_delta.at("usage").at("cache_read_input_tokens"), 2);
  EXPECT_EQ(final_delta.at("usage").at("input_tokens"), static_cast<int64_t>(body.size() / 4) - 2);
  EXPECT_EQ(translated.usage.cached_tokens, 2);
}

}  // namespace
}  // namespace turnpike::providers
