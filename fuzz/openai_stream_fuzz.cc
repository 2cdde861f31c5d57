// An OpenAI upstream stream (any bytes, split as SSE) decoded and rendered for every client
// dialect (OpenAI, Anthropic, Responses, Gemini, Cohere), reasoning events included, then ended
// as the relay ends it. Besides crashes, checks the decoder's fast path: every payload that
// stream::ScanEscapedChunk decides, the decoder's simdjson read (ReadChunk) reads the same; and
// its template path before SSE framing (DecodeFramed, the parser's `take`): fed the same bytes,
// whole and split into reads as the input's last bytes say (chunk_plan.h), a decoder that takes
// events gives the events, in order, that one fed only framed events gives.
#include <string>
#include <vector>

#include "chunk_plan.h"
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

// Every event a decoder gave, written out whole, one string each.
class Transcript final : public turnpike::providers::EventSink {
 public:
  void OnEvent(const turnpike::providers::StreamEvent& e) override {
    const turnpike::providers::TokenUsage& u = e.usage;
    lines.push_back(std::to_string(static_cast<int>(e.kind)) + "|" +
                    std::to_string(static_cast<int>(e.finish)) + "|" +
                    std::to_string(e.tool_index) + "|" + std::string(e.text) + "|" +
                    std::string(e.id) + "|" + std::string(e.name) + "|" + std::string(e.model) +
                    "|" + std::string(e.stop_sequence) + "|" + std::to_string(u.prompt_tokens) +
                    "," + std::to_string(u.completion_tokens) + "," +
                    std::to_string(u.cached_tokens) + "," + std::to_string(u.reasoning_tokens) +
                    "|" + (e.error != nullptr ? e.error->message : std::string()));
  }
  std::vector<std::string> lines;
};

// Decodes the chunks for_each_chunk gives, as the model call's pump does when translating:
// framed events through Decode, and with `take` each event start offered to DecodeFramed
// first. A failed Decode ends the stream.
template <typename ForEachChunk>
std::vector<std::string> Decode(bool take, ForEachChunk&& for_each_chunk) {
  turnpike::providers::openai::OpenAiStreamDecoder decoder;
  Transcript transcript;
  stream::SseParser parser;
  bool failed = false;
  auto on_event = [&](const stream::SseEvent& event) {
    if (!failed && !decoder.Decode(event, transcript).ok()) failed = true;
  };
  auto decode_framed = [&](std::string_view rest) {
    return failed ? size_t{0} : decoder.DecodeFramed(rest, transcript);
  };
  for_each_chunk([&](std::string_view chunk) {
    if (take) {
      (void)parser.Feed(chunk, on_event, decode_framed);
    } else {
      (void)parser.Feed(chunk, on_event);
    }
  });
  return transcript.lines;
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

  const auto whole_input = [&](auto&& on_chunk) { on_chunk(bytes); };
  Check(Decode(true, whole_input) == Decode(false, whole_input));
  const turnpike::fuzz::ChunkPlan plan(bytes);
  const auto reads = [&](auto&& on_chunk) {
    plan.ForEachChunk([&](std::string_view chunk) { on_chunk(chunk); });
  };
  Check(Decode(true, reads) == Decode(false, reads));
  return 0;
}
