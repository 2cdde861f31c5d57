// What a finished, sampled request hands the OpenTelemetry exporter: a flat, trivially
// copyable record (no heap: the strings are copied into fixed inline buffers), turned into OTLP
// spans (a server span, its phases' child spans and one client span per upstream attempt) on
// the exporter's thread, never on the worker.
//
// Ownership: written in place in the exporter's preallocated queue slot on the request's worker
// (core/request_trace.h, OtlpExporter::Push), encoded on the exporter's thread; nothing to free.
// Times are nanoseconds on the clock the encoder is told about (EncodeOtlpJson's
// `unix_offset_ns` turns them into unix nanoseconds); 0 = the phase was not reached.
// A text longer than its buffer keeps its first bytes (cut at a UTF-8 character boundary); a
// tracestate keeps its list-members that fit whole.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/copy_small.h"
#include "observability/trace_context.h"

namespace turnpike::observability {

// A string of at most N bytes stored inline. Trivially copyable; its bytes past size() are
// never read.
template <size_t N>
class InlineText {
  static_assert(N < 256, "the length is one byte");

 public:
  InlineText() = default;
  InlineText(std::string_view s) { assign(s); }  // NOLINT: implicit, like std::string's
  InlineText(const char* s) { assign(s); }       // NOLINT

  InlineText& operator=(std::string_view s) {
    assign(s);
    return *this;
  }
  InlineText& operator=(const char* s) {
    assign(s);
    return *this;
  }

  void assign(std::string_view s) {
    size_t n = s.size();
    if (n > N) {
      n = N;
      while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
    }
    CopySmall(data_, s.data(), n);
    size_ = static_cast<uint8_t>(n);
  }
  void clear() { size_ = 0; }

  std::string_view view() const { return {data_, size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: read as a string_view
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  static constexpr size_t capacity() { return N; }

 private:
  uint8_t size_ = 0;
  char data_[N];  // only the first size_ bytes are set
};

struct AttemptRecord {
  uint64_t span_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int status = -1;
  InlineText<63> deployment;
  InlineText<23> provider;  // the dialect's name (openai, anthropic, gemini, ...)
  InlineText<79> upstream_model;
  InlineText<79> server_address;
  uint16_t server_port = 0;
};

// The request's phases (core/request_context.h Phases).
struct PhaseTimes {
  int64_t received = 0;
  int64_t parsed = 0;
  int64_t admitted = 0;
  int64_t upstream_connected = 0;
  int64_t upstream_sent = 0;
  int64_t upstream_head = 0;
  int64_t client_head = 0;
  int64_t first_token = 0;
  int64_t done = 0;
};

struct SpanRecord {
  // User-provided so that a new queue slot is not zero-filled: the members' initializers run,
  // the texts' bytes stay unset.
  SpanRecord() {}  // NOLINT(modernize-use-equals-default)

  uint64_t trace_hi = 0;
  uint64_t trace_lo = 0;
  uint64_t span_id = 0;
  uint64_t parent_span_id = 0;
  TraceKind kind = TraceKind::kOther;
  PhaseTimes phases;
  InlineText<127> tracestate;
  InlineText<15> method;
  InlineText<127> path;
  InlineText<79> model;  // the public model name (kModel), or the search door's operation
  InlineText<63> search_index;
  InlineText<31> finish_reason;
  InlineText<31> error;  // the error code's name; empty: none
  InlineText<63> tenant_id;
  InlineText<47> key_id;
  int status = 0;
  int64_t input_tokens = -1;  // -1: not reported
  int64_t output_tokens = -1;
  int64_t cost_micros = 0;
  bool stream = false;
  bool cache_hit = false;
  int attempts_made = 0;
  uint8_t attempt_count = 0;
  std::array<AttemptRecord, kMaxAttemptSpans> attempts;
};

// Copies a W3C tracestate into `out`, keeping the list-members that fit whole (a cut member
// would be invalid).
template <size_t N>
void AssignTraceState(InlineText<N>& out, std::string_view state) {
  if (state.size() > N) {
    const size_t comma = state.substr(0, N + 1).rfind(',');
    state = comma == std::string_view::npos ? std::string_view{} : state.substr(0, comma);
  }
  out.assign(state);
}

}  // namespace turnpike::observability
