// A one-pass reader of OpenAI chat.completion.chunk payloads, the accumulator's and the OpenAI
// stream decoder's fast path.
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
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stream/chunk_parse.h"

namespace turnpike::stream {

bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped);

// A stream's chunks repeat their first bytes, up to the choices: `{"id":...,"object":...,
// "created":...,"model":...,"system_fingerprint":...,"choices":[`. A chunk's lead is those
// bytes, through the '[' of its first "choices", when the chunk is plain (ParsedChunk::plain)
// and has no "usage" or "error" member before it: where a scan stands after them is then
// known from them alone (id and model read, no choice yet).
class ChunkLead {
 public:
  // A longer lead is not kept (OpenAI's are about 190 bytes): held inline, no allocation.
  static constexpr size_t kMaxBytes = 256;

  size_t size() const { return size_; }  // 0: none
  std::string_view bytes() const { return {bytes_, size_}; }
  // id and model as the lead has them, as views into a chunk that starts with the lead.
  std::string_view Id(const char* chunk) const { return {chunk + id_at_, id_size_}; }
  std::string_view Model(const char* chunk) const { return {chunk + model_at_, model_size_}; }

  // `id` and `model`: views into `bytes`, or empty.
  void Learn(std::string_view bytes, std::string_view id, std::string_view model);
  void Forget() { size_ = 0; }

 private:
  char bytes_[kMaxBytes];
  size_t size_ = 0;
  size_t id_at_ = 0, id_size_ = 0, model_at_ = 0, model_size_ = 0;
};

// ScanChunk for a stream's chunks, with the same contract: a chunk that starts with `lead`'s
// bytes is scanned from where they end; any other is scanned whole, and its lead (or none)
// replaces `lead`'s. A lead's bytes are about half of a content chunk's: its id, object,
// created, model and fingerprint are not read again.
bool ScanChunk(std::string_view json, ParsedChunk& out, std::string& unescaped, ChunkLead& lead);

// An OpenAI chunk as the providers' stream decoder reads it (providers/openai/stream_codec.h):
// the members it uses, and every string as its escaped bytes between the quotes (the pivot's
// StreamEvents carry text escaped), a null string as empty. `other_choice`: a choice has an
// `index` member that is not 0 (a null one counts as the choice's position; a choice without
// one is taken as choice 0).
struct EscapedToolDelta {
  int64_t index = 0;  // the tool call's `index` (its position in the array if absent)
  std::string_view id, name, arguments;
};
struct EscapedChunk {
  std::string_view id, model, content, refusal, reasoning, finish_reason;
  bool has_usage = false;  // `usage` is an object
  bool other_choice = false;
  Usage usage;
  std::vector<EscapedToolDelta> tools;  // of every choice, in order
  bool plain = false;  // as ParsedChunk::plain (chunk_parse.h), set by ScanEscapedChunk

  void Clear();  // keeps the vector's capacity
};

// The decoder's fast path, under ScanChunk's contract with the decoder's simdjson read
// (OpenAiStreamDecoder) as the final say: true and `out` filled exactly as that read fills it,
// or false. A chunk with an `error` member is always left to it. Escaped strings are checked by
// decoding them into `scratch` (the decoded bytes are not kept).
bool ScanEscapedChunk(std::string_view json, EscapedChunk& out, std::string& scratch);
// The same for a stream's chunks, with a lead as ScanChunk takes one.
bool ScanEscapedChunk(std::string_view json, EscapedChunk& out, std::string& scratch,
                      ChunkLead& lead);

// The usage of a whole chat.completion body (its top-level "usage" member), read from its tail:
// the body's last `"usage"`, and from there to its end, which must be `"usage":<usage>` and the
// top-level object's remaining members. Providers write usage last or nearly (OpenAI's
// service_tier and system_fingerprint follow it), so this reads tens of bytes where simdjson
// indexes the whole body (on the mock's 430-byte answer: 3,250 instructions under callgrind,
// 105 ns natively).
//
// Contract: true and `usage` filled as ParseBodyUsage fills it for any valid JSON body (but one
// that repeats the top-level "usage" with an earlier copy of a wrong type, which ParseBodyUsage
// refuses whole), or false for "not decided here" (ExtractUsage then asks simdjson). Why the tail
// alone decides: a quote not preceded by a backslash is one of the body's own, and one followed by
// `usage"` then opens a string; if from there the grammar reads
// `"usage":<value>`, more members and a closing brace at the body's end, that brace closes the
// top-level object, so the member is the top-level object's, and the last "usage" in it. The
// bytes before the member are not read: a body that is not valid JSON may have its tail's
// usage read here where simdjson would refuse the body (the bytes are the upstream's own,
// relayed as they came; the usage is what the upstream reports).
bool ScanTailUsage(std::string_view body, Usage& usage);

}  // namespace turnpike::stream
