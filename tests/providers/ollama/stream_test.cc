// Stream translation edge cases beyond the golden transcripts: malformed or unexpected lines
// end the client stream with an error in the client's dialect; tool calls, usage and the
// fields the decoder skips.
#include <gtest/gtest.h>

#include <string>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/translator.h"
#include "stream/ndjson_parser.h"

namespace turnpike::providers {
namespace {

const ollama::OllamaProvider kOllama;
const openai::OpenAiProvider kOpenAi;
const anthropic::AnthropicProvider kAnthropic;

constexpr std::string_view kText =
    R"({"model":"m","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false})"
    "\n";
constexpr std::string_view kDone =
    R"({"model":"m","created_at":"2024-01-01T00:00:01Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2})"
    "\n";

struct Outcome {
  std::string out;
  bool ok = true;  // every Translate succeeded
  TokenUsage usage;
  std::optional<ErrorCode> error;
};

Outcome Translate(std::string_view upstream, const Provider& client = kOpenAi) {
  StreamTranslator translator(kOllama.NewDecoder(), client.NewEncoder(EncoderOptions{}));
  stream::NdjsonParser parser;
  Outcome run;
  Status fed = parser.Feed(upstream, [&](const stream::SseEvent& event) {
    run.ok = translator.Translate(event, run.out).ok() && run.ok;
  });
  EXPECT_TRUE(fed.ok());
  translator.Finish(run.out);
  run.usage = translator.usage();
  run.error = translator.error();
  return run;
}

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(OllamaStream, TextThenDoneGivesRoleTextFinishAndUsage) {
  Outcome run = Translate(std::string(kText) + std::string(kDone));
  EXPECT_TRUE(run.ok);
  EXPECT_FALSE(run.error);
  EXPECT_EQ(Count(run.out, R"("role":"assistant")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, R"("content":"Hi")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, R"("finish_reason":"stop")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, "data: [DONE]"), 1u);
  EXPECT_EQ(run.usage.prompt_tokens, 5);
  EXPECT_EQ(run.usage.completion_tokens, 2);
  EXPECT_EQ(run.usage.cached_tokens, -1);
}

TEST(OllamaStream, ABodyEndingWithoutTheDoneLineIsAnError) {
  Outcome run = Translate(kText);
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(Count(run.out, R"("error")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, "[DONE]"), 0u);
}

TEST(OllamaStream, ALineThatIsNotJsonIsAnError) {
  Outcome run = Translate(std::string(kText) + "not json\n" + std::string(kDone));
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(Count(run.out, R"("finish_reason":"stop")"), 0u) << "nothing after the error";
}

TEST(OllamaStream, ALineAfterDoneIsAnError) {
  Outcome run = Translate(std::string(kDone) + std::string(kText));
  EXPECT_EQ(Count(run.out, R"("content":"Hi")"), 0u) << run.out;
}

TEST(OllamaStream, AnErrorLineEndsTheStreamInTheClientsDialect) {
  Outcome run = Translate(std::string(kText) + R"({"error":"boom \"x\""})" + "\n", kAnthropic);
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(Count(run.out, "event: error"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, R"(boom \"x\")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, "message_stop"), 0u);
}

TEST(OllamaStream, ToolCallsGetStableIndexesAndIdsAndWholeArguments) {
  const std::string calls =
      R"({"model":"m","created_at":"t","message":{"role":"assistant","content":"","tool_calls":[)"
      R"({"function":{"name":"a","arguments":{"x":[1, 2],"y":"é"}}},)"
      R"({"function":{"name":"b","arguments":"{\"z\":true}"}}]},"done":false})"
      "\n";
  Outcome run = Translate(calls + std::string(kDone));
  EXPECT_TRUE(run.ok) << run.out;
  EXPECT_EQ(Count(run.out, R"("index":0,"id":"call_0","type":"function","function":{"name":"a")"),
            1u)
      << run.out;
  EXPECT_EQ(Count(run.out, R"("index":1,"id":"call_1","type":"function","function":{"name":"b")"),
            1u)
      << run.out;
  EXPECT_EQ(Count(run.out, R"("arguments":"{\"x\":[1, 2],\"y\":\"é\"}")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, R"("arguments":"{\"z\":true}")"), 1u) << run.out;
  EXPECT_EQ(Count(run.out, R"("finish_reason":"tool_calls")"), 1u) << run.out;
}

TEST(OllamaStream, ThinkingBecomesReasoningContent) {
  const std::string thinking =
      R"({"model":"m","created_at":"t","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false})"
      "\n";
  Outcome run = Translate(thinking + std::string(kText) + std::string(kDone));
  EXPECT_TRUE(run.ok);
  EXPECT_EQ(Count(run.out, R"({"reasoning_content":"hmm"})"), 1u) << run.out;
  EXPECT_LT(run.out.find("hmm"), run.out.find(R"("content":"Hi")")) << run.out;
  EXPECT_EQ(Count(run.out, R"("content":"Hi")"), 1u) << run.out;
}

TEST(OllamaStream, DoneWithoutReasonIsStopAndLengthIsLength) {
  Outcome stop = Translate(R"({"model":"m","created_at":"t","done":true,"eval_count":1})"
                           "\n");
  EXPECT_EQ(Count(stop.out, R"("finish_reason":"stop")"), 1u) << stop.out;
  Outcome length = Translate(R"({"model":"m","created_at":"t","done":true,"done_reason":"length"})"
                             "\n");
  EXPECT_EQ(Count(length.out, R"("finish_reason":"length")"), 1u) << length.out;
}

}  // namespace
}  // namespace turnpike::providers
