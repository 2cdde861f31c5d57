// The Cohere dialect against the mock provider's /v2/chat, whose Cohere wire shapes are written
// independently (src/mock/cohere_render.*): its streams, answers and errors must read correctly.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "../../mock/mock_client.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/translator.h"
#include "stream/chat_accumulator.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;
using mock::testing::Reply;
using mock::testing::RunningMock;
using mock::testing::Send;

constexpr int kTokens = 5;
constexpr int64_t kCached = 3;

mock::MockOptions Options() {
  mock::MockOptions options;
  options.tokens = kTokens;
  options.cached_tokens = kCached;
  return options;
}

std::string Body(bool stream, bool tools) {
  std::string body = R"({"model":"command-test","messages":[{"role":"user","content":"Hi"}])";
  if (stream) body += R"(,"stream":true)";
  if (tools) {
    body += R"(,"tools":[{"type":"function","function":{"name":"get_weather",)"
            R"("parameters":{"type":"object"}}}])";
  }
  return body + "}";
}

std::string Translate(const Provider& to, std::string_view upstream, TokenUsage& usage) {
  EncoderOptions options;
  options.include_usage = true;
  const cohere::CohereProvider cohere;
  StreamTranslator translator(cohere.NewDecoder(), to.NewEncoder(options));
  stream::SseParser parser;
  std::string out;
  Status fed = parser.Feed(upstream, [&](const stream::SseEvent& event) {
    Status translated = translator.Translate(event, out);
    EXPECT_TRUE(translated.ok()) << translated.error().message;
  });
  EXPECT_TRUE(fed.ok());
  translator.Finish(out);
  EXPECT_FALSE(translator.error().has_value());
  usage = translator.usage();
  return out;
}

TEST(CohereMock, ToolStreamReadsAsOpenAiChunks) {
  RunningMock mock(Options());
  const std::string body = Body(true, true);
  Reply reply = Send(mock.port(), "POST", "/v2/chat", body, {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  TokenUsage usage;
  const std::string out = Translate(openai::OpenAiProvider(), reply.body, usage);

  stream::ChatAccumulator accumulator;
  stream::SseParser parser;
  Status fed = parser.Feed(out, [&](const stream::SseEvent& event) {
    EXPECT_NE(accumulator.Consume(event.data), stream::ChunkKind::kUnparsed) << event.data;
  });
  ASSERT_TRUE(fed.ok());
  EXPECT_TRUE(accumulator.done());
  ASSERT_EQ(accumulator.choices().size(), 1u);
  const stream::Choice& choice = accumulator.choices()[0];
  EXPECT_EQ(choice.finish_reason, "tool_calls");
  EXPECT_EQ(choice.content, "");  // the tool plan is not forwarded
  ASSERT_EQ(choice.tool_calls.size(), 1u);
  EXPECT_EQ(choice.tool_calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(choice.tool_calls[0].arguments), json::parse(R"({"location":"Paris"})"));
  // Priced by billed_units: the body-size estimate, not the template-inflated `tokens`.
  EXPECT_EQ(usage.prompt_tokens, static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(usage.cached_tokens, kCached);
  EXPECT_EQ(usage.completion_tokens, 5);  // the five argument fragments
}

TEST(CohereMock, TextStreamReadsAsAnthropicEvents) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", "/v2/chat", Body(true, false));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  TokenUsage usage;
  const std::string out = Translate(anthropic::AnthropicProvider(), reply.body, usage);
  std::string text;
  std::vector<std::string> types;
  stream::SseParser parser;
  Status fed = parser.Feed(out, [&](const stream::SseEvent& event) {
    types.emplace_back(event.event);
    json::value data = json::parse(event.data);
    if (event.event == "content_block_delta") text += data.at("delta").at("text").as_string();
  });
  ASSERT_TRUE(fed.ok());
  std::string tokens;
  for (int i = 0; i < kTokens; ++i) tokens += "tok" + std::to_string(i) + " ";
  EXPECT_EQ(text, tokens);
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "message_start");
  EXPECT_EQ(types.back(), "message_stop");
  EXPECT_EQ(usage.completion_tokens, kTokens);
}

TEST(CohereMock, WholeAnswerAndLength) {
  RunningMock mock(Options());
  const std::string body = Body(false, false);
  Reply reply = Send(mock.port(), "POST", "/v2/chat", body, {{"x-mock-tokens", "2"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  Result<Response> response = cohere::CohereProvider().ParseResponse(reply.body);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->text, "tok0 tok1 ");
  EXPECT_EQ(response->finish, FinishReason::kStop);
  EXPECT_EQ(response->usage.prompt_tokens, static_cast<int64_t>(body.size() / 4));
  EXPECT_EQ(response->usage.completion_tokens, 2);

  Reply cut = Send(mock.port(), "POST", "/v2/chat",
                   R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"Hi"}]})");
  ASSERT_EQ(cut.status, 200u) << cut.body;
  EXPECT_EQ(cohere::CohereProvider().ParseResponse(cut.body)->finish, FinishReason::kLength);
}

TEST(CohereMock, FaultsAreCohereErrors) {
  RunningMock mock(Options());
  Reply limited =
      Send(mock.port(), "POST", "/v2/chat", Body(false, false), {{"x-mock-fault", "429"}});
  EXPECT_EQ(limited.status, 429u);
  Error error = cohere::CohereProvider().ParseError(static_cast<int>(limited.status), limited.body);
  EXPECT_EQ(error.code, ErrorCode::kRateLimited);
  EXPECT_NE(error.message.find("Rate limit"), std::string::npos) << limited.body;
  Reply bad = Send(mock.port(), "POST", "/v2/chat", R"({"model":"m"})");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_TRUE(json::parse(bad.body).as_object().contains("message")) << bad.body;
}

}  // namespace
}  // namespace turnpike::providers
