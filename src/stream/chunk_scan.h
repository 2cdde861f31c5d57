// A one-pass reader of OpenAI chat.completion.chunk payloads, the accumulator's fast path, and
// of a whole chat.completion's usage, ExtractUsage's (internal to stream/).
//
// ParseChunk (simdjson On-Demand) costs about 3k instructions per 230-byte chunk: a padded copy,
// stage 1 over the whole input, then the walk. Most chunks are plain JSON of one known shape,
// which one forward scan reads with no copy (strings without escapes stay views into the input).
//
// Contract: ScanChunk either fills `out` exactly as ParseChunk would for the same payload and
// returns true, or returns false, meaning "not decided here": the caller clears `out` and asks
// ParseChunk, which has the final say. It returns true only for input that is valid JSON
// (RFC 8259: grammar, UTF-8, escapes, every value including those it skips) whose members it
// reads have the types ParseChunk accepts; anything else (malformed input, a read string with
// an unpaired surrogate escape, an integer that is not a plain int64 literal, nesting deeper
// than 64) returns false. tests/stream/chunk_scan_test.cc compares the two on many payloads.
//
// Views in `out` point into `json` or into `unescaped` (which it clears and reserves once, so
// the views stay valid until its next use). Not thread-safe; no allocation once `unescaped` and
// `out`'s vectors have grown.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "stream/chunk_parse.h"

namespace turnpike::stream {

bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped);

// The usage of a whole chat.completion body (its top-level "usage" member), as ParseBodyUsage
// reads it, under the same contract: true and `usage` filled, or false for "not decided here"
// (ExtractUsage then asks simdjson). A body that is not plain (see the scanner) and longer than
// kScanBodyBytes is left to simdjson at once: the scanner checks such strings byte by byte,
// where simdjson's stage 1 runs 32 bytes at a time. No allocation.
inline constexpr size_t kScanBodyBytes = 4096;
bool ScanBodyUsage(std::string_view json, Usage& usage);

}  // namespace turnpike::stream
