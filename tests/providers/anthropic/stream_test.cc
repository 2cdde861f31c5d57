// Stream translation edge cases beyond the golden transcripts: malformed or unexpected
// upstream events end the client stream with an error in the client's dialect.
#include <gtest/gtest.h>

#include <string>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/translator.h"

namespace turnpike::providers {
namespace {

const anthropic::AnthropicProvider kAnthropic;
const openai::OpenAiProvider kOpenAi;

constexpr std::string_view kStart =
    "event: message_start\ndata: "
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",)"
    R"("content":[],"model":"claude","usage":{"input_tokens":3,"output_tokens":1}}})"
    "\n\n";

struct Outcome {
  std::string out;
  bool ok = true;  // every Translate succeeded
  TokenUsage usage;
};

Outcome Translate(const Provider& from, const Provider& to, std::string_view upstream) {
  StreamTranslator translator(from.NewDecoder(), to.NewEncoder(EncoderOptions{}));
  stream::SseParser parser;
  Outcome run;
  Status fed = parser.Feed(upstream, [&](const stream::SseEvent& event) {
    run.ok = translator.Translate(event, run.out).ok() && run.ok;
  });
  EXPECT_TRUE(fed.ok());
  translator.Finish(run.out);
  run.usage = translator.usage();
  return run;
}

std::string AnthropicEvent(std::string_view data) {
  return "event: x\ndata: " + std::string(data) + "\n\n";
}

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(AnthropicToOpenAi, TruncatedStreamEndsWithAnError) {
  Outcome run = Translate(kAnthropic, kOpenAi, kStart);
  EXPECT_TRUE(run.ok);
  EXPECT_NE(run.out.find(R"(data: {"error":{"message":"The upstream stream ended)"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("[DONE]"), std::string::npos);
}

TEST(AnthropicToOpenAi, ServerToolBlockIsNotDroppedSilently) {
  std::string upstream(kStart);
  upstream += AnthropicEvent(
      R"({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}})");
  Outcome run = Translate(kAnthropic, kOpenAi, upstream);
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.out.find("'server_tool_use' content block"), std::string::npos) << run.out;
  EXPECT_EQ(Count(run.out, R"("error")"), 1u) << "one error, then nothing";
}

TEST(AnthropicToOpenAi, DeltaForABlockThatIsNotOpenIsAnError) {
  std::string upstream(kStart);
  upstream += AnthropicEvent(
      R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}})");
  Outcome run = Translate(kAnthropic, kOpenAi, upstream);
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.out.find("not open"), std::string::npos) << run.out;
}

TEST(AnthropicToOpenAi, ContentBeforeMessageStartIsAnError) {
  Outcome run = Translate(kAnthropic, kOpenAi,
                          AnthropicEvent(R"({"type":"content_block_start","index":0,)"
                                         R"("content_block":{"type":"text","text":""}})"));
  EXPECT_FALSE(run.ok);
}

TEST(AnthropicToOpenAi, InvalidJsonAndBadEscapesAreErrors) {
  for (
      std::string_view data :
      {std::string_view(R"({"type":"content_block_delta",)"),
       std::string_view(
           R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\q"}})")}) {
    std::string upstream(kStart);
    upstream += AnthropicEvent(
        R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
    upstream += AnthropicEvent(data);
    Outcome run = Translate(kAnthropic, kOpenAi, upstream);
    EXPECT_FALSE(run.ok) << data;
    EXPECT_NE(run.out.find("not valid JSON"), std::string::npos) << run.out;
  }
}

TEST(AnthropicToOpenAi, UnknownEventTypesAndCommentsAreIgnored) {
  std::string upstream(kStart);
  upstream += ": a comment\n\n";
  upstream += AnthropicEvent(R"({"type":"some_future_event","x":1})");
  upstream += AnthropicEvent(R"({"type":"message_stop"})");
  Outcome run = Translate(kAnthropic, kOpenAi, upstream);
  EXPECT_TRUE(run.ok);
  EXPECT_NE(run.out.find("data: [DONE]"), std::string::npos) << run.out;
  EXPECT_EQ(run.usage.prompt_tokens, 3);
  EXPECT_EQ(run.usage.completion_tokens, 1);
}

TEST(OpenAiToAnthropic, InterleavedToolArgumentsEndTheStream) {
  std::string upstream;
  for (
      std::string_view delta :
      {R"({"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]})",
       R"({"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"g","arguments":""}}]})",
       R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})"}) {
    upstream += R"(data: {"id":"c","model":"m","choices":[{"index":0,"delta":)" +
                std::string(delta) + "}]}\n\n";
  }
  Outcome run = Translate(kOpenAi, kAnthropic, upstream);
  EXPECT_NE(run.out.find("event: error"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("message_stop"), std::string::npos);
}

TEST(OpenAiToAnthropic, InStreamErrorBecomesAnErrorEvent) {
  Outcome run = Translate(kOpenAi, kAnthropic,
                          "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n");
  EXPECT_EQ(run.out,
            "event: error\ndata: "
            R"({"type":"error","error":{"type":"api_error","message":"boom"}})"
            "\n\n");
}

TEST(OpenAiToAnthropic, SecondChoiceIsAnError) {
  Outcome run =
      Translate(kOpenAi, kAnthropic,
                R"(data: {"id":"c","model":"m","choices":[{"index":1,"delta":{"content":"x"}}]})"
                "\n\n");
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.out.find("event: error"), std::string::npos);
}

}  // namespace
}  // namespace turnpike::providers
