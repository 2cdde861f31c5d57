#include <algorithm>
#include <cstring>

#include "observability/otlp_encoding.h"
#include "observability/otlp_spans.h"

namespace turnpike::observability {
namespace {
using otlp::DigitCount;
using otlp::kDigitPairs;
using otlp::WriteDigitsBackward;

constexpr char kHex[] = "0123456789abcdef";

// A request's spans take at most this many bytes: constants, ids and numbers (a few KB) and
// every text of the record written up to three times, six bytes per byte when escaped.
constexpr size_t kMaxRequestBytes = 8 * 1024 + 3 * 6 * otlp::kAllTexts;

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

// A time as its decimal text.
struct TimeText {
  char text[20];
  uint8_t size = 0;
};

// Formats times: unix nanoseconds share their first ten digits (the second) across a batch,
// so those are formatted once per second and the nine below written per time.
class TimeFormatter {
 public:
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
  uint64_t seconds_ = 0;  // 0: none formatted yet (a unix second is never 0 here)
  size_t seconds_size_ = 0;
  char seconds_text_[11];
};

// The span writer otlp_spans.h drives, in JSON. It remembers the last time it formatted and
// the trace's and the parent's hex, which the spans of one request share.
class JsonSpans {
 public:
  JsonSpans(Writer& w, TimeFormatter& times) : w_(w), times_(times) {}

  void OpenSpan(const otlp::SpanHead& h) {
    if (!first_span_) w_.Char(',');
    first_span_ = false;
    if (h.trace_hi != trace_hi_ || h.trace_lo != trace_lo_ || !have_trace_) {
      WriteHex16(h.trace_hi, trace_);
      WriteHex16(h.trace_lo, trace_ + 16);
      trace_hi_ = h.trace_hi;
      trace_lo_ = h.trace_lo;
      have_trace_ = true;
    }
    w_.Lit("{\"traceId\":\"");
    w_.Raw(trace_, sizeof trace_);
    w_.Lit("\",\"spanId\":\"");
    w_.Hex16(h.span_id);
    w_.Char('"');
    if (h.parent_span_id != 0) {
      if (h.parent_span_id != parent_id_) {
        WriteHex16(h.parent_span_id, parent_);
        parent_id_ = h.parent_span_id;
      }
      w_.Lit(",\"parentSpanId\":\"");
      w_.Raw(parent_, sizeof parent_);
      w_.Char('"');
    }
    if (!h.tracestate.empty()) {
      w_.Lit(",\"traceState\":");
      w_.Quoted(h.tracestate);
    }
    w_.Lit(",\"name\":\"");
    if (h.name.first_is_constant) {
      w_.Raw(h.name.first.data(), h.name.first.size());
    } else {
      w_.Escaped(h.name.first);
    }
    if (!h.name.second.empty()) {
      w_.Char(' ');
      w_.Escaped(h.name.second);
    }
    w_.Lit("\",\"kind\":");
    w_.Char(static_cast<char>('0' + static_cast<int>(h.kind)));
    w_.Lit(",\"startTimeUnixNano\":\"");
    Time(h.start);
    w_.Lit("\",\"endTimeUnixNano\":\"");
    Time(h.end);
    w_.Char('"');
  }

  template <size_t N>
  void PhaseSpan(const SpanRecord& r, uint64_t span_id, const char (&name)[N], int64_t start,
                 int64_t end) {
    OpenSpan(otlp::SpanHead{.trace_hi = r.trace_hi,
                            .trace_lo = r.trace_lo,
                            .span_id = span_id,
                            .parent_span_id = r.span_id,
                            .tracestate = {},
                            .name = {std::string_view(name, N - 1), {}, true},
                            .kind = otlp::SpanKind::kInternal,
                            .start = start,
                            .end = end});
    CloseSpan(false, {});
  }

  void BeginAttributes() {
    w_.Lit(",\"attributes\":[");
    first_attribute_ = true;
  }
  void EndAttributes() { w_.Char(']'); }

  template <size_t N>
  void String(const char (&key)[N], std::string_view value) {
    if (value.empty()) return;
    Key(key);
    w_.Lit("{\"stringValue\":\"");
    w_.Escaped(value);
    w_.Lit("\"}}");
  }
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

  void Event(int64_t unix_ns, std::string_view name) {
    w_.Lit(",\"events\":[{\"timeUnixNano\":\"");
    Time(unix_ns);
    w_.Lit("\",\"name\":\"");
    w_.Raw(name.data(), name.size());
    w_.Lit("\"}]");
  }

  void CloseSpan(bool error, std::string_view message) {
    if (error) {
      w_.Lit(",\"status\":{\"code\":2");
      if (!message.empty()) {
        w_.Lit(",\"message\":");
        w_.Quoted(message);
      }
      w_.Char('}');
    }
    w_.Char('}');
  }

 private:
  template <size_t N>
  void Key(const char (&key)[N]) {
    if (!first_attribute_) w_.Char(',');
    first_attribute_ = false;
    w_.Lit("{\"key\":\"");
    w_.Lit(key);
    w_.Lit("\",\"value\":");
  }
  // A span's end is often the next one's start: the last time formatted is kept.
  void Time(int64_t unix_ns) {
    if (unix_ns != last_time_ || last_.size == 0) {
      times_.Format(unix_ns, last_);
      last_time_ = unix_ns;
    }
    w_.Raw(last_.text, last_.size);
  }

  Writer& w_;
  TimeFormatter& times_;
  bool first_span_ = true;
  bool first_attribute_ = true;
  bool have_trace_ = false;
  uint64_t trace_hi_ = 0;
  uint64_t trace_lo_ = 0;
  uint64_t parent_id_ = 0;
  char trace_[32];
  char parent_[16];
  int64_t last_time_ = 0;
  TimeText last_;
};
}  // namespace

void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    int64_t unix_offset_ns, OtlpBuffer& out) {
  {
    Writer w(out.Room(256 + 6 * service_name.size()));
    w.Lit(
        "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
        "\"value\":{\"stringValue\":");
    w.Quoted(service_name);
    w.Lit("}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"turnpike\"},\"spans\":[");
    out.Commit(w.end());
  }
  TimeFormatter times;
  const otlp::UnixClock unix(unix_offset_ns);
  bool first = true;
  for (const SpanRecord& r : records) {
    Writer w(out.Room(kMaxRequestBytes));
    if (!first) w.Char(',');
    first = false;
    JsonSpans spans(w, times);
    otlp::WriteRequestSpans(spans, r, unix);
    out.Commit(w.end());
  }
  Writer w(out.Room(16));
  w.Lit("]}]}]}");
  out.Commit(w.end());
}

void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    std::string& out) {
  OtlpBuffer buffer;
  EncodeOtlpJson(records, service_name, 0, buffer);
  out.append(buffer.view());
}

}  // namespace turnpike::observability
