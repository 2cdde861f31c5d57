// Steady-state stream translation allocates nothing per chunk: counted with a replaced global
// operator new (counts, never timings).
#include <gtest/gtest.h>

#include <string>

#include "counting_new.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/translator.h"
#include "stream/ndjson_parser.h"

namespace turnpike::providers {
namespace {

constexpr int kWarmup = 8;
constexpr int kCounted = 200;

const std::string kAnthropicOpen =
    "event: message_start\ndata: "
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",)"
    R"("content":[],"model":"claude","usage":{"input_tokens":3,"output_tokens":1}}})"
    "\n\n"
    "event: content_block_start\ndata: "
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
    "\n\n";
const std::string kAnthropicText =
    "event: content_block_delta\ndata: "
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" w\"o\n"}})"
    "\n\n";
// Reasoning: an Anthropic thinking block's deltas; OpenAI-compatible reasoning_content chunks.
const std::string kAnthropicThinkingOpen =
    "event: message_start\ndata: "
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",)"
    R"("content":[],"model":"claude","usage":{"input_tokens":3,"output_tokens":1}}})"
    "\n\n"
    "event: content_block_start\ndata: "
    R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking",)"
    R"("thinking":"","signature":""}})"
    "\n\n";
const std::string kAnthropicThinking =
    "event: content_block_delta\ndata: "
    R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta",)"
    R"("thinking":" 3 \u00d7 \"7\"\n"}})"
    "\n\n";
const std::string kAnthropicSignature =
    "event: content_block_delta\ndata: "
    R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta",)"
    R"("signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}})"
    "\n\n";
const std::string kOpenAiReasoningOpen =
    "data: "
    R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,)"
    R"("delta":{"role":"assistant","content":null,"reasoning_content":""},"finish_reason":null}]})"
    "\n\n";
const std::string kOpenAiReasoning =
    "data: "
    R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,)"
    R"("delta":{"content":null,"reasoning_content":" 3 \u00d7 \"7\"\n"},"finish_reason":null}]})"
    "\n\n";
const std::string kOpenAiToolArgs =
    "data: "
    R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,)"
    R"("delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]},)"
    R"("finish_reason":null}]})"
    "\n\n";
const std::string kOpenAiToolOpen =
    "data: "
    R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,)"
    R"("delta":{"role":"assistant","tool_calls":[{"index":0,"id":"t","type":"function",)"
    R"("function":{"name":"f","arguments":""}}]},"finish_reason":null}]})"
    "\n\n";

const std::string kOllamaOpen =
    R"({"model":"llama3.2","created_at":"2024-01-01T00:00:00.123456789Z","message":)"
    R"({"role":"assistant","content":"Hi"},"done":false})"
    "\n";
const std::string kOllamaText =
    R"({"model":"llama3.2","created_at":"2024-01-01T00:00:00.223456789Z","message":)"
    R"({"role":"assistant","content":" w\"o\n"},"done":false})"
    "\n";
const std::string kOllamaToolCall =
    R"({"model":"llama3.2","created_at":"2024-01-01T00:00:00.323456789Z","message":)"
    R"({"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather",)"
    R"("arguments":{"location":"Paris, \"FR\"","format":"celsius"}}}]},"done":false})"
    "\n";
const std::string kCohereOpen =
    "event: message-start\ndata: "
    R"({"id":"m-1","type":"message-start","delta":{"message":{"role":"assistant","content":[],)"
    R"("tool_plan":"","tool_calls":[],"citations":[]}}})"
    "\n\n";
const std::string kCohereText =
    "event: content-delta\ndata: "
    R"({"type":"content-delta","index":0,"delta":{"message":{"content":{"text":" w\"o\n"}}}})"
    "\n\n";
const std::string kCohereToolOpen =
    kCohereOpen +
    "event: tool-call-start\ndata: "
    R"({"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c1",)"
    R"("type":"function","function":{"name":"f","arguments":""}}}}})"
    "\n\n";
const std::string kCohereToolArgs =
    "event: tool-call-delta\ndata: "
    R"({"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":{"function":)"
    R"({"arguments":"{\"a\":"}}}}})"
    "\n\n";
// Gemini: every chunk is a whole GenerateContentResponse (text, or a whole function call).
const std::string kGeminiOpen =
    "data: "
    R"({"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],)"
    R"("usageMetadata":{"promptTokenCount":3,"totalTokenCount":3},)"
    R"("modelVersion":"gemini-2.5-flash","responseId":"fHkmaKz2MZ2dz7IP-ZqpiAM"})"
    "\r\n\r\n";
const std::string kGeminiText =
    "data: "
    R"({"candidates": [{"content": {"parts": [{"text": " w\"o\n"}],"role": "model"},"index": 0}],)"
    R"("usageMetadata": {"promptTokenCount": 3,"totalTokenCount": 3},)"
    R"("modelVersion": "gemini-2.5-flash","responseId": "fHkmaKz2MZ2dz7IP-ZqpiAM"})"
    "\r\n\r\n";
const std::string kGeminiCall =
    "data: "
    R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather",)"
    R"("args":{"location":"Paris, \"FR\"","days":[1,2]}}}],"role":"model"},"index":0}],)"
    R"("usageMetadata":{"promptTokenCount":3,"totalTokenCount":3},)"
    R"("modelVersion":"gemini-2.5-flash","responseId":"fHkmaKz2MZ2dz7IP-ZqpiAM"})"
    "\r\n\r\n";

// Gemini 3: the call's thoughtSignature (a few hundred base64 characters) rides in the call id.
const std::string kGeminiSignedCall =
    "data: "
    R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather",)"
    R"("args":{"location":"Paris"}},"thoughtSignature":")" +
    std::string(299, 'Q') +
    R"(+/w=="}],"role":"model"},"index":0}],)"
    R"("usageMetadata":{"promptTokenCount":3,"totalTokenCount":3},)"
    R"("modelVersion":"gemini-3-pro-preview","responseId":"fHkmaKz2MZ2dz7IP-ZqpiAM"})"
    "\r\n\r\n";
// Gemini with includeThoughts: thought summary parts.
const std::string kGeminiThought =
    "data: "
    R"({"candidates":[{"content":{"parts":[{"text":" 3 \u00d7 \"7\"\n","thought":true}],)"
    R"("role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3,"totalTokenCount":9,)"
    R"("thoughtsTokenCount":6},"modelVersion":"gemini-2.5-flash","responseId":"r"})"
    "\r\n\r\n";
const std::string kOllamaThinking =
    R"({"model":"qwen3","created_at":"2024-01-01T00:00:00.223456789Z","message":)"
    R"({"role":"assistant","content":"","thinking":" 3 \u00d7 \"7\"\n"},"done":false})"
    "\n";
const std::string kCohereThinking =
    "event: content-delta\ndata: "
    R"({"type":"content-delta","index":0,"delta":{"message":{"content":{"thinking":" w\"o\n"}}}})"
    "\n\n";
// The Responses API as an upstream: response.created, a message item, then text deltas; or a
// function_call item, then argument deltas.
const std::string kResponsesOpen =
    "event: response.created\ndata: "
    R"({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":)"
    R"("response","status":"in_progress","model":"gpt-4.1","output":[],"usage":null}})"
    "\n\n"
    "event: response.output_item.added\ndata: "
    R"({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":)"
    R"({"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}})"
    "\n\n";
const std::string kResponsesText =
    "event: response.output_text.delta\ndata: "
    R"({"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1",)"
    R"("output_index":0,"content_index":0,"delta":" w\"o\n","logprobs":[]})"
    "\n\n";
const std::string kResponsesToolOpen =
    "event: response.created\ndata: "
    R"({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"m"}})"
    "\n\n"
    "event: response.output_item.added\ndata: "
    R"({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":)"
    R"({"id":"fc_1","type":"function_call","status":"in_progress","arguments":"",)"
    R"("call_id":"call_1","name":"f"}})"
    "\n\n";
const std::string kResponsesToolArgs =
    "event: response.function_call_arguments.delta\ndata: "
    R"({"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_1",)"
    R"("output_index":0,"delta":"{\"a\":"})"
    "\n\n";

// A Gemini client's body asking for thoughts (the Gemini encoder renders reasoning only then).
const std::string kGeminiThoughtsBody =
    R"({"contents":[],"generationConfig":{"thinkingConfig":{"includeThoughts":true}}})";

size_t AllocationsPerChunk(const Provider& from, const Provider& to, const std::string& open,
                           const std::string& chunk, std::string_view client_body = {}) {
  EncoderOptions options;
  options.include_usage = true;
  options.client_body = client_body;
  StreamTranslator translator(from.NewDecoder(), to.NewEncoder(options));
  stream::SseParser sse;
  stream::NdjsonParser ndjson;
  const bool lines = from.stream_framing() == StreamFraming::kNdjson;
  std::string out;
  auto feed = [&](const std::string& bytes) {
    auto on_event = [&](const stream::SseEvent& event) {
      Status translated = translator.Translate(event, out);
      EXPECT_TRUE(translated.ok());
    };
    Status fed = lines ? ndjson.Feed(bytes, on_event) : sse.Feed(bytes, on_event);
    EXPECT_TRUE(fed.ok());
    out.clear();
  };
  feed(open);
  for (int i = 0; i < kWarmup; ++i) feed(chunk);
  testing::StartCountingAllocations();
  for (int i = 0; i < kCounted; ++i) feed(chunk);
  const size_t counted = testing::StopCountingAllocations();
  EXPECT_FALSE(translator.ended());
  return counted;
}

TEST(TranslateAllocations, AnthropicToOpenAiTextAllocatesNothing) {
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(anthropic, openai, kAnthropicOpen, kAnthropicText), 0u);
}

TEST(TranslateAllocations, OpenAiToAnthropicToolArgumentsAllocateNothing) {
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(openai, anthropic, kOpenAiToolOpen, kOpenAiToolArgs), 0u);
}

TEST(TranslateAllocations, OllamaToOpenAiAndAnthropicTextAllocatesNothing) {
  const ollama::OllamaProvider ollama;
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_EQ(AllocationsPerChunk(ollama, openai, kOllamaOpen, kOllamaText), 0u);
  EXPECT_EQ(AllocationsPerChunk(ollama, anthropic, kOllamaOpen, kOllamaText), 0u);
}

TEST(TranslateAllocations, OllamaToOpenAiToolCallsAllocateNothing) {
  const ollama::OllamaProvider ollama;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(ollama, openai, kOllamaOpen, kOllamaToolCall), 0u);
}

TEST(TranslateAllocations, CohereToOpenAiTextAllocatesNothing) {
  const cohere::CohereProvider cohere;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(cohere, openai, kCohereOpen, kCohereText), 0u);
}

TEST(TranslateAllocations, CohereToAnthropicToolArgumentsAllocateNothing) {
  const cohere::CohereProvider cohere;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_EQ(AllocationsPerChunk(cohere, anthropic, kCohereToolOpen, kCohereToolArgs), 0u);
}

TEST(TranslateAllocations, GeminiToOpenAiTextAllocatesNothing) {
  const gemini::GeminiProvider gemini;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(gemini, openai, kGeminiOpen, kGeminiText), 0u);
}

TEST(TranslateAllocations, GeminiFunctionCallsAllocateNothing) {
  const gemini::GeminiProvider gemini;
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_EQ(AllocationsPerChunk(gemini, openai, kGeminiOpen, kGeminiCall), 0u);
  EXPECT_EQ(AllocationsPerChunk(gemini, anthropic, kGeminiOpen, kGeminiCall), 0u);
}

TEST(TranslateAllocations, GeminiSignedFunctionCallsAllocateNothing) {
  const gemini::GeminiProvider gemini;
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_EQ(AllocationsPerChunk(gemini, openai, kGeminiOpen, kGeminiSignedCall), 0u);
  EXPECT_EQ(AllocationsPerChunk(gemini, anthropic, kGeminiOpen, kGeminiSignedCall), 0u);
}

TEST(TranslateAllocations, AnthropicThinkingToOpenAiAllocatesNothing) {
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(anthropic, openai, kAnthropicThinkingOpen, kAnthropicThinking), 0u);
  EXPECT_EQ(AllocationsPerChunk(anthropic, openai, kAnthropicThinkingOpen, kAnthropicSignature),
            0u);
}

TEST(TranslateAllocations, OpenAiReasoningToAnthropicAllocatesNothing) {
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  EXPECT_EQ(AllocationsPerChunk(openai, anthropic, kOpenAiReasoningOpen, kOpenAiReasoning), 0u);
}

TEST(TranslateAllocations, GeminiOllamaAndCohereReasoningAllocatesNothing) {
  const gemini::GeminiProvider gemini;
  const ollama::OllamaProvider ollama;
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_EQ(AllocationsPerChunk(gemini, anthropic, kGeminiThought, kGeminiThought), 0u);
  EXPECT_EQ(AllocationsPerChunk(gemini, openai, kGeminiThought, kGeminiThought), 0u);
  EXPECT_EQ(AllocationsPerChunk(ollama, anthropic, kOllamaThinking, kOllamaThinking), 0u);
  EXPECT_EQ(AllocationsPerChunk(ollama, openai, kOllamaThinking, kOllamaThinking), 0u);
  const cohere::CohereProvider cohere;
  EXPECT_EQ(AllocationsPerChunk(cohere, anthropic, kCohereOpen, kCohereThinking), 0u);
  EXPECT_EQ(AllocationsPerChunk(cohere, openai, kCohereOpen, kCohereThinking), 0u);
}

TEST(TranslateAllocations, ReasoningIntoGeminiAndCohereClientsAllocatesNothing) {
  const anthropic::AnthropicProvider anthropic;
  const openai::OpenAiProvider openai;
  const gemini::GeminiProvider gemini;
  const cohere::CohereProvider cohere;
  EXPECT_EQ(AllocationsPerChunk(anthropic, gemini, kAnthropicThinkingOpen, kAnthropicThinking,
                                kGeminiThoughtsBody),
            0u);
  EXPECT_EQ(AllocationsPerChunk(anthropic, gemini, kAnthropicThinkingOpen, kAnthropicSignature,
                                kGeminiThoughtsBody),
            0u);
  EXPECT_EQ(AllocationsPerChunk(openai, gemini, kOpenAiReasoningOpen, kOpenAiReasoning,
                                kGeminiThoughtsBody),
            0u);
  EXPECT_EQ(AllocationsPerChunk(anthropic, cohere, kAnthropicThinkingOpen, kAnthropicThinking), 0u);
  EXPECT_EQ(AllocationsPerChunk(openai, cohere, kOpenAiReasoningOpen, kOpenAiReasoning), 0u);
  EXPECT_EQ(AllocationsPerChunk(gemini, cohere, kGeminiThought, kGeminiThought), 0u);
}

// The counter works: a translator built inside the counted window allocates.
TEST(TranslateAllocations, CounterSeesAllocations) {
  const anthropic::AnthropicProvider anthropic;
  testing::StartCountingAllocations();
  auto decoder = anthropic.NewDecoder();
  EXPECT_GT(testing::StopCountingAllocations(), 0u);
}

TEST(TranslateAllocations, ResponsesToOpenAiAndAnthropicAllocatesNothing) {
  const openai_responses::ResponsesProvider responses;
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  EXPECT_EQ(AllocationsPerChunk(responses, openai, kResponsesOpen, kResponsesText), 0u);
  EXPECT_EQ(AllocationsPerChunk(responses, anthropic, kResponsesOpen, kResponsesText), 0u);
  EXPECT_EQ(AllocationsPerChunk(responses, openai, kResponsesToolOpen, kResponsesToolArgs), 0u);
}

// The Gemini and Cohere client roles: their encoders, fed by every other upstream dialect.
const std::string kOpenAiText =
    "data: "
    R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,)"
    R"("delta":{"content":" w\"o\n"},"finish_reason":null}]})"
    "\n\n";

TEST(TranslateAllocations, EveryUpstreamToGeminiAndCohereClientsTextAllocatesNothing) {
  const openai::OpenAiProvider openai;
  const anthropic::AnthropicProvider anthropic;
  const ollama::OllamaProvider ollama;
  const cohere::CohereProvider cohere;
  const gemini::GeminiProvider gemini;
  const openai_responses::ResponsesProvider responses;
  for (const Provider* client : std::initializer_list<const Provider*>{&gemini, &cohere}) {
    SCOPED_TRACE(std::string(client->name()));
    EXPECT_EQ(AllocationsPerChunk(openai, *client, kOpenAiToolOpen, kOpenAiText), 0u);
    EXPECT_EQ(AllocationsPerChunk(anthropic, *client, kAnthropicOpen, kAnthropicText), 0u);
    EXPECT_EQ(AllocationsPerChunk(ollama, *client, kOllamaOpen, kOllamaText), 0u);
    EXPECT_EQ(AllocationsPerChunk(responses, *client, kResponsesOpen, kResponsesText), 0u);
  }
  EXPECT_EQ(AllocationsPerChunk(cohere, gemini, kCohereOpen, kCohereText), 0u);
  EXPECT_EQ(AllocationsPerChunk(gemini, cohere, kGeminiOpen, kGeminiText), 0u);
}

// Argument fragments: Cohere streams them on; Gemini gathers them into one functionCall (its
// buffer is reserved when the first call opens). Whole calls per chunk (Ollama, Gemini) too.
TEST(TranslateAllocations, ToolCallsToGeminiAndCohereClientsAllocateNothing) {
  const openai::OpenAiProvider openai;
  const ollama::OllamaProvider ollama;
  const cohere::CohereProvider cohere;
  const gemini::GeminiProvider gemini;
  const openai_responses::ResponsesProvider responses;
  for (const Provider* client : std::initializer_list<const Provider*>{&gemini, &cohere}) {
    SCOPED_TRACE(std::string(client->name()));
    EXPECT_EQ(AllocationsPerChunk(openai, *client, kOpenAiToolOpen, kOpenAiToolArgs), 0u);
    EXPECT_EQ(AllocationsPerChunk(responses, *client, kResponsesToolOpen, kResponsesToolArgs), 0u);
    EXPECT_EQ(AllocationsPerChunk(ollama, *client, kOllamaOpen, kOllamaToolCall), 0u);
  }
  EXPECT_EQ(AllocationsPerChunk(cohere, gemini, kCohereToolOpen, kCohereToolArgs), 0u);
  EXPECT_EQ(AllocationsPerChunk(gemini, cohere, kGeminiOpen, kGeminiCall), 0u);
}

}  // namespace
}  // namespace turnpike::providers
