#include "observability/otlp_json.h"

#include <algorithm>
#include <cstring>

namespace turnpike::observability {
namespace {
// OTLP SpanKind and Status.code values.
constexpr char kKindInternal = '1';
constexpr char kKindServer = '2';
constexpr char kKindClient = '3';
constexpr char kHex[] = "0123456789abcdef";

// A request's spans take at most this many bytes: constants, ids and numbers (a few KB) and
// every text of the record written up to three times, six bytes per byte when escaped.
constexpr size_t kAllTexts =
    decltype(SpanRecord::tracestate)::capacity() + decltype(SpanRecord::method)::capacity() +
    decltype(SpanRecord::path)::capacity() + decltype(SpanRecord::model)::capacity() +
    decltype(SpanRecord::search_index)::capacity() +
    decltype(SpanRecord::finish_reason)::capacity() + decltype(SpanRecord::error)::capacity() +
    decltype(SpanRecord::tenant_id)::capacity() + decltype(SpanRecord::key_id)::capacity() +
    kMaxAttemptSpans * (decltype(AttemptRecord::deployment)::capacity() +
                        decltype(AttemptRecord::provider)::capacity() +
                        decltype(AttemptRecord::upstream_model)::capacity() +
                        decltype(AttemptRecord::server_address)::capacity());
constexpr size_t kMaxRequestBytes = 8 * 1024 + 3 * 6 * kAllTexts;

// Two digits at a time.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t DigitCount(uint64_t v) {
  size_t n = 1;
  while (v >= 100) {
    v /= 100;
    n += 2;
  }
  return n + (v >= 10 ? 1 : 0);
}

// Writes the digits of `v` ending just before `end`.
void WriteDigitsBackward(uint64_t v, char* end) {
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

// Copies n bytes with at most two (overlapping) fixed-size moves when n <= 32: no call into
// libc for the short texts, ids and times that make up most of a span.
inline void CopySmall(char* d, const char* s, size_t n) {
  if (n >= 16) {
    if (n > 32) {
      std::memcpy(d, s, n);
      return;
    }
    std::memcpy(d, s, 16);
    std::memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

// Whether `s` holds a quote, a backslash or a control byte, tested eight bytes at a time (the
// classic "has a zero byte" / "has a byte below n" word tricks, exact for existence).
bool NeedsEscape(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = kOnes * 0x80;
  const auto test = [](uint64_t w) {
    const uint64_t quote = w ^ (kOnes * '"');
    const uint64_t backslash = w ^ (kOnes * '\\');
    return ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
           ((backslash - kOnes) & ~backslash);
  };
  const char* p = s.data();
  size_t n = s.size();
  uint64_t found = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    found |= test(w);
  }
  if (n > 0) {
    if (s.size() >= 8) {
      // The last eight bytes, overlapping the ones already tested.
      uint64_t w;
      std::memcpy(&w, s.data() + s.size() - 8, 8);
      found |= test(w);
    } else {
      uint64_t w = kOnes * 'a';  // padding that needs no escape
      CopySmall(reinterpret_cast<char*>(&w), p, n);
      found |= test(w);
    }
  }
  return (found & kHigh) != 0;
}

// Writes into room a JsonBuffer made: every call must fit in the request's kMaxRequestBytes.
class Writer {
 public:
  explicit Writer(char* p) : p_(p) {}
  char* end() const { return p_; }

  template <size_t N>
  void Lit(const char (&s)[N]) {
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void Raw(const char* s, size_t n) {
    CopySmall(p_, s, n);
    p_ += n;
  }
  void Char(char c) { *p_++ = c; }
  void Hex16(uint64_t v) {
    WriteHex16(v, p_);
    p_ += 16;
  }
  void Int(int64_t value) {
    if (value < 0) {
      Char('-');
      value = -value;  // the record's integers are far from INT64_MIN
    }
    const auto v = static_cast<uint64_t>(value);
    const size_t n = DigitCount(v);
    WriteDigitsBackward(v, p_ + n);
    p_ += n;
  }
  // `s` escaped for a JSON string, without quotes.
  void Escaped(std::string_view s) {
    if (!NeedsEscape(s)) {
      Raw(s.data(), s.size());
      return;
    }
    for (const char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        Char('\\');
        Char(ch);
      } else if (c == '\n') {
        Lit("\\n");
      } else if (c == '\r') {
        Lit("\\r");
      } else if (c == '\t') {
        Lit("\\t");
      } else if (c < 0x20) {
        Lit("\\u00");
        Char(kHex[c >> 4]);
        Char(kHex[c & 0xf]);
      } else {
        Char(ch);
      }
    }
  }
  void Quoted(std::string_view s) {
    Char('"');
    Escaped(s);
    Char('"');
  }

 private:
  char* p_;
};

// A time as its decimal text, made once per request and copied wherever it appears.
struct TimeText {
  char text[20];
  uint8_t size = 0;
};

// Formats times: unix nanoseconds share their first ten digits (the second) across a batch,
// so those are formatted once per second and the nine below written per time.
class TimeFormatter {
 public:
  explicit TimeFormatter(int64_t unix_offset_ns) : offset_(unix_offset_ns) {}

  // `t` on the records' clock; 0 (not reached) stays 0.
  int64_t Unix(int64_t t) const { return t == 0 ? 0 : t + offset_; }

  void Format(int64_t unix_ns, TimeText& out) {
    constexpr uint64_t kBillion = 1'000'000'000;
    const auto v = static_cast<uint64_t>(std::max<int64_t>(unix_ns, 0));
    if (v < kBillion) {
      out.size = static_cast<uint8_t>(DigitCount(v));
      WriteDigitsBackward(v, out.text + out.size);
      return;
    }
    const uint64_t seconds = v / kBillion;
    auto below = static_cast<uint32_t>(v % kBillion);  // 32-bit divisions below
    if (seconds != seconds_) {
      seconds_ = seconds;
      seconds_size_ = DigitCount(seconds);
      WriteDigitsBackward(seconds, seconds_text_ + seconds_size_);
    }
    CopySmall(out.text, seconds_text_, seconds_size_);
    char* end = out.text + seconds_size_ + 9;
    for (int i = 0; i < 4; ++i) {
      end -= 2;
      std::memcpy(end, kDigitPairs + (below % 100) * 2, 2);
      below /= 100;
    }
    end[-1] = static_cast<char>('0' + below);
    out.size = static_cast<uint8_t>(seconds_size_ + 9);
  }

 private:
  int64_t offset_;
  uint64_t seconds_ = 0;  // 0: none formatted yet (a unix second is never 0 here)
  size_t seconds_size_ = 0;
  char seconds_text_[11];
};

// What every span of one request shares, formatted once.
struct RequestText {
  char trace[32];
  char server[16];
  TimeText received, parsed, admitted, connected, sent, head, client_head, first_token, done;
  std::string_view operation;  // gen_ai.operation.name (the path's)
};

// Writes the attribute list of one span: each call appends one {"key","value"} object. Keys
// are this file's constants, copied as fixed-size blocks.
class Attributes {
 public:
  explicit Attributes(Writer& w) : w_(w) { w_.Lit(",\"attributes\":["); }
  ~Attributes() { w_.Char(']'); }
  Attributes(const Attributes&) = delete;
  Attributes& operator=(const Attributes&) = delete;

  template <size_t N>
  void String(const char (&key)[N], std::string_view value) {
    if (value.empty()) return;
    Key(key);
    w_.Lit("{\"stringValue\":\"");
    w_.Escaped(value);
    w_.Lit("\"}}");
  }
  // A value from this code's own constants (operation names, error code names, digits):
  // nothing to escape.
  template <size_t N>
  void Constant(const char (&key)[N], std::string_view value) {
    if (value.empty()) return;
    Key(key);
    w_.Lit("{\"stringValue\":\"");
    w_.Raw(value.data(), value.size());
    w_.Lit("\"}}");
  }
  template <size_t N>
  void Int(const char (&key)[N], int64_t value) {
    Key(key);
    w_.Lit("{\"intValue\":\"");
    w_.Int(value);
    w_.Lit("\"}}");
  }
  // micros / 10^6 as a decimal: the same double a parser reads as the division's result.
  template <size_t N>
  void Micros(const char (&key)[N], int64_t micros) {
    Key(key);
    w_.Lit("{\"doubleValue\":");
    if (micros < 0) {
      w_.Char('-');
      micros = -micros;
    }
    w_.Int(micros / 1'000'000);
    int64_t fraction = micros % 1'000'000;
    if (fraction != 0) {
      char digits[6];
      WriteDigitsBackward(static_cast<uint64_t>(fraction), digits + 6);
      const size_t width = DigitCount(static_cast<uint64_t>(fraction));
      std::memset(digits, '0', 6 - width);
      size_t n = 6;
      while (digits[n - 1] == '0') --n;
      w_.Char('.');
      w_.Raw(digits, n);
    }
    w_.Lit("}}");
  }
  template <size_t N>
  void Bool(const char (&key)[N], bool value) {
    Key(key);
    if (value) {
      w_.Lit("{\"boolValue\":true}}");
    } else {
      w_.Lit("{\"boolValue\":false}}");
    }
  }
  template <size_t N>
  void StringArray1(const char (&key)[N], std::string_view value) {
    if (value.empty()) return;
    Key(key);
    w_.Lit("{\"arrayValue\":{\"values\":[{\"stringValue\":\"");
    w_.Escaped(value);
    w_.Lit("\"}]}}}");
  }

 private:
  template <size_t N>
  void Key(const char (&key)[N]) {
    if (!first_) w_.Char(',');
    first_ = false;
    w_.Lit("{\"key\":\"");
    w_.Lit(key);
    w_.Lit("\",\"value\":");
  }
  Writer& w_;
  bool first_ = true;
};

// Opens a span object up to its attributes: ids, kind, times (the name is the caller's:
// written between "name":" and the closing quote by `name`). `parent`: 16 hex characters or
// null (a root span).
template <typename Name>
void OpenSpan(Writer& w, const RequestText& t, const char* span_id, const char* parent,
              std::string_view tracestate, const Name& name, char kind, const TimeText& start,
              const TimeText& end) {
  w.Lit("{\"traceId\":\"");
  w.Raw(t.trace, sizeof t.trace);
  w.Lit("\",\"spanId\":\"");
  w.Raw(span_id, 16);
  w.Char('"');
  if (parent != nullptr) {
    w.Lit(",\"parentSpanId\":\"");
    w.Raw(parent, 16);
    w.Char('"');
  }
  if (!tracestate.empty()) {
    w.Lit(",\"traceState\":");
    w.Quoted(tracestate);
  }
  w.Lit(",\"name\":\"");
  name(w);
  w.Lit("\",\"kind\":");
  w.Char(kind);
  w.Lit(",\"startTimeUnixNano\":\"");
  w.Raw(start.text, start.size);
  w.Lit("\",\"endTimeUnixNano\":\"");
  w.Raw(end.text, end.size);
  w.Char('"');
}

void CloseSpan(Writer& w, bool error, std::string_view message) {
  if (error) {
    w.Lit(",\"status\":{\"code\":2");
    if (!message.empty()) {
      w.Lit(",\"message\":");
      w.Quoted(message);
    }
    w.Char('}');
  }
  w.Char('}');
}

const AttemptRecord* Answering(const SpanRecord& r) {
  return r.attempt_count == 0 ? nullptr : &r.attempts[r.attempt_count - 1];
}

void ServerSpan(Writer& w, const SpanRecord& r, const RequestText& t) {
  const auto name = [&r, &t](Writer& out) {
    std::string_view first = r.method;
    std::string_view second = r.path;
    if (r.kind == TraceKind::kModel) {
      first = t.operation;
      second = r.model;
    } else if (r.kind == TraceKind::kSearch) {
      first = "search";
      second = r.search_index.empty() ? r.model.view() : r.search_index.view();
    }
    out.Escaped(first);
    if (!second.empty()) {
      out.Char(' ');
      out.Escaped(second);
    }
  };
  char parent[16];
  if (r.parent_span_id != 0) WriteHex16(r.parent_span_id, parent);
  OpenSpan(w, t, t.server, r.parent_span_id != 0 ? parent : nullptr, r.tracestate, name,
           kKindServer, t.received, t.done);
  {
    Attributes a(w);
    if (r.kind == TraceKind::kModel) {
      a.Constant("gen_ai.operation.name", t.operation);
      a.String("gen_ai.request.model", r.model);
      if (const AttemptRecord* answer = Answering(r)) {
        a.String("gen_ai.provider.name", GenAiProviderName(answer->provider));
        a.String("gen_ai.response.model", answer->upstream_model);
      }
      if (r.input_tokens >= 0) a.Int("gen_ai.usage.input_tokens", r.input_tokens);
      if (r.output_tokens >= 0) a.Int("gen_ai.usage.output_tokens", r.output_tokens);
      a.StringArray1("gen_ai.response.finish_reasons", r.finish_reason);
      a.Bool("turnpike.stream", r.stream);
      a.Int("turnpike.attempts", r.attempts_made);
    } else if (r.kind == TraceKind::kSearch) {
      a.String("db.system.name", "elasticsearch");
      // The search door's operation label without its metrics prefix ("es_search" -> search).
      std::string_view op = r.model;
      if (op.rfind("es_", 0) == 0) op.remove_prefix(3);
      a.String("db.operation.name", op);
      a.String("db.namespace", r.search_index);
      a.String("turnpike.search.index", r.search_index);
    }
    a.String("http.request.method", r.method);
    a.Int("http.response.status_code", r.status);
    a.String("url.path", r.path);
    a.String("turnpike.tenant.id", r.tenant_id);
    a.String("turnpike.key.id", r.key_id);
    if (!r.tenant_id.empty()) a.Micros("turnpike.cost_usd", r.cost_micros);
    if (r.kind != TraceKind::kOther) a.Bool("turnpike.cache.hit", r.cache_hit);
    a.Constant("error.type", r.error);
  }
  if (r.phases.first_token != 0) {
    w.Lit(",\"events\":[{\"timeUnixNano\":\"");
    w.Raw(t.first_token.text, t.first_token.size);
    w.Lit("\",\"name\":\"gen_ai.first_token\"}]");
  }
  CloseSpan(w, r.status >= 500, r.error);
}

template <size_t N>
void PhaseSpan(Writer& w, const SpanRecord& r, const RequestText& t, uint64_t n,
               const char (&name)[N], int64_t start_ns, int64_t end_ns, const TimeText& start,
               const TimeText& end) {
  if (start_ns == 0 || end_ns == 0) return;
  w.Char(',');
  char id[16];
  WriteHex16(DeriveSpanId(r.span_id, n), id);
  OpenSpan(
      w, t, id, t.server, {}, [&name](Writer& out) { out.Lit(name); }, kKindInternal, start,
      end_ns < start_ns ? start : end);
  w.Char('}');
}

void AttemptSpans(Writer& w, const SpanRecord& r, const RequestText& t, TimeFormatter& times) {
  const std::string_view operation = t.operation;
  for (size_t i = 0; i < r.attempt_count; ++i) {
    const AttemptRecord& at = r.attempts[i];
    w.Char(',');
    char id[16];
    WriteHex16(at.span_id, id);
    TimeText start;
    TimeText end;
    const int64_t start_ns = times.Unix(at.start_ns);
    const int64_t end_ns = at.end_ns != 0 ? times.Unix(at.end_ns) : times.Unix(r.phases.done);
    times.Format(start_ns, start);
    times.Format(std::max(start_ns, end_ns), end);
    const auto name = [&operation, &at](Writer& out) {
      out.Raw(operation.data(), operation.size());  // a constant
      if (!at.upstream_model.empty()) {
        out.Char(' ');
        out.Escaped(at.upstream_model);
      }
    };
    OpenSpan(w, t, id, t.server, {}, name, kKindClient, start, end);
    const bool failed = at.status < 0 || at.status >= 400;
    {
      Attributes a(w);
      a.Constant("gen_ai.operation.name", operation);
      a.String("gen_ai.provider.name", GenAiProviderName(at.provider));
      a.String("gen_ai.request.model", at.upstream_model);
      a.String("server.address", at.server_address);
      if (at.server_port != 0) a.Int("server.port", at.server_port);
      if (at.status >= 0) a.Int("http.response.status_code", at.status);
      a.String("turnpike.deployment", at.deployment);
      if (failed) {
        if (at.status < 0) {
          a.Constant("error.type", "connection");
        } else {
          char digits[12];
          const auto v = static_cast<uint64_t>(at.status);
          const size_t n = DigitCount(v);
          WriteDigitsBackward(v, digits + n);
          a.Constant("error.type", {digits, n});
        }
      }
    }
    CloseSpan(w, failed, {});
  }
}

void RequestSpans(Writer& w, const SpanRecord& r, TimeFormatter& times) {
  RequestText t;
  WriteHex16(r.trace_hi, t.trace);
  WriteHex16(r.trace_lo, t.trace + 16);
  WriteHex16(r.span_id, t.server);
  t.operation = GenAiOperationName(r.path);
  const PhaseTimes& p = r.phases;
  const int64_t received = times.Unix(p.received);
  const int64_t parsed = times.Unix(p.parsed);
  const int64_t admitted = times.Unix(p.admitted);
  const int64_t connected = times.Unix(p.upstream_connected);
  const int64_t sent = times.Unix(p.upstream_sent);
  const int64_t head = times.Unix(p.upstream_head);
  const int64_t client_head = times.Unix(p.client_head);
  const int64_t done = times.Unix(p.done);
  times.Format(received, t.received);
  times.Format(std::max(received, done), t.done);
  if (p.first_token != 0) times.Format(times.Unix(p.first_token), t.first_token);
  if (parsed != 0) times.Format(parsed, t.parsed);
  if (admitted != 0) times.Format(admitted, t.admitted);
  if (connected != 0) times.Format(connected, t.connected);
  if (sent != 0) times.Format(sent, t.sent);
  if (head != 0) times.Format(head, t.head);
  if (client_head != 0) times.Format(client_head, t.client_head);
  ServerSpan(w, r, t);
  PhaseSpan(w, r, t, 1, "gateway.parse", received, parsed, t.received, t.parsed);
  PhaseSpan(w, r, t, 2, "gateway.governance", parsed, admitted, t.parsed, t.admitted);
  PhaseSpan(w, r, t, 3, "upstream.connect", admitted, connected, t.admitted, t.connected);
  PhaseSpan(w, r, t, 4, "upstream.first_byte", sent, head, t.sent, t.head);
  if (r.stream) {
    PhaseSpan(w, r, t, 5, "response.stream", client_head, done, t.client_head, t.done);
  } else {
    PhaseSpan(w, r, t, 5, "response.write", client_head, done, t.client_head, t.done);
  }
  AttemptSpans(w, r, t, times);
}
}  // namespace

void JsonBuffer::Grow(size_t n) {
  const size_t capacity = std::max(capacity_ * 2, size_ + n);
  auto data = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

std::string_view GenAiProviderName(std::string_view dialect) {
  if (dialect.rfind("openai", 0) == 0) return "openai";
  if (dialect == "gemini") return "gcp.gemini";
  return dialect;
}

std::string_view GenAiOperationName(std::string_view path) {
  if (path.find("mbed") != std::string_view::npos)
    return "embeddings";  // embeddings, :embedContent
  if (path.find("/completions") != std::string_view::npos &&
      path.find("chat/completions") == std::string_view::npos) {
    return "text_completion";
  }
  return "chat";
}

void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    int64_t unix_offset_ns, JsonBuffer& out) {
  {
    Writer w(out.Room(256 + 6 * service_name.size()));
    w.Lit(
        "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
        "\"value\":{\"stringValue\":");
    w.Quoted(service_name);
    w.Lit("}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"turnpike\"},\"spans\":[");
    out.Commit(w.end());
  }
  TimeFormatter times(unix_offset_ns);
  bool first = true;
  for (const SpanRecord& r : records) {
    Writer w(out.Room(kMaxRequestBytes));
    if (!first) w.Char(',');
    first = false;
    RequestSpans(w, r, times);
    out.Commit(w.end());
  }
  Writer w(out.Room(16));
  w.Lit("]}]}]}");
  out.Commit(w.end());
}

void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    std::string& out) {
  JsonBuffer buffer;
  EncodeOtlpJson(records, service_name, 0, buffer);
  out.append(buffer.view());
}

}  // namespace turnpike::observability
