// An OpenAI chat request body (the pivot itself: reasoning_effort, reasoning_content and the
// gateway's signature fields among the rest) built for every upstream dialect.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::openai::OpenAiProvider kOpenAi;
  turnpike::Result<boost::json::object> pivot =
      kOpenAi.ParseRequest(turnpike::fuzz::AsText(data, size));
  if (pivot.ok()) turnpike::fuzz::BuildForEveryUpstream(pivot.value());
  return 0;
}
