// The protobuf form of an OTLP export request (opentelemetry/proto/collector/trace/v1 and the
// trace, resource and common messages it holds), written by hand: the field numbers below are
// the .proto files'. Every length is known before its bytes are written except a span's (its
// tag and a two-byte length go first, fixed when it closes) and the envelope's three (written
// last, in a gap left in front of the spans).
#include <algorithm>
#include <bit>
#include <cstring>

#include "observability/otlp_encoding.h"
#include "observability/otlp_spans.h"

namespace turnpike::observability {
namespace {

// Tags: (field number << 3) | wire type (0 varint, 1 64-bit, 2 length-delimited).
namespace tag {
// ExportTraceServiceRequest.resource_spans, ResourceSpans.resource, Resource.attributes,
// ScopeSpans.scope, InstrumentationScope.name, KeyValue.key, AnyValue.string_value,
// ArrayValue.values, Span.trace_id: all field 1, length-delimited.
constexpr char kField1 = 0x0A;
constexpr char kScopeSpans = 0x12;    // ResourceSpans.scope_spans (2)
constexpr char kSpan = 0x12;          // ScopeSpans.spans (2)
constexpr char kSpanId = 0x12;        // Span.span_id (2)
constexpr char kTraceState = 0x1A;    // Span.trace_state (3)
constexpr char kParentSpanId = 0x22;  // Span.parent_span_id (4)
constexpr char kName = 0x2A;          // Span.name (5)
constexpr char kKind = 0x30;          // Span.kind (6, varint)
constexpr char kStart = 0x39;         // Span.start_time_unix_nano (7, fixed64)
constexpr char kEnd = 0x41;           // Span.end_time_unix_nano (8, fixed64)
constexpr char kAttribute = 0x4A;     // Span.attributes (9)
constexpr char kEvent = 0x5A;         // Span.events (11)
constexpr char kStatus = 0x7A;        // Span.status (15)
constexpr char kValue = 0x12;         // KeyValue.value (2)
constexpr char kBool = 0x10;          // AnyValue.bool_value (2, varint)
constexpr char kInt = 0x18;           // AnyValue.int_value (3, varint)
constexpr char kDouble = 0x21;        // AnyValue.double_value (4, fixed64)
constexpr char kArray = 0x2A;         // AnyValue.array_value (5)
constexpr char kEventTime = 0x09;     // Span.Event.time_unix_nano (1, fixed64)
constexpr char kEventName = 0x12;     // Span.Event.name (2)
constexpr char kMessage = 0x12;       // Status.message (2)
constexpr char kCode = 0x18;          // Status.code (3, varint)
}  // namespace tag

constexpr char kStatusError = 2;  // Status.StatusCode STATUS_CODE_ERROR

// A span's bytes are bounded: its fixed fields, at most 24 attributes of keys under 48 bytes,
// and each of the record's texts at most three times. Its length then fits two varint bytes.
constexpr size_t kMaxSpanBytes = 512 + 24 * (8 + 48) + 3 * otlp::kAllTexts;
static_assert(kMaxSpanBytes < (1 << 14), "a span's length takes two varint bytes");
// A request's spans: the server span, five phases and the attempts, each bounded as above.
constexpr size_t kMaxRequestBytes = (6 + kMaxAttemptSpans) * kMaxSpanBytes;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// Little-endian, as the wire's fixed64.
inline char* PutFixed64(char* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
  return p + 8;
}

// An id's bytes in the order its hex is read (the W3C form): most significant first.
inline char* PutId(char* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
  return p + 8;
}

inline char* PutBytes(char* p, std::string_view s) {
  CopySmall(p, s.data(), s.size());
  return p + s.size();
}

// A length-delimited field: its tag, length and bytes.
inline char* PutText(char* p, char field, std::string_view s) {
  *p++ = field;
  p = PutVarint(p, s.size());
  return PutBytes(p, s);
}

// A span's first two fields: Span.trace_id and Span.span_id, their bytes as their hex reads.
inline char* PutTraceAndSpanIds(char* p, uint64_t trace_hi, uint64_t trace_lo, uint64_t span_id) {
  p[0] = tag::kField1;  // Span.trace_id
  p[1] = 16;
  p = PutId(p + 2, trace_hi);
  p = PutId(p, trace_lo);
  p[0] = tag::kSpanId;
  p[1] = 8;
  return PutId(p + 2, span_id);
}

// A span attribute's KeyValue up to its AnyValue's bytes (`value` of them).
template <size_t N>
inline char* PutKeyValue(char* p, const char (&key)[N], size_t value) {
  static_assert(N - 1 < 0x80, "a key's length is one byte");
  // The KeyValue's length: key field, value tag, value length and value. Nearly always under
  // 128, when it and the value's length take one byte each.
  const size_t key_value = 2 + (N - 1) + 1 + 1 + value;
  p[0] = tag::kAttribute;
  if (key_value < 0x80) {
    p[1] = static_cast<char>(key_value);
    p[2] = tag::kField1;
    p[3] = static_cast<char>(N - 1);
    std::memcpy(p + 4, key, N - 1);
    p[N + 3] = tag::kValue;
    p[N + 4] = static_cast<char>(value);
    return p + N + 5;
  }
  p = PutVarint(p + 1, key_value - 1 + VarintSize(value));
  p[0] = tag::kField1;
  p[1] = static_cast<char>(N - 1);
  std::memcpy(p + 2, key, N - 1);
  p[N + 1] = tag::kValue;
  return PutVarint(p + N + 2, value);
}

// The span writer otlp_spans.h drives, in protobuf. Each method works on a local copy of the
// write position (a byte store could alias the member, which would be reloaded after each).
class ProtoSpans {
 public:
  explicit ProtoSpans(char* p) : p_(p) {}
  char* end() const { return p_; }

  void OpenSpan(const otlp::SpanHead& h) {
    const std::string_view first = h.name.first;
    const std::string_view second = h.name.second;
    const size_t name = first.size() + (second.empty() ? 0 : 1 + second.size());
    char* p = p_;
    *p++ = tag::kSpan;
    p += 2;  // the length, once known (CloseSpan)
    span_ = p;
    p = PutTraceAndSpanIds(p, h.trace_hi, h.trace_lo, h.span_id);
    if (!h.tracestate.empty()) p = PutText(p, tag::kTraceState, h.tracestate);
    if (h.parent_span_id != 0) {
      p[0] = tag::kParentSpanId;
      p[1] = 8;
      p = PutId(p + 2, h.parent_span_id);
    }
    *p++ = tag::kName;
    p = PutVarint(p, name);
    p = PutBytes(p, first);
    if (!second.empty()) {
      *p++ = ' ';
      p = PutBytes(p, second);
    }
    p[0] = tag::kKind;
    p[1] = static_cast<char>(h.kind);
    p[2] = tag::kStart;
    p = PutFixed64(p + 3, static_cast<uint64_t>(h.start));
    *p++ = tag::kEnd;
    p_ = PutFixed64(p, static_cast<uint64_t>(h.end));
  }

  // Its length is known before its first byte: every field but the ids and times is constant.
  template <size_t N>
  void PhaseSpan(const SpanRecord& r, uint64_t span_id, const char (&name)[N], int64_t start,
                 int64_t end) {
    constexpr size_t kBytes = 18 + 10 + 10 + 2 + (N - 1) + 2 + 9 + 9;
    static_assert(kBytes < 0x80, "a phase span's length is one byte");
    char* p = p_;
    p[0] = tag::kSpan;
    p[1] = static_cast<char>(kBytes);
    p = PutTraceAndSpanIds(p + 2, r.trace_hi, r.trace_lo, span_id);
    p[0] = tag::kParentSpanId;
    p[1] = 8;
    p = PutId(p + 2, r.span_id);
    p[0] = tag::kName;
    p[1] = static_cast<char>(N - 1);
    std::memcpy(p + 2, name, N - 1);
    p += N + 1;
    p[0] = tag::kKind;
    p[1] = static_cast<char>(otlp::SpanKind::kInternal);
    p[2] = tag::kStart;
    p = PutFixed64(p + 3, static_cast<uint64_t>(start));
    *p++ = tag::kEnd;
    p_ = PutFixed64(p, static_cast<uint64_t>(end));
  }

  // Attributes are repeated fields of the span: nothing frames the list.
  void BeginAttributes() {}
  void EndAttributes() {}

  template <size_t N>
  void String(const char (&key)[N], std::string_view value) {
    if (value.empty()) return;
    const size_t n = value.size();
    if (n < 0x80) {  // its length in one byte
      char* p = PutKeyValue(p_, key, 2 + n);
      p[0] = tag::kField1;  // AnyValue.string_value
      p[1] = static_cast<char>(n);
      p_ = PutBytes(p + 2, value);
      return;
    }
    char* p = PutKeyValue(p_, key, 1 + VarintSize(n) + n);
    p_ = PutText(p, tag::kField1, value);
  }
  template <size_t N>
  void Constant(const char (&key)[N], std::string_view value) {
    String(key, value);
  }
  template <size_t N>
  void Int(const char (&key)[N], int64_t value) {
    const auto v = static_cast<uint64_t>(value);  // int64: two's complement, as the wire has it
    char* p = PutKeyValue(p_, key, 1 + VarintSize(v));
    *p++ = tag::kInt;
    p_ = PutVarint(p, v);
  }
  template <size_t N>
  void Micros(const char (&key)[N], int64_t micros) {
    char* p = PutKeyValue(p_, key, 9);
    *p++ = tag::kDouble;
    p_ = PutFixed64(p, std::bit_cast<uint64_t>(static_cast<double>(micros) / 1e6));
  }
  template <size_t N>
  void Bool(const char (&key)[N], bool value) {
    char* p = PutKeyValue(p_, key, 2);
    p[0] = tag::kBool;
    p[1] = value ? 1 : 0;
    p_ = p + 2;
  }
  template <size_t N>
  void StringArray1(const char (&key)[N], std::string_view value) {
    if (value.empty()) return;
    const size_t item = 1 + VarintSize(value.size()) + value.size();  // AnyValue
    const size_t array = 1 + VarintSize(item) + item;                 // ArrayValue
    char* p = PutKeyValue(p_, key, 1 + VarintSize(array) + array);
    *p++ = tag::kArray;
    p = PutVarint(p, array);
    *p++ = tag::kField1;  // ArrayValue.values
    p = PutVarint(p, item);
    p_ = PutText(p, tag::kField1, value);
  }

  void Event(int64_t unix_ns, std::string_view name) {
    char* p = p_;
    *p++ = tag::kEvent;
    p = PutVarint(p, 9 + 1 + VarintSize(name.size()) + name.size());
    *p++ = tag::kEventTime;
    p = PutFixed64(p, static_cast<uint64_t>(unix_ns));
    p_ = PutText(p, tag::kEventName, name);
  }

  void CloseSpan(bool error, std::string_view message) {
    char* p = p_;
    if (error) {
      const size_t text = message.empty() ? 0 : 1 + VarintSize(message.size()) + message.size();
      *p++ = tag::kStatus;
      p = PutVarint(p, text + 2);
      if (!message.empty()) p = PutText(p, tag::kMessage, message);
      p[0] = tag::kCode;
      p[1] = kStatusError;
      p += 2;
    }
    char* span = span_;
    const auto n = static_cast<size_t>(p - span);
    if (n < 0x80) {
      // One length byte: the span moves back over the second.
      span[-2] = static_cast<char>(n);
      std::memmove(span - 1, span, n);
      --p;
    } else {
      span[-2] = static_cast<char>(n | 0x80);
      span[-1] = static_cast<char>(n >> 7);
    }
    p_ = p;
  }

 private:
  char* p_;
  char* span_ = nullptr;  // the open span's first byte, after its tag and length
};

// The envelope in front of the spans: ExportTraceServiceRequest { resource_spans {
// resource { attributes: service.name }, scope_spans { scope { name: "turnpike" }, spans } } }.
// Each size below is a message's bytes (without its own tag and length).
class Envelope {
 public:
  Envelope(std::string_view service_name, size_t spans)
      : service_(service_name),
        name_value_(1 + VarintSize(service_.size()) + service_.size()),
        attribute_(2 + 12 + 1 + VarintSize(name_value_) + name_value_),
        resource_(1 + VarintSize(attribute_) + attribute_),
        scope_spans_(kScope + spans),
        resource_spans_(1 + VarintSize(resource_) + resource_ + 1 + VarintSize(scope_spans_) +
                        scope_spans_),
        spans_(spans) {}

  // Its bytes in front of the spans.
  size_t size() const { return 1 + VarintSize(resource_spans_) + resource_spans_ - spans_; }
  // size() is at most this.
  static size_t MaxSize(std::string_view service_name) { return 64 + service_name.size(); }

  // Writes them ending at `end` (the spans' first byte).
  void Write(char* end) const {
    char* p = end - size();
    *p++ = tag::kField1;  // ExportTraceServiceRequest.resource_spans
    p = PutVarint(p, resource_spans_);
    *p++ = tag::kField1;  // ResourceSpans.resource
    p = PutVarint(p, resource_);
    *p++ = tag::kField1;  // Resource.attributes
    p = PutVarint(p, attribute_);
    *p++ = tag::kField1;  // KeyValue.key
    *p++ = 12;
    p = PutBytes(p, "service.name");
    *p++ = tag::kValue;
    p = PutVarint(p, name_value_);
    *p++ = tag::kField1;  // AnyValue.string_value
    p = PutVarint(p, service_.size());
    p = PutBytes(p, service_);
    *p++ = tag::kScopeSpans;
    p = PutVarint(p, scope_spans_);
    *p++ = tag::kField1;  // ScopeSpans.scope
    *p++ = 10;
    *p++ = tag::kField1;  // InstrumentationScope.name
    *p++ = 8;
    PutBytes(p, "turnpike");
  }

 private:
  static constexpr size_t kScope = 12;  // ScopeSpans.scope's field: tag, length, 10 bytes
  std::string_view service_;
  size_t name_value_;      // service.name's AnyValue
  size_t attribute_;       // its KeyValue
  size_t resource_;        // Resource
  size_t scope_spans_;     // ScopeSpans
  size_t resource_spans_;  // ResourceSpans
  size_t spans_;           // the spans' bytes, written already
};
}  // namespace

// Flattened: every call the span walk makes in this file is inlined (GCC's inliner otherwise
// leaves some of the small writers out of line, each call costing about what it writes).
[[gnu::flatten]] std::string_view EncodeOtlpProtobuf(std::span<const SpanRecord> records,
                                                     std::string_view service_name,
                                                     int64_t unix_offset_ns, OtlpBuffer& out) {
  out.clear();
  const size_t gap = Envelope::MaxSize(service_name);
  out.Commit(out.Room(gap) + gap);
  const otlp::UnixClock unix(unix_offset_ns);
  for (const SpanRecord& r : records) {
    ProtoSpans spans(out.Room(kMaxRequestBytes));
    otlp::WriteRequestSpans(spans, r, unix);
    out.Commit(spans.end());
  }
  const Envelope envelope(service_name, out.size() - gap);
  envelope.Write(out.data() + gap);
  return out.view().substr(gap - envelope.size());
}

void EncodeOtlpProtobuf(std::span<const SpanRecord> records, std::string_view service_name,
                        std::string& out) {
  OtlpBuffer buffer;
  out.append(EncodeOtlpProtobuf(records, service_name, 0, buffer));
}

}  // namespace turnpike::observability
