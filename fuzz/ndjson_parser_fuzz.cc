// Any bytes through stream::NdjsonParser twice: whole in one Feed, and split into reads whose
// sizes the input gives (chunk_plan.h). Checks that both report the same lines (raw and data),
// the same over-length failure and the same buffered tail, and that each line is its raw bytes
// without the "\n" (and a "\r" before it), not blank.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_plan.h"
#include "stream/ndjson_parser.h"

namespace {

// Small enough for inputs of -max_len to reach the over-length error.
constexpr size_t kMaxLineBytes = 1024;

struct Run {
  std::vector<std::string> raws, lines;
  bool failed = false;
  size_t buffered = 0;
};

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Feeds one chunk and records its lines; after a failure every Feed must fail with no line.
void FeedOne(turnpike::stream::NdjsonParser& parser, std::string_view chunk, Run& run) {
  const bool was_failed = run.failed;
  const size_t before = run.lines.size();
  turnpike::Status status = parser.Feed(chunk, [&](const turnpike::stream::SseEvent& event) {
    Check(event.has_data && event.event.empty());
    std::string_view line = event.raw;
    Check(!line.empty() && line.back() == '\n');
    line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Check(event.data == line && line.find_first_not_of(" \t\r") != std::string_view::npos);
    run.raws.emplace_back(event.raw);
    run.lines.emplace_back(event.data);
  });
  if (!status.ok()) run.failed = true;
  if (was_failed) Check(!status.ok() && run.lines.size() == before);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const turnpike::fuzz::ChunkPlan plan(std::string_view(reinterpret_cast<const char*>(data), size));

  Run whole;
  turnpike::stream::NdjsonParser whole_parser(kMaxLineBytes);
  FeedOne(whole_parser, plan.payload(), whole);
  whole.buffered = whole_parser.buffered_bytes();

  Run split;
  turnpike::stream::NdjsonParser split_parser(kMaxLineBytes);
  plan.ForEachChunk([&](std::string_view chunk) { FeedOne(split_parser, chunk, split); });
  split.buffered = split_parser.buffered_bytes();

  Check(whole.failed == split.failed);
  Check(whole.raws == split.raws && whole.lines == split.lines);
  if (!whole.failed) Check(whole.buffered == split.buffered);
  return 0;
}
