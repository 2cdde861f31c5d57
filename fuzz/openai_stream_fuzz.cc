// An OpenAI upstream stream (any bytes, split as SSE) decoded and rendered for every client
// dialect (OpenAI, Anthropic, Responses, Gemini, Cohere), reasoning events included, then ended
// as the relay ends it. Besides crashes, checks the decoder's fast path: every payload that
// stream::ScanEscapedChunk decides, the decoder's simdjson read (ReadChunk) reads the same.
#include "fuzz_support.h"
#include "providers/openai/stream_codec.h"
#include "stream/chunk_scan.h"
#include "stream/padded_json.h"

namespace {

namespace stream = turnpike::stream;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckScanAgainstRead(std::string_view payload) {
  static stream::PaddedJsonParser parser;
  static stream::EscapedChunk fast, slow;
  static std::string scratch;
  fast.Clear();
  if (!stream::ScanEscapedChunk(payload, fast, scratch)) return;
  slow.Clear();
  turnpike::providers::openai::ChunkError error;
  Check(turnpike::providers::openai::ReadChunk(parser, payload, false, slow, error) ==
            simdjson::SUCCESS &&
        !error.present);
  Check(fast.id == slow.id && fast.model == slow.model && fast.content == slow.content &&
        fast.refusal == slow.refusal && fast.reasoning == slow.reasoning &&
        fast.finish_reason == slow.finish_reason && fast.has_usage == slow.has_usage &&
        fast.other_choice == slow.other_choice);
  Check(fast.usage.prompt_tokens == slow.usage.prompt_tokens &&
        fast.usage.completion_tokens == slow.usage.completion_tokens &&
        fast.usage.cached_tokens == slow.usage.cached_tokens &&
        fast.usage.reasoning_tokens == slow.usage.reasoning_tokens);
  Check(fast.tools.size() == slow.tools.size());
  for (size_t i = 0; i < fast.tools.size(); ++i) {
    Check(fast.tools[i].index == slow.tools[i].index && fast.tools[i].id == slow.tools[i].id &&
          fast.tools[i].name == slow.tools[i].name &&
          fast.tools[i].arguments == slow.tools[i].arguments);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const turnpike::providers::openai::OpenAiProvider kFrom;
  const std::string_view bytes = turnpike::fuzz::AsText(data, size);
  turnpike::fuzz::TranslateForEveryClient(kFrom, bytes);
  stream::SseParser parser;
  turnpike::Status fed = parser.Feed(bytes, [](const stream::SseEvent& event) {
    if (event.has_data) CheckScanAgainstRead(event.data);
  });
  (void)fed;
  return 0;
}
