// Reads one OpenAI chat.completion.chunk payload into views (internal to stream/).
//
// Separate from ChatAccumulator so that a chunk is applied all or nothing: ParseChunk only
// fills a ParsedChunk, and the accumulator applies it once the whole payload has been read.
// Views point into the parser's buffers and die at its next Iterate. Not thread-safe.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "stream/chat_accumulator.h"

namespace turnpike::stream {

struct ChoiceDelta {
  int64_t index = 0;  // the choice's `index` (its position in the array if absent)
  std::string_view role, content, finish_reason;
};

struct ToolCallDelta {
  size_t choice_slot = 0;  // position in ParsedChunk::choices of the choice it belongs to
  int64_t index = 0;       // the tool call's `index` (its position in the array if absent)
  std::string_view id, type, name, arguments;
};

struct ParsedChunk {
  std::string_view id, model;
  bool is_error = false;  // the payload is {"error": ...}
  std::string_view error_message;
  bool has_usage = false;  // `usage` is an object (OpenAI sends `"usage": null` mid-stream)
  Usage usage;
  std::vector<ChoiceDelta> choices;
  std::vector<ToolCallDelta> tool_calls;
  // Set by ScanChunk: the payload has no backslash, no byte below 0x20 (so no line break) and
  // none above 0x7F. False otherwise, and after ParseChunk.
  bool plain = false;

  void Clear();  // keeps the vectors' capacity
};

// Fills `out` from `doc`. Returns false if the payload is malformed or is not a JSON object
// whose known members have the expected types; `out` must then be ignored. Values of members it
// does not read (logprobs, system_fingerprint...) are skipped, not validated.
bool ParseChunk(simdjson::ondemand::document& doc, ParsedChunk& out);

// The top-level `usage` of a chat.completion body (the last, if repeated); !present() if missing
// or malformed.
Usage ParseBodyUsage(simdjson::ondemand::document& doc);

}  // namespace turnpike::stream
