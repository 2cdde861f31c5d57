// Helpers shared by the fuzz targets (fuzz/ only): feeding bytes through a dialect pair's stream
// translation, and a request through every upstream dialect's BuildRequest.
//
// A target only drives code; libFuzzer, ASan and UBSan find the bugs (a crash, an out-of-bounds
// read, undefined behaviour). Results are not checked here: every outcome but a crash is fine.
#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/translator.h"
#include "stream/sse_parser.h"

namespace turnpike::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The upstream stream `bytes` from `from`, split by the SSE parser, translated for `to`, then
// ended as the relay ends it.
inline void TranslateStream(const providers::Provider& from, const providers::Provider& to,
                            std::string_view bytes) {
  providers::EncoderOptions options;
  options.include_usage = true;
  providers::StreamTranslator translator(from.NewDecoder(), to.NewEncoder(options));
  stream::SseParser parser;
  std::string out;
  Status fed = parser.Feed(bytes, [&](const stream::SseEvent& event) {
    Status translated = translator.Translate(event, out);
    (void)translated;
  });
  (void)fed;
  translator.Finish(out);
}

// The upstream stream `bytes` from `from`, translated for every client dialect's encoder
// (OpenAI, Anthropic, Responses, Gemini, Cohere): each stream target is this one call.
inline void TranslateForEveryClient(const providers::Provider& from, std::string_view bytes) {
  static const providers::openai::OpenAiProvider kOpenAi;
  static const providers::anthropic::AnthropicProvider kAnthropic;
  static const providers::openai_responses::ResponsesProvider kResponses;
  static const providers::gemini::GeminiProvider kGemini;
  static const providers::cohere::CohereProvider kCohere;
  for (const providers::Provider* client : {static_cast<const providers::Provider*>(&kOpenAi),
                                            static_cast<const providers::Provider*>(&kAnthropic),
                                            static_cast<const providers::Provider*>(&kResponses),
                                            static_cast<const providers::Provider*>(&kGemini),
                                            static_cast<const providers::Provider*>(&kCohere)}) {
    TranslateStream(from, *client, bytes);
  }
}

// The pivot `chat` built for each upstream dialect this harness links (OpenAI, Anthropic,
// Gemini, Cohere, Responses).
inline void BuildForEveryUpstream(const boost::json::object& chat) {
  static const providers::openai::OpenAiProvider kOpenAi;
  static const providers::anthropic::AnthropicProvider kAnthropic;
  static const providers::gemini::GeminiProvider kGemini;
  static const providers::cohere::CohereProvider kCohere;
  static const providers::openai_responses::ResponsesProvider kResponses;
  providers::UpstreamRequestOptions options;
  options.upstream_model = "fuzz-model";
  options.default_max_tokens = 4096;
  const providers::Provider* const upstreams[] = {&kOpenAi, &kAnthropic, &kGemini, &kCohere,
                                                  &kResponses};
  for (const providers::Provider* upstream : upstreams) {
    Result<std::string> body = upstream->BuildRequest(chat, options);
    (void)body;
  }
}

// A client's request `body` in `client`'s dialect as the LLM door takes it: read into the pivot,
// which must then hold a string `model` (the door reads it), built for every upstream dialect;
// and spliced for a deployment of the client's own dialect (the identity path). Returns whether
// the pivot was read (the door answers 400 otherwise and goes no further).
inline bool ClientRequestToEveryUpstream(const providers::Provider& client, std::string_view body) {
  Result<boost::json::object> pivot = client.ParseRequest(body);
  if (!pivot.ok()) return false;
  const boost::json::value* model = pivot.value().if_contains("model");
  if (model == nullptr || !model->is_string()) __builtin_trap();
  BuildForEveryUpstream(pivot.value());
  Result<std::string> identity = client.IdentityBody(body, "fuzz-model");
  (void)identity;
  return true;
}

}  // namespace turnpike::fuzz
