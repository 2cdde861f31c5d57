// OTLP/HTTP encodings of finished requests (span_record.h) as one ExportTraceServiceRequest
// ({resourceSpans: [{resource, scopeSpans: [{scope, spans}]}]}), in either of the protocol's
// two forms:
//   - binary protobuf (otlp_protobuf.cc; Content-Type application/x-protobuf), OTLP's default:
//     ids as raw bytes, times as fixed64, nothing escaped;
//   - JSON (otlp_json.cc; application/json): ids as lowercase hex, times as unix-nanosecond
//     strings, attributes as {"key":..,"value":{"stringValue"|"intValue"|"doubleValue"|
//     "boolValue"|"arrayValue":..}}.
// Both carry the same spans, decided once in otlp_spans.h (which spans a request makes, their
// names and attributes).
//
// The encoders write straight into one reused buffer (OtlpBuffer: grown, never zero-filled):
// no DOM, no temporary strings. They run on the exporter's thread. Thread safety: pure
// functions; an OtlpBuffer belongs to its caller.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "observability/span_record.h"

namespace turnpike::observability {

enum class OtlpProtocol { kProtobuf, kJson };

// A growable byte buffer that is written through a raw pointer: Room(n) makes n bytes
// writable at the end and returns where they start; Commit(end) takes the bytes up to `end`.
class OtlpBuffer {
 public:
  char* Room(size_t n) {
    if (capacity_ - size_ < n) Grow(n);
    return data_.get() + size_;
  }
  void Commit(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }
  void clear() { size_ = 0; }
  char* data() { return data_.get(); }
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

// Encodes the export request for `records` into `out` (cleared first) and returns it (a view
// into `out`). Every non-zero time in a record is written as time + unix_offset_ns (the
// records' clock to unix nanoseconds).
std::string_view EncodeOtlp(OtlpProtocol protocol, std::span<const SpanRecord> records,
                            std::string_view service_name, int64_t unix_offset_ns, OtlpBuffer& out);

// The JSON form, appended to `out`.
void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    int64_t unix_offset_ns, OtlpBuffer& out);
// The protobuf form into `out` (cleared first; the message's outer lengths are written last,
// in front of the spans): the returned view is the message.
std::string_view EncodeOtlpProtobuf(std::span<const SpanRecord> records,
                                    std::string_view service_name, int64_t unix_offset_ns,
                                    OtlpBuffer& out);

// Both forms appended to a string, the times as they are (tests and tools).
void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    std::string& out);
void EncodeOtlpProtobuf(std::span<const SpanRecord> records, std::string_view service_name,
                        std::string& out);

}  // namespace turnpike::observability
