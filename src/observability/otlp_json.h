// OTLP/HTTP JSON encoding of finished requests (span_record.h) as one ExportTraceServiceRequest:
// {"resourceSpans":[{"resource":{...},"scopeSpans":[{"scope":{...},"spans":[...]}]}]}, trace
// and span ids as lowercase hex, times as unix-nanosecond strings, attributes as
// {"key":..,"value":{"stringValue"|"intValue"|"doubleValue"|"boolValue"|"arrayValue":..}}.
//
// Per request: a SERVER span (named by the GenAI semantic conventions: "chat {model}",
// "embeddings {model}", "search {index}", else "{method} {path}"), an INTERNAL child span per
// phase reached (gateway.parse, gateway.governance, upstream.connect, upstream.first_byte,
// response.stream or response.write) and a CLIENT child span per recorded upstream attempt.
// Child phase span ids are derived from the server span's id (DeriveSpanId), so encoding is a
// pure function of its input.
//
// The encoder writes straight into one reused buffer (JsonBuffer: grown, never zero-filled)
// with constant keys copied as fixed-size blocks, hand-written integer and hex formatting, and
// strings scanned eight bytes at a time for the rare byte that needs escaping: no DOM, no
// temporary strings. Runs on the exporter's thread. Thread safety: pure functions; a JsonBuffer
// belongs to its caller.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "observability/span_record.h"

namespace turnpike::observability {

// A growable byte buffer that is written through a raw pointer: Room(n) makes n bytes
// writable at the end and returns where they start; Commit(end) takes the bytes up to `end`.
class JsonBuffer {
 public:
  char* Room(size_t n) {
    if (capacity_ - size_ < n) Grow(n);
    return data_.get() + size_;
  }
  void Commit(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }
  void clear() { size_ = 0; }
  std::string_view view() const { return {data_.get(), size_}; }
  size_t size() const { return size_; }

 private:
  void Grow(size_t n);
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// The semantic conventions' gen_ai.provider.name for a dialect's name (openai, anthropic,
// gemini -> gcp.gemini, cohere, ollama; openai_responses and openai_completions -> openai).
std::string_view GenAiProviderName(std::string_view dialect);

// gen_ai.operation.name from the client's request path: embeddings, text_completion or chat.
std::string_view GenAiOperationName(std::string_view path);

// Appends the whole export request for `records` to `out`. Every non-zero time in a record is
// written as time + unix_offset_ns (the records' clock to unix nanoseconds).
void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    int64_t unix_offset_ns, JsonBuffer& out);

// The same, appended to a string, the times as they are (tests and tools).
void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    std::string& out);

}  // namespace turnpike::observability
