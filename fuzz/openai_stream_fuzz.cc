// An OpenAI upstream stream (any bytes, split as SSE) decoded and rendered for every client
// dialect (OpenAI, Anthropic, Responses, Gemini, Cohere), reasoning events included, then ended
// as the relay ends it. Besides crashes, checks the decoder's fast path: every payload that
// stream::ScanEscapedChunk decides, the decoder's simdjson read (ReadChunk) reads the same, and
// the scanner reads it the same after the lead of the payloads before it (chunk_scan.h); and
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

bool SameChunk(const stream::EscapedChunk& a, const stream::EscapedChunk& b) {
  if (a.id != b.id || a.model != b.model || a.content != b.content || a.refusal != b.refusal ||
      a.reasoning != b.reasoning || a.finish_reason != b.finish_reason ||
      a.has_usage != b.has_usage || a.other_choice != b.other_choice ||
      a.usage.prompt_tokens != b.usage.prompt_tokens ||
      a.usage.completion_tokens != b.usage.completion_tokens ||
      a.usage.cached_tokens != b.usage.cached_tokens ||
      a.usage.reasoning_tokens != b.usage.reasoning_tokens || a.tools.size() != b.tools.size()) {
    return false;
  }
  for (size_t i = 0; i < a.tools.size(); ++i) {
    if (a.tools[i].index != b.tools[i].index || a.tools[i].id != b.tools[i].id ||
        a.tools[i].name != b.tools[i].name || a.tools[i].arguments != b.tools[i].arguments) {
      return false;
    }
  }
  return true;
}

// The scanner against the decoder's simdjson read, and, with the lead of the input's payloads
// before it (as the decoder scans), against itself without one.
void CheckScanAgainstRead(std::string_view payload, stream::ChunkLead& lead) {
  static stream::PaddedJsonParser parser;
  static stream::EscapedChunk fast, led, slow;
  static std::string scratch, led_scratch;
  fast.Clear();
  led.Clear();
  const bool decided = stream::ScanEscapedChunk(payload, fast, scratch);
  Check(stream::ScanEscapedChunk(payload, led, led_scratch, lead) == decided);
  if (!decided) return;
  Check(led.plain == fast.plain && SameChunk(led, fast));
  slow.Clear();
  turnpike::providers::openai::ChunkError error;
  Check(turnpike::providers::openai::ReadChunk(parser, payload, false, slow, error) ==
            simdjson::SUCCESS &&
        !error.present);
  Check(SameChunk(fast, slow));
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
  stream::ChunkLead lead;
  turnpike::Status fed = parser.Feed(bytes, [&lead](const stream::SseEvent& event) {
    if (event.has_data) CheckScanAgainstRead(event.data, lead);
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
