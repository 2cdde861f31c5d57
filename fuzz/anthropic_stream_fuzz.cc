// An Anthropic upstream stream (any bytes, split as SSE) decoded and rendered for every client
// dialect (OpenAI, Anthropic, Responses, Gemini, Cohere), reasoning events included, then ended
// as the relay ends it.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::anthropic::AnthropicProvider kFrom;
  turnpike::fuzz::TranslateForEveryClient(kFrom, turnpike::fuzz::AsText(data, size));
  return 0;
}
