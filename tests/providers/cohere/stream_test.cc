// Stream translation edge cases beyond the golden transcripts: malformed or unexpected upstream
// events, ignored events, usage fallbacks.
#include <gtest/gtest.h>

#include <string>

#include "providers/cohere/cohere_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/translator.h"

namespace turnpike::providers {
namespace {

const cohere::CohereProvider kCohere;
const openai::OpenAiProvider kOpenAi;

std::string Event(std::string_view type, std::string_view rest = "") {
  std::string out =
      "event: " + std::string(type) + "\ndata: {\"type\":\"" + std::string(type) + "\"";
  if (!rest.empty()) out += "," + std::string(rest);
  return out + "}\n\n";
}

const std::string kStart = Event("message-start", R"("id":"m-1","delta":{"message":{)"
                                                  R"("role":"assistant","content":[]}})");
std::string Text(std::string_view text) {
  return Event("content-delta", R"("index":0,"delta":{"message":{"content":{"text":")" +
                                    std::string(text) + "\"}}}");
}
std::string End(std::string_view finish, std::string_view usage) {
  return Event("message-end", R"("delta":{"finish_reason":")" + std::string(finish) + "\"" +
                                  (usage.empty() ? "" : ",\"usage\":" + std::string(usage)) + "}");
}

struct Outcome {
  std::string out;
  bool ok = true;  // every Translate succeeded
  TokenUsage usage;
  std::optional<ErrorCode> error;
  FinishReason finish = FinishReason::kNone;
};

Outcome Translate(std::string_view upstream) {
  EncoderOptions options;
  options.include_usage = true;
  StreamTranslator translator(kCohere.NewDecoder(), kOpenAi.NewEncoder(options));
  stream::SseParser parser;
  Outcome run;
  Status fed = parser.Feed(upstream, [&](const stream::SseEvent& event) {
    run.ok = translator.Translate(event, run.out).ok() && run.ok;
  });
  EXPECT_TRUE(fed.ok());
  translator.Finish(run.out);
  run.usage = translator.usage();
  run.error = translator.error();
  run.finish = translator.finish();
  return run;
}

bool Has(const std::string& text, std::string_view what) {
  return text.find(what) != std::string::npos;
}

TEST(CohereStream, TruncatedStreamEndsWithAnError) {
  Outcome run = Translate(kStart + Text("Hel"));
  EXPECT_TRUE(run.ok);
  EXPECT_TRUE(Has(run.out, R"("content":"Hel")")) << run.out;
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
  EXPECT_FALSE(Has(run.out, "[DONE]")) << run.out;
}

TEST(CohereStream, TimeoutFinishIsAnUpstreamTimeout) {
  Outcome run = Translate(kStart + Text("a") + End("TIMEOUT", ""));
  EXPECT_EQ(run.error, ErrorCode::kUpstreamTimeout);
  EXPECT_TRUE(Has(run.out, R"("code":"upstream_timeout")")) << run.out;
  EXPECT_FALSE(Has(run.out, R"("finish_reason":"stop")")) << run.out;
}

TEST(CohereStream, ContentBeforeMessageStartIsRefused) {
  Outcome run = Translate(Text("x"));
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
}

TEST(CohereStream, ToolDeltaBeforeToolStartIsRefused) {
  Outcome run = Translate(kStart + Event("tool-call-delta", R"("index":0,"delta":{"message":)"
                                                            R"({"tool_calls":{"function":)"
                                                            R"({"arguments":"{}"}}}})"));
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
}

// Found by fuzz_cohere_stream: a count no int64 holds was converted anyway (undefined).
TEST(CohereStream, AUsageCountPastInt64IsRefused) {
  for (const std::string count : {"5.1e116", "9223372036854775808", "-1e19"}) {
    Outcome run = Translate(
        kStart + Text("hi") +
        End("COMPLETE", R"({"tokens":{"input_tokens":)" + count + R"(,"output_tokens":1}})"));
    EXPECT_FALSE(run.ok) << count;
    EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse) << count;
  }
  Outcome fits = Translate(kStart + Text("hi") +
                           End("COMPLETE", R"({"tokens":{"input_tokens":1e3,"output_tokens":2}})"));
  EXPECT_TRUE(fits.ok);
  EXPECT_EQ(fits.usage.prompt_tokens, 1000);
}

TEST(CohereStream, NotJsonIsRefused) {
  Outcome run = Translate(kStart + "event: content-delta\ndata: {oops\n\n");
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error, ErrorCode::kUpstreamBadResponse);
}

TEST(CohereStream, ThinkingIsReasoningPlanCitationsDebugAndUnknownEventsAreNotForwarded) {
  Outcome run = Translate(
      kStart +
      Event("content-start",
            R"("index":0,"delta":{"message":{"content":{"type":"thinking","thinking":""}}})") +
      Event("content-delta", R"("index":0,"delta":{"message":{"content":{"thinking":"hmm"}}})") +
      Event("content-end", R"("index":0)") +
      Event("tool-plan-delta", R"("delta":{"message":{"tool_plan":"secret plan"}})") +
      Event("citation-start", R"("index":0,"delta":{"message":{"citations":{"start":0}}})") +
      Event("citation-end", R"("index":0)") + Event("debug", R"("prompt":"p")") +
      Event("brand-new-event", R"("delta":{})") + Text("visible") +
      End("COMPLETE", R"({"billed_units":{"input_tokens":2,"output_tokens":1}})"));
  EXPECT_TRUE(run.ok);
  EXPECT_TRUE(Has(run.out, R"({"reasoning_content":"hmm"})")) << run.out;
  EXPECT_FALSE(Has(run.out, "secret plan")) << run.out;
  EXPECT_TRUE(Has(run.out, R"("content":"visible")")) << run.out;
  EXPECT_EQ(run.finish, FinishReason::kStop);
  EXPECT_FALSE(run.error.has_value());
}

TEST(CohereStream, UsageFallsBackToTokensAndReadsDoubles) {
  Outcome run = Translate(
      kStart + Text("x") +
      End("COMPLETE", R"({"tokens":{"input_tokens":70.0,"output_tokens":3},"cached_tokens":8})"));
  EXPECT_EQ(run.usage.prompt_tokens, 70);
  EXPECT_EQ(run.usage.completion_tokens, 3);
  EXPECT_EQ(run.usage.cached_tokens, 8);
  EXPECT_EQ(run.usage.cache_creation_tokens, -1);
}

TEST(CohereStream, BilledUnitsWinOverTokens) {
  Outcome run =
      Translate(kStart + Text("x") +
                End("MAX_TOKENS", R"({"billed_units":{"input_tokens":5,"output_tokens":1},)"
                                  R"("tokens":{"input_tokens":90,"output_tokens":2}})"));
  EXPECT_EQ(run.usage.prompt_tokens, 5);
  EXPECT_EQ(run.usage.completion_tokens, 1);
  EXPECT_EQ(run.finish, FinishReason::kLength);
  EXPECT_TRUE(Has(run.out, R"("finish_reason":"length")")) << run.out;
}

TEST(CohereStream, ArgumentsInToolCallStartAreForwarded) {
  Outcome run =
      Translate(kStart +
                Event("tool-call-start",
                      R"("index":0,"delta":{"message":{"tool_calls":{"id":"c1","type":"function",)"
                      R"("function":{"name":"f","arguments":"{\"a\":1}"}}}})") +
                End("TOOL_CALL", ""));
  EXPECT_TRUE(run.ok);
  EXPECT_TRUE(Has(run.out, R"("arguments":"{\"a\":1}")")) << run.out;
  EXPECT_EQ(run.finish, FinishReason::kToolCalls);
}

}  // namespace
}  // namespace turnpike::providers
