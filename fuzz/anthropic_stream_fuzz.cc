// A anthropic upstream stream (any bytes, split as SSE) decoded and rendered for the other
// dialects' clients (OpenAI, Anthropic, Responses), reasoning events included, then ended as
// the relay ends it.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::anthropic::AnthropicProvider kFrom;
  static const turnpike::providers::openai::OpenAiProvider kOpenAi;
  static const turnpike::providers::anthropic::AnthropicProvider kAnthropic;
  static const turnpike::providers::openai_responses::ResponsesProvider kResponses;
  const std::string_view bytes = turnpike::fuzz::AsText(data, size);
  turnpike::fuzz::TranslateStream(kFrom, kOpenAi, bytes);
  turnpike::fuzz::TranslateStream(kFrom, kAnthropic, bytes);
  turnpike::fuzz::TranslateStream(kFrom, kResponses, bytes);
  return 0;
}
