// Any bytes through stream::SseParser twice: whole in one Feed, and split into reads whose sizes
// the input gives (chunk_plan.h). Checks that both see the same events (event, data, has_data)
// and the same over-size failure, and the parser's byte accounting: the events' raw bytes, in
// order, are the input's up to the buffered tail, each split as the header says (only a CRLF
// split between reads may move its "\n" into the next event's raw, and so push an event of
// exactly kMaxEventBytes over the limit, or keep one of kMaxEventBytes + 1 under it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_plan.h"
#include "stream/sse_parser.h"

namespace {

// Small enough for inputs of -max_len to reach the over-size error.
constexpr size_t kMaxEventBytes = 1024;

struct Seen {
  std::string event, data;
  bool has_data = false;
  size_t end = 0;  // offset just past the event's raw bytes in the payload
};

struct Run {
  std::vector<Seen> events;
  std::string raw;  // every event's raw bytes, concatenated
  bool failed = false;
  size_t buffered = 0;
};

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Feeds one chunk and records its events; after a failure every Feed must fail with no event.
void FeedOne(turnpike::stream::SseParser& parser, std::string_view chunk, Run& run) {
  const bool was_failed = run.failed;
  const size_t before = run.events.size();
  turnpike::Status status = parser.Feed(chunk, [&](const turnpike::stream::SseEvent& event) {
    run.raw.append(event.raw);
    run.events.push_back(
        Seen{std::string(event.event), std::string(event.data), event.has_data, run.raw.size()});
  });
  if (!status.ok()) run.failed = true;
  if (was_failed) Check(!status.ok() && run.events.size() == before);
}

// The accounting of one run over `payload`.
void CheckRun(const Run& run, std::string_view payload) {
  Check(payload.substr(0, run.raw.size()) == run.raw);
  if (!run.failed) Check(run.raw.size() + run.buffered == payload.size());
  for (const Seen& seen : run.events) Check(seen.has_data || seen.data.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const turnpike::fuzz::ChunkPlan plan(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string_view payload = plan.payload();

  Run whole;
  turnpike::stream::SseParser whole_parser(kMaxEventBytes);
  FeedOne(whole_parser, payload, whole);
  whole.buffered = whole_parser.buffered_bytes();

  Run split;
  turnpike::stream::SseParser split_parser(kMaxEventBytes);
  plan.ForEachChunk([&](std::string_view chunk) { FeedOne(split_parser, chunk, split); });
  split.buffered = split_parser.buffered_bytes();

  CheckRun(whole, payload);
  CheckRun(split, payload);
  // The one allowed difference: the "\n" of a CRLF split between reads counts in the next event
  // (sse_parser.h), so an event or tail of exactly kMaxEventBytes passes whole, fails split;
  // the whole run may still fail later, on another event (fuzz/corpus/sse_parser/
  // crlf_split_at_limit_then_too_large.sse).
  if (split.failed && (!whole.failed || split.events.size() < whole.events.size())) {
    const size_t k = split.events.size();
    Check(k > 0 && k <= whole.events.size());
    const size_t start = whole.events[k - 1].end;
    const size_t end = k < whole.events.size() ? whole.events[k].end : payload.size();
    Check(split.events[k - 1].end + 1 == start && end - start == kMaxEventBytes);
    whole.events.resize(k);
    whole.failed = true;
  }
  // Its mirror: an event of kMaxEventBytes + 1 whose blank line ends in a CRLF split between
  // reads passes split (dispatched at the "\r", the "\n" moves on) and fails whole.
  if (whole.failed && whole.events.size() < split.events.size()) {
    const size_t k = whole.events.size();
    const size_t start = k > 0 ? whole.events[k - 1].end : 0;
    const size_t end = split.events[k].end;
    Check(end - start == kMaxEventBytes && payload.substr(end - 1, 2) == "\r\n");
    split.events.resize(k);
    split.failed = true;
  }
  Check(whole.failed == split.failed);
  Check(whole.events.size() == split.events.size());
  for (size_t i = 0; i < whole.events.size(); ++i) {
    const Seen& w = whole.events[i];
    const Seen& s = split.events[i];
    Check(w.event == s.event && w.data == s.data && w.has_data == s.has_data);
    // A blank line's CRLF split between reads: its "\n" opens the next event's raw.
    const bool crlf_split = s.end + 1 == w.end && payload.substr(s.end - 1, 2) == "\r\n";
    Check(s.end == w.end || crlf_split);
  }
  return 0;
}
