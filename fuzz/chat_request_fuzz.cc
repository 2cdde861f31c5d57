// An OpenAI chat request body (the pivot itself: reasoning_effort, reasoning_content and the
// gateway's signature fields among the rest) built for every upstream dialect. And the chat
// door's reading of the same bytes (providers/openai/chat_request.h): whatever ScanChatRequest,
// the one-pass reader, decides, ParseChatRequest (simdjson) must accept and read the same way,
// byte ranges included.
#include "fuzz_support.h"
#include "providers/openai/chat_request.h"

namespace {

namespace openai = turnpike::providers::openai;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckScanAgainstParse(std::string_view body) {
  openai::ChatRequestInfo fast;
  if (!openai::ScanChatRequest(body, fast)) return;
  const turnpike::Result<openai::ChatRequestInfo> slow = openai::ParseChatRequest(body);
  Check(slow.ok());
  const openai::ChatRequestInfo& s = slow.value();
  Check(fast.model == s.model && fast.stream == s.stream &&
        fast.has_stream_options == s.has_stream_options && fast.include_usage == s.include_usage &&
        fast.model_begin == s.model_begin && fast.model_end == s.model_end &&
        fast.stream_options_begin == s.stream_options_begin &&
        fast.stream_options_end == s.stream_options_end &&
        fast.include_usage_begin == s.include_usage_begin &&
        fast.include_usage_end == s.include_usage_end && fast.max_tokens == s.max_tokens);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const openai::OpenAiProvider kOpenAi;
  const std::string_view text = turnpike::fuzz::AsText(data, size);
  CheckScanAgainstParse(text);
  turnpike::Result<boost::json::object> pivot = kOpenAi.ParseRequest(text);
  if (pivot.ok()) turnpike::fuzz::BuildForEveryUpstream(pivot.value());
  return 0;
}
