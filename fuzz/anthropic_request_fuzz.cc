// An Anthropic Messages request body (thinking, thinking and redacted_thinking blocks among the
// rest) read into the pivot, then built for every upstream dialect.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::anthropic::AnthropicProvider kAnthropic;
  turnpike::Result<boost::json::object> pivot =
      kAnthropic.ParseRequest(turnpike::fuzz::AsText(data, size));
  if (pivot.ok()) turnpike::fuzz::BuildForEveryUpstream(pivot.value());
  return 0;
}
