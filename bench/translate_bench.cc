// Dialect translation per stream chunk (issue 5 bar: <= 0.5 us per chunk), next to the
// identity path, which frames the same event with the SseParser and forwards its bytes. Ollama's
// NDJSON lines are split by stream::NdjsonParser.
//
//   ninja -C build bench/translate_bench && build/bench/translate_bench
//
// Each iteration feeds one upstream SSE event (one event per read, the usual shape of a
// token stream) to a stream that is already open, and appends the client's bytes to an
// output buffer that is cleared after each event, as the relay does after each write.
#include <benchmark/benchmark.h>

#include <string>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/translator.h"
#include "stream/ndjson_parser.h"
#include "stream/sse_parser.h"

namespace turnpike::providers {
namespace {

// Anthropic: the events that open a message, then a typical text delta.
const std::string kAnthropicOpen =
    "event: message_start\ndata: "
    R"({"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message",)"
    R"("role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,)"
    R"("stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}})"
    "\n\n"
    "event: content_block_start\ndata: "
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
    "\n\n";
const std::string kAnthropicDelta =
    "event: content_block_delta\ndata: "
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}})"
    "\n\n";
const std::string kAnthropicToolOpen =
    "event: content_block_start\ndata: "
    R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use",)"
    R"("id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}})"
    "\n\n";
const std::string kAnthropicToolDelta =
    "event: content_block_delta\ndata: "
    R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",)"
    R"("partial_json":"{\"location\": \"San Fra"}})"
    "\n\n";

// Reasoning: an Anthropic thinking block's delta; an OpenAI-compatible reasoning_content chunk
// (DeepSeek / vLLM form).
const std::string kAnthropicThinkingOpen =
    kAnthropicOpen.substr(0, kAnthropicOpen.find("event: content_block_start")) +
    "event: content_block_start\ndata: "
    R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking",)"
    R"("thinking":"","signature":""}})"
    "\n\n";
const std::string kAnthropicThinkingDelta =
    "event: content_block_delta\ndata: "
    R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",)"
    R"("thinking":" so the"}})"
    "\n\n";
const std::string kOpenAiReasoningDelta =
    "data: "
    R"({"id":"0f9a7c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b","object":"chat.completion.chunk",)"
    R"("created":1718000000,"model":"deepseek-reasoner","system_fingerprint":"fp_a1b2c3d4e5",)"
    R"("choices":[{"index":0,"delta":{"content":null,"reasoning_content":" so the"},)"
    R"("logprobs":null,"finish_reason":null}]})"
    "\n\n";

// OpenAI: a typical content chunk (the same one stream_bench uses).
const std::string kOpenAiDelta =
    "data: "
    R"({"id":"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012","object":"chat.completion.chunk",)"
    R"("created":1718000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1",)"
    R"("choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]})"
    "\n\n";

// Ollama: one /api/chat NDJSON line per token (docs/api.md's streaming example).
const std::string kOllamaDelta =
    R"({"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00",)"
    R"("message":{"role":"assistant","content":" world"},"done":false})"
    "\n";
// Ollama with think: a thinking line.
const std::string kOllamaThinking =
    R"({"model":"qwen3","created_at":"2023-08-04T08:52:19.385406455-07:00",)"
    R"("message":{"role":"assistant","content":"","thinking":" so the"},"done":false})"
    "\n";
// Cohere v2: message-start and content-start, then a typical content-delta.
const std::string kCohereOpen =
    "event: message-start\ndata: "
    R"({"id":"29f14a5a-11de-4cae-9800-25e4747408ea","type":"message-start","delta":{"message":)"
    R"({"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}})"
    "\n\n"
    "event: content-start\ndata: "
    R"({"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}})"
    "\n\n";
const std::string kCohereDelta =
    "event: content-delta\ndata: "
    R"({"type":"content-delta","index":0,"delta":{"message":{"content":{"text":" world"}}}})"
    "\n\n";
// Gemini (alt=sse): every event is a whole GenerateContentResponse, usageMetadata included.
const std::string kGeminiDelta =
    "data: "
    R"({"candidates": [{"content": {"parts": [{"text": " world"}],"role": "model"},"index": 0}],)"
    R"("usageMetadata": {"promptTokenCount": 25,"totalTokenCount": 25,"promptTokensDetails": )"
    R"([{"modality": "TEXT","tokenCount": 25}]},"modelVersion": "gemini-2.5-flash",)"
    R"("responseId": "fHkmaKz2MZ2dz7IP-ZqpiAM"})"
    "\r\n\r\n";
// Cohere reasoning models: a content-delta of the thinking block.
const std::string kCohereThinking =
    "event: content-delta\ndata: "
    R"({"type":"content-delta","index":0,"delta":{"message":{"content":{"thinking":" so the"}}}})"
    "\n\n";
// Gemini with includeThoughts: a thought summary part (reasoning).
const std::string kGeminiThought =
    "data: "
    R"({"candidates": [{"content": {"parts": [{"text": " so the","thought": true}],)"
    R"("role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 25,)"
    R"("totalTokenCount": 25,"thoughtsTokenCount": 12},"modelVersion": "gemini-2.5-flash",)"
    R"("responseId": "fHkmaKz2MZ2dz7IP-ZqpiAM"})"
    "\r\n\r\n";

// The Responses API as an upstream: one response.output_text.delta per token.
const std::string kResponsesOpen =
    "event: response.created\ndata: "
    R"({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":)"
    R"("response","status":"in_progress","model":"gpt-4.1","output":[],"usage":null}})"
    "\n\n";
const std::string kResponsesDelta =
    "event: response.output_text.delta\ndata: "
    R"({"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1",)"
    R"("output_index":0,"content_index":0,"delta":" world","logprobs":[]})"
    "\n\n";

const anthropic::AnthropicProvider kAnthropic;
const ollama::OllamaProvider kOllama;
const openai::OpenAiProvider kOpenAi;
const openai_responses::ResponsesProvider kResponses;
const openai_completions::CompletionsProvider kCompletions;
const cohere::CohereProvider kCohere;
const gemini::GeminiProvider kGemini;

// Items per second, and its inverse: CPU seconds per chunk (shown as e.g. "280n").
void Report(benchmark::State& state, size_t event_bytes) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["per_chunk"] =
      benchmark::Counter(static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["event_bytes"] = static_cast<double>(event_bytes);
}

void BM_Identity(benchmark::State& state, const std::string& event) {
  stream::SseParser parser;
  std::string out;
  for (auto _ : state) {
    Status fed = parser.Feed(event, [&](const stream::SseEvent& e) { out.append(e.raw); });
    benchmark::DoNotOptimize(fed);
    benchmark::DoNotOptimize(out.data());
    out.clear();
  }
  Report(state, event.size());
}
BENCHMARK_CAPTURE(BM_Identity, anthropic_text, kAnthropicDelta);
BENCHMARK_CAPTURE(BM_Identity, openai_text, kOpenAiDelta);
BENCHMARK_CAPTURE(BM_Identity, cohere_text, kCohereDelta);
BENCHMARK_CAPTURE(BM_Identity, gemini_text, kGeminiDelta);

void BM_Translate(benchmark::State& state, const Provider& from, const Provider& to,
                  const std::string& open, const std::string& event,
                  std::string_view client_body = {}) {
  EncoderOptions options;
  options.created = 1718000000;
  options.include_usage = true;
  options.client_body = client_body;
  StreamTranslator translator(from.NewDecoder(), to.NewEncoder(options));
  stream::SseParser parser;
  stream::NdjsonParser lines;
  const bool ndjson = from.stream_framing() == StreamFraming::kNdjson;
  std::string out;
  auto feed = [&](const std::string& bytes) {
    auto on_event = [&](const stream::SseEvent& e) {
      Status translated = translator.Translate(e, out);
      benchmark::DoNotOptimize(translated);
    };
    return ndjson ? lines.Feed(bytes, on_event) : parser.Feed(bytes, on_event);
  };
  Status opened = feed(open);
  if (!opened.ok() || translator.ended()) {
    state.SkipWithError("the stream did not open");
    return;
  }
  out.clear();
  for (auto _ : state) {
    Status fed = feed(event);
    benchmark::DoNotOptimize(fed);
    benchmark::DoNotOptimize(out.data());
    out.clear();
  }
  if (translator.ended()) state.SkipWithError("the stream ended during the run");
  Report(state, event.size());
}
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_openai_text, kAnthropic, kOpenAi, kAnthropicOpen,
                  kAnthropicDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_openai_tool_args, kAnthropic, kOpenAi,
                  kAnthropicOpen.substr(0, kAnthropicOpen.find("event: content_block_start")) +
                      kAnthropicToolOpen,
                  kAnthropicToolDelta);
BENCHMARK_CAPTURE(BM_Translate, openai_to_anthropic_text, kOpenAi, kAnthropic, kOpenAiDelta,
                  kOpenAiDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_openai_reasoning, kAnthropic, kOpenAi,
                  kAnthropicThinkingOpen, kAnthropicThinkingDelta);
BENCHMARK_CAPTURE(BM_Translate, openai_to_anthropic_reasoning, kOpenAi, kAnthropic,
                  kOpenAiReasoningDelta, kOpenAiReasoningDelta);
BENCHMARK_CAPTURE(BM_Translate, gemini_to_anthropic_reasoning, kGemini, kAnthropic, kGeminiThought,
                  kGeminiThought);
BENCHMARK_CAPTURE(BM_Translate, gemini_to_openai_reasoning, kGemini, kOpenAi, kGeminiThought,
                  kGeminiThought);
BENCHMARK_CAPTURE(BM_Translate, cohere_to_anthropic_reasoning, kCohere, kAnthropic, kCohereOpen,
                  kCohereThinking);
BENCHMARK_CAPTURE(BM_Translate, cohere_to_openai_reasoning, kCohere, kOpenAi, kCohereOpen,
                  kCohereThinking);
BENCHMARK_CAPTURE(BM_Translate, ollama_to_anthropic_reasoning, kOllama, kAnthropic, kOllamaThinking,
                  kOllamaThinking);
BENCHMARK_CAPTURE(BM_Translate, ollama_to_openai_reasoning, kOllama, kOpenAi, kOllamaThinking,
                  kOllamaThinking);
// As for text, the Responses encoder keeps the reasoning text for its done events.
BENCHMARK_CAPTURE(BM_Translate, openai_to_responses_reasoning, kOpenAi, kResponses,
                  kOpenAiReasoningDelta, kOpenAiReasoningDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_responses_reasoning, kAnthropic, kResponses,
                  kAnthropicThinkingOpen, kAnthropicThinkingDelta);
BENCHMARK_CAPTURE(BM_Translate, ollama_to_openai_text, kOllama, kOpenAi, kOllamaDelta,
                  kOllamaDelta);
BENCHMARK_CAPTURE(BM_Translate, ollama_to_anthropic_text, kOllama, kAnthropic, kOllamaDelta,
                  kOllamaDelta);
// The Responses encoder keeps the answer's text for its done events, so here its message text
// grows by one delta per iteration (appends amortised, as in a long answer).
BENCHMARK_CAPTURE(BM_Translate, openai_to_responses_text, kOpenAi, kResponses, kOpenAiDelta,
                  kOpenAiDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_responses_text, kAnthropic, kResponses, kAnthropicOpen,
                  kAnthropicDelta);
BENCHMARK_CAPTURE(BM_Translate, responses_to_openai_text, kResponses, kOpenAi, kResponsesOpen,
                  kResponsesDelta);
BENCHMARK_CAPTURE(BM_Translate, responses_to_anthropic_text, kResponses, kAnthropic, kResponsesOpen,
                  kResponsesDelta);
BENCHMARK_CAPTURE(BM_Translate, openai_to_completions_text, kOpenAi, kCompletions, kOpenAiDelta,
                  kOpenAiDelta);
BENCHMARK_CAPTURE(BM_Translate, cohere_to_openai_text, kCohere, kOpenAi, kCohereOpen, kCohereDelta);
BENCHMARK_CAPTURE(BM_Translate, cohere_to_anthropic_text, kCohere, kAnthropic, kCohereOpen,
                  kCohereDelta);
BENCHMARK_CAPTURE(BM_Translate, gemini_to_openai_text, kGemini, kOpenAi, kGeminiDelta,
                  kGeminiDelta);
// The Gemini and Cohere client roles (their encoders), from every other upstream dialect.
BENCHMARK_CAPTURE(BM_Translate, openai_to_gemini_text, kOpenAi, kGemini, kOpenAiDelta,
                  kOpenAiDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_gemini_text, kAnthropic, kGemini, kAnthropicOpen,
                  kAnthropicDelta);
BENCHMARK_CAPTURE(BM_Translate, ollama_to_gemini_text, kOllama, kGemini, kOllamaDelta,
                  kOllamaDelta);
BENCHMARK_CAPTURE(BM_Translate, cohere_to_gemini_text, kCohere, kGemini, kCohereOpen, kCohereDelta);
BENCHMARK_CAPTURE(BM_Translate, responses_to_gemini_text, kResponses, kGemini, kResponsesOpen,
                  kResponsesDelta);
BENCHMARK_CAPTURE(BM_Translate, openai_to_cohere_text, kOpenAi, kCohere, kOpenAiDelta,
                  kOpenAiDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_cohere_text, kAnthropic, kCohere, kAnthropicOpen,
                  kAnthropicDelta);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_cohere_tool_args, kAnthropic, kCohere,
                  kAnthropicOpen.substr(0, kAnthropicOpen.find("event: content_block_start")) +
                      kAnthropicToolOpen,
                  kAnthropicToolDelta);
BENCHMARK_CAPTURE(BM_Translate, ollama_to_cohere_text, kOllama, kCohere, kOllamaDelta,
                  kOllamaDelta);
BENCHMARK_CAPTURE(BM_Translate, gemini_to_cohere_text, kGemini, kCohere, kGeminiDelta,
                  kGeminiDelta);
BENCHMARK_CAPTURE(BM_Translate, responses_to_cohere_text, kResponses, kCohere, kResponsesOpen,
                  kResponsesDelta);

// Reasoning into the Gemini and Cohere client APIs (a Gemini client that asked for thoughts).
const std::string kGeminiThoughtsBody =
    R"({"contents":[],"generationConfig":{"thinkingConfig":{"includeThoughts":true}}})";
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_gemini_reasoning, kAnthropic, kGemini,
                  kAnthropicThinkingOpen, kAnthropicThinkingDelta, kGeminiThoughtsBody);
BENCHMARK_CAPTURE(BM_Translate, openai_to_gemini_reasoning, kOpenAi, kGemini, kOpenAiReasoningDelta,
                  kOpenAiReasoningDelta, kGeminiThoughtsBody);
BENCHMARK_CAPTURE(BM_Translate, anthropic_to_cohere_reasoning, kAnthropic, kCohere,
                  kAnthropicThinkingOpen, kAnthropicThinkingDelta);
BENCHMARK_CAPTURE(BM_Translate, openai_to_cohere_reasoning, kOpenAi, kCohere, kOpenAiReasoningDelta,
                  kOpenAiReasoningDelta);
BENCHMARK_CAPTURE(BM_Translate, gemini_to_cohere_reasoning, kGemini, kCohere, kGeminiThought,
                  kGeminiThought);

}  // namespace
}  // namespace turnpike::providers
