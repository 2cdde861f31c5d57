// A Cohere v2 Chat request body (messages, documents, tools, thinking...) as a client sends it,
// read into the pivot, then built for every upstream dialect; and its model spliced as the
// identity path does. Checks the pivot's string `model`.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::cohere::CohereProvider kCohere;
  turnpike::fuzz::ClientRequestToEveryUpstream(kCohere, turnpike::fuzz::AsText(data, size));
  return 0;
}
