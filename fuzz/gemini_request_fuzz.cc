// A Gemini GenerateContentRequest body (contents, parts, thought signatures, generationConfig,
// tools...) as a client sends it, read into the pivot, then built for every upstream dialect;
// and passed on as the identity path does. Checks the pivot's string `model`.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::gemini::GeminiProvider kGemini;
  turnpike::fuzz::ClientRequestToEveryUpstream(kGemini, turnpike::fuzz::AsText(data, size));
  return 0;
}
