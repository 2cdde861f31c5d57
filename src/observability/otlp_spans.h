// The spans of one finished request (span_record.h), decided once for every OTLP encoding:
// which spans there are, their ids, names, kinds, times, attributes, events and status. An
// encoding (otlp_json.cc, otlp_protobuf.cc) supplies the writer `Out`, which takes them in
// this order for each span:
//
//   out.OpenSpan(const SpanHead&);
//   out.BeginAttributes();            // only for spans with attributes (may write none)
//   out.String(key, text);            // a client's text; skipped when empty
//   out.Constant(key, text);          // this code's own text (nothing to escape); skipped empty
//   out.Int(key, int64_t); out.Bool(key, bool); out.Micros(key, micros as a double / 10^6);
//   out.StringArray1(key, text);      // an array of one string; skipped when empty
//   out.EndAttributes();
//   out.Event(unix_ns, constant_name);  // at most one per span
//   out.CloseSpan(error, message);      // status ERROR (with message, when not empty) or unset
//
// and a phase's span, which has no attribute, event or status, in one call:
//
//   out.PhaseSpan(record, span_id, name literal, start, end);  // INTERNAL, the server span's child
//
// Keys are string literals (`const char (&)[N]`) so that a writer copies them as fixed-size
// blocks. Per request: a SERVER span (named by the GenAI semantic conventions: "chat {model}",
// "embeddings {model}", "search {index}", else "{method} {path}"), an INTERNAL child span per
// phase reached (gateway.parse, gateway.governance, upstream.connect, upstream.first_byte,
// response.stream or response.write) and a CLIENT child span per recorded upstream attempt.
// Child phase span ids are derived from the server span's id (DeriveSpanId), so an encoding is
// a pure function of its input.
//
// Internal to observability/ (the encoders' shared part); runs on the exporter's thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/copy_small.h"
#include "observability/otlp_encoding.h"
#include "observability/span_record.h"
#include "observability/trace_context.h"

namespace turnpike::observability::otlp {

// OTLP's Span.SpanKind values.
enum class SpanKind : uint8_t { kInternal = 1, kServer = 2, kClient = 3 };

// A span's name: `first`, then a space and `second` when `second` is not empty.
struct SpanName {
  std::string_view first;
  std::string_view second;
  bool first_is_constant = false;  // this code's own text: nothing to escape
};

struct SpanHead {
  uint64_t trace_hi = 0;
  uint64_t trace_lo = 0;
  uint64_t span_id = 0;
  uint64_t parent_span_id = 0;  // 0: a root span
  std::string_view tracestate;
  SpanName name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start = 0;  // unix nanoseconds
  int64_t end = 0;
};

// Every text a record holds, once: a request's spans write each at most three times, so an
// encoding bounds a request's bytes from it (kMaxRequestBytes in each encoder).
inline constexpr size_t kAllTexts =
    decltype(SpanRecord::tracestate)::capacity() + decltype(SpanRecord::method)::capacity() +
    decltype(SpanRecord::path)::capacity() + decltype(SpanRecord::model)::capacity() +
    decltype(SpanRecord::search_index)::capacity() +
    decltype(SpanRecord::finish_reason)::capacity() + decltype(SpanRecord::error)::capacity() +
    decltype(SpanRecord::tenant_id)::capacity() + decltype(SpanRecord::key_id)::capacity() +
    kMaxAttemptSpans * (decltype(AttemptRecord::deployment)::capacity() +
                        decltype(AttemptRecord::provider)::capacity() +
                        decltype(AttemptRecord::upstream_model)::capacity() +
                        decltype(AttemptRecord::server_address)::capacity());

// Two digits at a time.
inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline size_t DigitCount(uint64_t v) {
  size_t n = 1;
  while (v >= 100) {
    v /= 100;
    n += 2;
  }
  return n + (v >= 10 ? 1 : 0);
}

// Writes the digits of `v` ending just before `end`.
inline void WriteDigitsBackward(uint64_t v, char* end) {
  while (v >= 100) {
    end -= 2;
    std::memcpy(end, kDigitPairs + (v % 100) * 2, 2);
    v /= 100;
  }
  if (v >= 10) {
    std::memcpy(end - 2, kDigitPairs + v * 2, 2);
  } else {
    end[-1] = static_cast<char>('0' + v);
  }
}

// The records' clock to unix nanoseconds; 0 (a phase not reached) stays 0.
class UnixClock {
 public:
  explicit UnixClock(int64_t offset_ns) : offset_(offset_ns) {}
  int64_t operator()(int64_t t) const { return t == 0 ? 0 : t + offset_; }

 private:
  int64_t offset_;
};

// `s` as valid UTF-8 (OTLP's strings must be; a request target may hold any bytes): `s`
// itself when it is (the common case, all ASCII, is tested eight bytes at a time), else a copy
// in `scratch` (at least 3 * s.size() bytes) with each byte that starts no valid sequence
// replaced by U+FFFD.
inline std::string_view ValidUtf8(std::string_view s, char* scratch) {
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if ((w & kHigh) != 0) break;
  }
  if (i + 8 > s.size()) {
    // The last bytes as one word: the eight that end the text (overlapping those tested), or
    // the whole of a shorter one with zero padding.
    uint64_t w = 0;
    if (s.size() >= 8) {
      std::memcpy(&w, s.data() + s.size() - 8, 8);
    } else if (!s.empty()) {
      CopySmall(reinterpret_cast<char*>(&w), s.data(), s.size());
    }
    if ((w & kHigh) == 0) return s;
  }
  while (static_cast<unsigned char>(s[i]) < 0x80) ++i;  // a byte at or after i is not ASCII
  const auto byte = [&s](size_t at) {
    return at < s.size() ? static_cast<unsigned char>(s[at]) : 0u;
  };
  const auto continuation = [&byte](size_t at) { return (byte(at) & 0xc0) == 0x80; };
  char* out = scratch;
  std::memcpy(out, s.data(), i);
  out += i;
  while (i < s.size()) {
    const unsigned c = byte(i);
    size_t n = 0;  // the valid sequence's length at i; 0: none
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = continuation(i + 1) ? 2 : 0;
    } else if (c >= 0xe0 && c <= 0xef) {
      const unsigned c1 = byte(i + 1);
      const bool second = c == 0xe0   ? (c1 >= 0xa0 && c1 <= 0xbf)
                          : c == 0xed ? (c1 >= 0x80 && c1 <= 0x9f)
                                      : (c1 & 0xc0) == 0x80;
      n = second && continuation(i + 2) ? 3 : 0;
    } else if (c >= 0xf0 && c <= 0xf4) {
      const unsigned c1 = byte(i + 1);
      const bool second = c == 0xf0   ? (c1 >= 0x90 && c1 <= 0xbf)
                          : c == 0xf4 ? (c1 >= 0x80 && c1 <= 0x8f)
                                      : (c1 & 0xc0) == 0x80;
      n = second && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    }
    if (n == 0) {
      std::memcpy(out, "\xEF\xBF\xBD", 3);
      out += 3;
      ++i;
    } else {
      std::memcpy(out, s.data() + i, n);
      out += n;
      i += n;
    }
  }
  return {scratch, static_cast<size_t>(out - scratch)};
}

// A request's texts that may come from its target, made valid UTF-8 once, and the names its
// spans share, looked up once.
struct RequestTexts {
  std::string_view operation;                    // gen_ai.operation.name (the path's)
  std::string_view providers[kMaxAttemptSpans];  // each attempt's gen_ai.provider.name
  std::string_view path;
  std::string_view model;
  std::string_view search_index;
  char path_scratch[3 * decltype(SpanRecord::path)::capacity()];
  char model_scratch[3 * decltype(SpanRecord::model)::capacity()];
  char index_scratch[3 * decltype(SpanRecord::search_index)::capacity()];

  explicit RequestTexts(const SpanRecord& r)
      : operation(GenAiOperationName(r.path)),
        path(ValidUtf8(r.path, path_scratch)),
        model(ValidUtf8(r.model, model_scratch)),
        search_index(ValidUtf8(r.search_index, index_scratch)) {
    for (size_t i = 0; i < r.attempt_count; ++i) {
      providers[i] = GenAiProviderName(r.attempts[i].provider);
    }
  }
  RequestTexts(const RequestTexts&) = delete;
  RequestTexts& operator=(const RequestTexts&) = delete;
};

namespace spans_detail {

inline SpanHead Head(const SpanRecord& r, uint64_t span_id, uint64_t parent_span_id, SpanName name,
                     SpanKind kind, int64_t start, int64_t end) {
  return SpanHead{.trace_hi = r.trace_hi,
                  .trace_lo = r.trace_lo,
                  .span_id = span_id,
                  .parent_span_id = parent_span_id,
                  .tracestate = {},
                  .name = name,
                  .kind = kind,
                  .start = start,
                  .end = std::max(start, end)};
}

inline const AttemptRecord* Answering(const SpanRecord& r) {
  return r.attempt_count == 0 ? nullptr : &r.attempts[r.attempt_count - 1];
}

template <typename Out>
void ServerSpan(Out& out, const SpanRecord& r, const RequestTexts& t, int64_t received,
                int64_t done, UnixClock unix) {
  const std::string_view operation = t.operation;
  SpanName name{r.method, t.path};
  if (r.kind == TraceKind::kModel) {
    name = {operation, t.model, true};
  } else if (r.kind == TraceKind::kSearch) {
    name = {"search", t.search_index.empty() ? t.model : t.search_index, true};
  }
  SpanHead h = Head(r, r.span_id, r.parent_span_id, name, SpanKind::kServer, received, done);
  h.tracestate = r.tracestate;
  out.OpenSpan(h);
  out.BeginAttributes();
  if (r.kind == TraceKind::kModel) {
    out.Constant("gen_ai.operation.name", operation);
    out.String("gen_ai.request.model", t.model);
    if (const AttemptRecord* answer = Answering(r)) {
      out.String("gen_ai.provider.name", t.providers[r.attempt_count - 1]);
      out.String("gen_ai.response.model", answer->upstream_model);
    }
    if (r.input_tokens >= 0) out.Int("gen_ai.usage.input_tokens", r.input_tokens);
    if (r.output_tokens >= 0) out.Int("gen_ai.usage.output_tokens", r.output_tokens);
    out.StringArray1("gen_ai.response.finish_reasons", r.finish_reason);
    out.Bool("turnpike.stream", r.stream);
    out.Int("turnpike.attempts", r.attempts_made);
  } else if (r.kind == TraceKind::kSearch) {
    out.Constant("db.system.name", "elasticsearch");
    // The search door's operation label without its metrics prefix ("es_search" -> search).
    std::string_view op = t.model;
    if (op.rfind("es_", 0) == 0) op.remove_prefix(3);
    out.String("db.operation.name", op);
    out.String("db.namespace", t.search_index);
    out.String("turnpike.search.index", t.search_index);
  }
  out.String("http.request.method", r.method);
  out.Int("http.response.status_code", r.status);
  out.String("url.path", t.path);
  out.String("turnpike.tenant.id", r.tenant_id);
  out.String("turnpike.key.id", r.key_id);
  if (!r.tenant_id.empty()) out.Micros("turnpike.cost_usd", r.cost_micros);
  if (r.kind != TraceKind::kOther) out.Bool("turnpike.cache.hit", r.cache_hit);
  out.Constant("error.type", r.error);
  out.EndAttributes();
  if (r.phases.first_token != 0) out.Event(unix(r.phases.first_token), "gen_ai.first_token");
  out.CloseSpan(r.status >= 500, r.error);
}

// A phase's span, when both of its ends were reached.
template <typename Out, size_t N>
void PhaseSpan(Out& out, const SpanRecord& r, uint64_t n, const char (&name)[N], int64_t start,
               int64_t end) {
  if (start == 0 || end == 0) return;
  out.PhaseSpan(r, DeriveSpanId(r.span_id, n), name, start, std::max(start, end));
}

template <typename Out>
void AttemptSpans(Out& out, const SpanRecord& r, const RequestTexts& t, int64_t done,
                  UnixClock unix) {
  const std::string_view operation = t.operation;
  for (size_t i = 0; i < r.attempt_count; ++i) {
    const AttemptRecord& at = r.attempts[i];
    const int64_t start = unix(at.start_ns);
    out.OpenSpan(Head(r, at.span_id, r.span_id, {operation, at.upstream_model, true},
                      SpanKind::kClient, start, at.end_ns != 0 ? unix(at.end_ns) : done));
    const bool failed = at.status < 0 || at.status >= 400;
    out.BeginAttributes();
    out.Constant("gen_ai.operation.name", operation);
    out.String("gen_ai.provider.name", t.providers[i]);
    out.String("gen_ai.request.model", at.upstream_model);
    out.String("server.address", at.server_address);
    if (at.server_port != 0) out.Int("server.port", at.server_port);
    if (at.status >= 0) out.Int("http.response.status_code", at.status);
    out.String("turnpike.deployment", at.deployment);
    if (failed) {
      if (at.status < 0) {
        out.Constant("error.type", "connection");
      } else if (at.status >= 100 && at.status <= 999) {
        // The status code's three digits, as the semantic conventions name an HTTP error.
        const char digits[3] = {static_cast<char>('0' + at.status / 100),
                                static_cast<char>('0' + at.status / 10 % 10),
                                static_cast<char>('0' + at.status % 10)};
        out.Constant("error.type", std::string_view(digits, 3));
      } else {
        out.Constant("error.type", "_OTHER");
      }
    }
    out.EndAttributes();
    out.CloseSpan(failed, {});
  }
}

}  // namespace spans_detail

// Writes every span of `r` to `out`, its times turned into unix nanoseconds by `unix`.
template <typename Out>
void WriteRequestSpans(Out& out, const SpanRecord& r, UnixClock unix) {
  const RequestTexts t(r);
  const PhaseTimes& p = r.phases;
  const int64_t received = unix(p.received);
  const int64_t parsed = unix(p.parsed);
  const int64_t admitted = unix(p.admitted);
  const int64_t done = unix(p.done);
  spans_detail::ServerSpan(out, r, t, received, done, unix);
  spans_detail::PhaseSpan(out, r, 1, "gateway.parse", received, parsed);
  spans_detail::PhaseSpan(out, r, 2, "gateway.governance", parsed, admitted);
  spans_detail::PhaseSpan(out, r, 3, "upstream.connect", admitted, unix(p.upstream_connected));
  spans_detail::PhaseSpan(out, r, 4, "upstream.first_byte", unix(p.upstream_sent),
                          unix(p.upstream_head));
  if (r.stream) {
    spans_detail::PhaseSpan(out, r, 5, "response.stream", unix(p.client_head), done);
  } else {
    spans_detail::PhaseSpan(out, r, 5, "response.write", unix(p.client_head), done);
  }
  spans_detail::AttemptSpans(out, r, t, done, unix);
}

}  // namespace turnpike::observability::otlp
