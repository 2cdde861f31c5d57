// An OpenAI chunk stream (any bytes, split as SSE) through stream::ChatAccumulator, as the relay
// tees it, and the whole input through ExtractUsage. Besides crashes, checks three contracts of
// stream/: ScanChunk, the one-pass reader, reads every payload it decides exactly as ParseChunk
// (simdjson) does (chunk_scan.h); ScanBodyUsage reads the usage of every payload and of the
// whole input it decides exactly as ParseBodyUsage does; and the accumulator's content-only
// template path ends in the same state as the full path, which a second accumulator takes for
// every payload (a "{}" before each one drops its template without changing anything else).
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stream/chat_accumulator.h"
#include "stream/chunk_parse.h"
#include "stream/chunk_scan.h"
#include "stream/padded_json.h"
#include "stream/sse_parser.h"

namespace {

namespace stream = turnpike::stream;

// Small enough for inputs of -max_len to reach the truncation of content and arguments.
constexpr size_t kMaxContentBytes = 256;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool SameUsage(const stream::Usage& a, const stream::Usage& b) {
  return a.prompt_tokens == b.prompt_tokens && a.completion_tokens == b.completion_tokens &&
         a.total_tokens == b.total_tokens && a.cached_tokens == b.cached_tokens &&
         a.reasoning_tokens == b.reasoning_tokens;
}

// ScanBodyUsage against ParseBodyUsage on one body, when ScanBodyUsage decides it.
void CheckBodyUsageAgainstParse(std::string_view body) {
  static stream::PaddedJsonParser parser;
  stream::Usage fast;
  if (!stream::ScanBodyUsage(body, fast)) return;
  simdjson::ondemand::document doc;
  Check(parser.Iterate(body).get(doc) == simdjson::SUCCESS);
  const stream::Usage slow = stream::ParseBodyUsage(doc);
  Check(fast.prompt_tokens == slow.prompt_tokens &&
        fast.completion_tokens == slow.completion_tokens &&
        fast.total_tokens == slow.total_tokens && fast.cached_tokens == slow.cached_tokens &&
        fast.reasoning_tokens == slow.reasoning_tokens);
}

// ScanChunk against ParseChunk on one payload, when ScanChunk decides it.
void CheckScanAgainstParse(std::string_view payload) {
  static stream::PaddedJsonParser parser;
  static stream::ParsedChunk fast, slow;
  static std::string unescaped;
  fast.Clear();
  if (!stream::ScanChunk(payload, fast, unescaped)) return;
  slow.Clear();
  simdjson::ondemand::document doc;
  Check(parser.Iterate(payload).get(doc) == simdjson::SUCCESS && stream::ParseChunk(doc, slow));
  Check(fast.id == slow.id && fast.model == slow.model && fast.is_error == slow.is_error &&
        fast.error_message == slow.error_message && fast.has_usage == slow.has_usage &&
        SameUsage(fast.usage, slow.usage));
  Check(fast.choices.size() == slow.choices.size());
  for (size_t i = 0; i < fast.choices.size(); ++i) {
    const stream::ChoiceDelta& f = fast.choices[i];
    const stream::ChoiceDelta& s = slow.choices[i];
    Check(f.index == s.index && f.role == s.role && f.content == s.content &&
          f.finish_reason == s.finish_reason);
  }
  Check(fast.tool_calls.size() == slow.tool_calls.size());
  for (size_t i = 0; i < fast.tool_calls.size(); ++i) {
    const stream::ToolCallDelta& f = fast.tool_calls[i];
    const stream::ToolCallDelta& s = slow.tool_calls[i];
    Check(f.choice_slot == s.choice_slot && f.index == s.index && f.id == s.id &&
          f.type == s.type && f.name == s.name && f.arguments == s.arguments);
  }
}

void CheckSameState(const stream::ChatAccumulator& a, const stream::ChatAccumulator& b) {
  Check(a.id() == b.id() && a.model() == b.model() && a.error_message() == b.error_message() &&
        SameUsage(a.usage(), b.usage()) && a.saw_first_token() == b.saw_first_token() &&
        a.done() == b.done() && a.truncated() == b.truncated() &&
        a.unparsed_chunks() == b.unparsed_chunks());
  Check(a.choices().size() == b.choices().size());
  for (size_t i = 0; i < a.choices().size(); ++i) {
    const stream::Choice& x = a.choices()[i];
    const stream::Choice& y = b.choices()[i];
    Check(x.index == y.index && x.role == y.role && x.content == y.content &&
          x.finish_reason == y.finish_reason && x.tool_calls.size() == y.tool_calls.size());
    for (size_t j = 0; j < x.tool_calls.size(); ++j) {
      const stream::ToolCall& s = x.tool_calls[j];
      const stream::ToolCall& t = y.tool_calls[j];
      Check(s.index == t.index && s.id == t.id && s.type == t.type && s.name == t.name &&
            s.arguments == t.arguments);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  stream::ChatAccumulator tee(kMaxContentBytes);
  stream::ChatAccumulator full_path(kMaxContentBytes);
  stream::SseParser parser;
  turnpike::Status fed = parser.Feed(bytes, [&](const stream::SseEvent& event) {
    if (!event.has_data) return;
    CheckScanAgainstParse(event.data);
    CheckBodyUsageAgainstParse(event.data);
    const stream::ChunkKind kind = tee.Consume(event.data);
    (void)full_path.Consume("{}");
    Check(full_path.Consume(event.data) == kind);
  });
  (void)fed;
  Check(full_path.template_chunks() == 0);
  CheckSameState(tee, full_path);
  CheckBodyUsageAgainstParse(bytes);
  (void)stream::ExtractUsage(bytes);
  return 0;
}
