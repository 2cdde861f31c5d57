// An OpenAI chunk stream (any bytes, split as SSE) through stream::ChatAccumulator, as the relay
// tees it, and the whole input through ExtractUsage. Besides crashes, checks three contracts of
// stream/: ScanChunk, the one-pass reader, reads every payload it decides exactly as ParseChunk
// (simdjson) does (chunk_scan.h); ScanTailUsage reads the usage of every payload and of the
// whole input that it decides and that is valid JSON (simdjson's DOM says) without a repeated
// top-level "usage" as ParseBodyUsage does; and the accumulator's content-only
// template path ends in the same state as the full path, which a second accumulator takes for
// every payload (a "{}" before each one drops its template without changing anything else).
// And ConsumeEvent, the reading before SSE framing (the model call's pump feeds the parser's
// `take` with it): fed the same bytes, whole and split into reads as the input's last
// bytes say (chunk_plan.h), it must end in the tee's state with the same chunk kinds; whole, the
// events it takes and those framed must be the tee's events, byte for byte and in order.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_plan.h"
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

// ScanTailUsage against ParseBodyUsage on one body, within its contract (chunk_scan.h).
void CheckTailUsageAgainstParse(std::string_view body) {
  static stream::PaddedJsonParser parser;
  static simdjson::dom::parser dom;
  stream::Usage fast;
  if (!stream::ScanTailUsage(body, fast)) return;
  simdjson::dom::element root;
  if (dom.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) return;
  simdjson::dom::object object;
  if (root.get_object().get(object) == simdjson::SUCCESS) {
    int usages = 0;
    for (auto field : object) usages += field.key == "usage" ? 1 : 0;
    if (usages > 1) return;
  }
  simdjson::ondemand::document doc;
  Check(parser.Iterate(body).get(doc) == simdjson::SUCCESS);
  Check(SameUsage(fast, stream::ParseBodyUsage(doc)));
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

// One event as a reader saw it: its raw bytes and what Consume (or ConsumeEvent) made of it.
struct Seen {
  std::string raw;
  int kind = -1;  // a ChunkKind, or -1: no data line
  bool operator==(const Seen&) const = default;
};

// Feeds the chunks for_each_chunk gives to a parser and its events to `acc`'s Consume; with
// `take`, the parser offers every event start to `acc`'s ConsumeEvent first.
template <typename ForEachChunk>
std::vector<Seen> Read(stream::ChatAccumulator& acc, bool take, ForEachChunk&& for_each_chunk) {
  std::vector<Seen> seen;
  stream::SseParser parser;
  bool failed = false;
  auto on_event = [&](const stream::SseEvent& event) {
    seen.push_back(
        {std::string(event.raw), event.has_data ? static_cast<int>(acc.Consume(event.data)) : -1});
  };
  auto consume_event = [&](std::string_view rest) {
    const stream::ChatAccumulator::TakenEvent taken = acc.ConsumeEvent(rest);
    if (taken.size != 0) {
      seen.push_back({std::string(rest.substr(0, taken.size)), static_cast<int>(taken.kind)});
    }
    return taken.size;
  };
  for_each_chunk([&](std::string_view chunk) {
    if (failed) return;
    turnpike::Status fed =
        take ? parser.Feed(chunk, on_event, consume_event) : parser.Feed(chunk, on_event);
    failed = !fed.ok();
  });
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  stream::ChatAccumulator tee(kMaxContentBytes);
  stream::ChatAccumulator full_path(kMaxContentBytes);
  stream::SseParser parser;
  std::vector<Seen> tee_seen;
  turnpike::Status fed = parser.Feed(bytes, [&](const stream::SseEvent& event) {
    if (!event.has_data) {
      tee_seen.push_back({std::string(event.raw), -1});
      return;
    }
    CheckScanAgainstParse(event.data);
    CheckTailUsageAgainstParse(event.data);
    const stream::ChunkKind kind = tee.Consume(event.data);
    tee_seen.push_back({std::string(event.raw), static_cast<int>(kind)});
    (void)full_path.Consume("{}");
    Check(full_path.Consume(event.data) == kind);
  });
  (void)fed;
  Check(full_path.template_chunks() == 0);
  CheckSameState(tee, full_path);
  Check(tee.output_bytes() == full_path.output_bytes());

  const auto whole_input = [&](auto&& on_chunk) { on_chunk(bytes); };
  stream::ChatAccumulator taking(kMaxContentBytes);
  Check(Read(taking, true, whole_input) == tee_seen);
  CheckSameState(tee, taking);
  Check(tee.output_bytes() == taking.output_bytes());

  // Split into reads, and counting the text only: the same events, kinds and state.
  const turnpike::fuzz::ChunkPlan plan(bytes);
  const auto reads = [&](auto&& on_chunk) {
    plan.ForEachChunk([&](std::string_view chunk) { on_chunk(chunk); });
  };
  stream::ChatAccumulator split_framed(kMaxContentBytes);
  stream::ChatAccumulator split_taking(kMaxContentBytes, stream::ChatAccumulator::Text::kCount);
  Check(Read(split_taking, true, reads) == Read(split_framed, false, reads));
  Check(split_taking.output_bytes() == split_framed.output_bytes());
  Check(split_taking.usage().prompt_tokens == split_framed.usage().prompt_tokens &&
        split_taking.saw_first_token() == split_framed.saw_first_token() &&
        split_taking.unparsed_chunks() == split_framed.unparsed_chunks() &&
        split_taking.choices().size() == split_framed.choices().size());
  CheckTailUsageAgainstParse(bytes);
  (void)stream::ExtractUsage(bytes);
  return 0;
}
