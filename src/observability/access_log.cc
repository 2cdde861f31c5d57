// AppendAccessLogLine: hand-rolled JSON because it runs once per request on a worker thread.
// The line is written through a raw cursor into space reserved once from an upper bound on
// its size; per-append capacity checks were most of the cost (see bench/access_log_bench.cc).
#include "observability/access_log.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace turnpike::observability {
namespace {

// Upper bound of everything but the string values: keys, punctuation, time and twelve
// numbers of at most 24 characters each.
constexpr size_t kMaxFixedBytes = 1024;
// A string byte becomes at most 6 bytes ("\u00XX"); invalid UTF-8 becomes 3 bytes per byte.
constexpr size_t kMaxEscapedBytesPerByte = 6;
constexpr size_t kMaxNumberChars = 24;
constexpr int kMillisDecimals = 3;
constexpr int64_t kThousand = 1000;
constexpr double kMaxExactThousandths = 9e15;                  // below 2^53: every integer is exact
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
constexpr char kHexDigits[] = "0123456789abcdef";

struct Utf8Step {
  bool valid;
  size_t length;  // bytes to consume: the sequence, or its maximal invalid prefix (>= 1)
};

// Well-formed UTF-8 per Unicode Table 3-7 (no overlongs, no surrogates, <= U+10FFFF).
Utf8Step DecodeUtf8(const unsigned char* p, size_t n) {
  const unsigned char lead = p[0];
  size_t trailing = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    trailing = 1;
  } else if (lead == 0xE0) {
    trailing = 2, lo = 0xA0;
  } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
    trailing = 2;
  } else if (lead == 0xED) {
    trailing = 2, hi = 0x9F;
  } else if (lead == 0xF0) {
    trailing = 3, lo = 0x90;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    trailing = 3;
  } else if (lead == 0xF4) {
    trailing = 3, hi = 0x8F;
  } else {
    return {false, 1};
  }
  for (size_t i = 1; i <= trailing; ++i) {
    if (i >= n) return {false, i};
    const unsigned char min = i == 1 ? lo : 0x80;
    const unsigned char max = i == 1 ? hi : 0xBF;
    if (p[i] < min || p[i] > max) return {false, i};
  }
  return {true, trailing + 1};
}

// Writes through a cursor into space the caller has already reserved.
class LineWriter {
 public:
  explicit LineWriter(char* cursor) : p_(cursor) {}
  char* cursor() const { return p_; }

  void Raw(std::string_view text) {
    if (text.empty()) return;  // a default string_view has data() == nullptr
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }
  void Char(char c) { *p_++ = c; }
  // `,"key":` — every field but the first ("time") starts with a comma.
  void Key(std::string_view key) {
    Raw(",\"");
    Raw(key);
    Raw("\":");
  }
  void Int(int64_t value) { p_ = std::to_chars(p_, p_ + kMaxNumberChars, value).ptr; }
  void Padded(int64_t value, int width) {
    for (int i = width - 1; i >= 0; --i, value /= 10) p_[i] = static_cast<char>('0' + value % 10);
    p_ += width;
  }
  void String(std::string_view text);
  void Millis(double value);
  void Time(std::chrono::system_clock::time_point time);

 private:
  char* p_;
};

void LineWriter::String(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  Char('"');
  size_t clean_from = 0;  // start of the run of bytes that need no escaping
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    Raw(text.substr(clean_from, i - clean_from));
    if (c >= 0x80) {
      const Utf8Step step = DecodeUtf8(s + i, n - i);
      Raw(step.valid ? text.substr(i, step.length) : kReplacementChar);
      i += step.length;
    } else {
      Char('\\');
      switch (c) {
        case '"':
        case '\\':
          Char(static_cast<char>(c));
          break;
        case '\n':
          Char('n');
          break;
        case '\r':
          Char('r');
          break;
        case '\t':
          Char('t');
          break;
        default:  // other control characters and DEL
          Raw("u00");
          Char(kHexDigits[c >> 4]);
          Char(kHexDigits[c & 0xF]);
      }
      ++i;
    }
    clean_from = i;
  }
  Raw(text.substr(clean_from));
  Char('"');
}

// Three decimals. Integer arithmetic: std::to_chars(double, fixed) costs several times more.
void LineWriter::Millis(double value) {
  if (!std::isfinite(value)) {
    Raw("null");
    return;
  }
  const double thousandths = std::round(value * kThousand);
  if (std::fabs(thousandths) >= kMaxExactThousandths) {  // absurd, but keep it bounded
    p_ = std::to_chars(p_, p_ + kMaxNumberChars, value).ptr;
    return;
  }
  int64_t scaled = static_cast<int64_t>(thousandths);
  if (scaled < 0) {
    Char('-');
    scaled = -scaled;
  }
  Int(scaled / kThousand);
  Char('.');
  Padded(scaled % kThousand, kMillisDecimals);
}

// "2024-05-01T12:34:56.789Z", from civil-calendar arithmetic (no gmtime, no locale).
void LineWriter::Time(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(time);
  const auto day = floor<days>(ms);
  const year_month_day date{day};
  const hh_mm_ss clock{ms - day};
  Char('"');
  Padded(static_cast<int>(date.year()), 4);
  Char('-');
  Padded(static_cast<unsigned>(date.month()), 2);
  Char('-');
  Padded(static_cast<unsigned>(date.day()), 2);
  Char('T');
  Padded(clock.hours().count(), 2);
  Char(':');
  Padded(clock.minutes().count(), 2);
  Char(':');
  Padded(clock.seconds().count(), 2);
  Char('.');
  Padded(clock.subseconds().count(), 3);
  Raw("Z\"");
}

size_t MaxLineBytes(const AccessRecord& r) {
  const size_t strings = r.request_id.size() + r.method.size() + r.path.size() + r.model.size() +
                         r.deployment.size() + r.finish_reason.size() + r.error.size() +
                         r.client.size();
  return kMaxFixedBytes + kMaxEscapedBytesPerByte * strings;
}

}  // namespace

void AppendAccessLogLine(const AccessRecord& r, std::string& out) {
  const size_t start = out.size();
  out.resize(start + MaxLineBytes(r));
  LineWriter w(out.data() + start);
  w.Raw("{\"time\":");
  w.Time(r.time);
  w.Key("request_id");
  w.String(r.request_id);
  w.Key("method");
  w.String(r.method);
  w.Key("path");
  w.String(r.path);
  w.Key("status");
  w.Int(r.status);
  w.Key("model");
  w.String(r.model);
  w.Key("deployment");
  w.String(r.deployment);
  if (r.upstream_status >= 0) {
    w.Key("upstream_status");
    w.Int(r.upstream_status);
  }
  w.Key("attempts");
  w.Int(r.attempts);
  w.Key("stream");
  w.Raw(r.stream ? "true" : "false");
  w.Key("bytes_in");
  w.Int(r.bytes_in);
  w.Key("bytes_out");
  w.Int(r.bytes_out);
  w.Key("total_ms");
  w.Millis(r.total_ms);
  w.Key("overhead_us");
  w.Int(r.overhead_us);
  if (r.upstream_ttfb_ms >= 0 && std::isfinite(r.upstream_ttfb_ms)) {
    w.Key("upstream_ttfb_ms");
    w.Millis(r.upstream_ttfb_ms);
  }
  if (r.ttft_ms >= 0 && std::isfinite(r.ttft_ms)) {
    w.Key("ttft_ms");
    w.Millis(r.ttft_ms);
  }
  if (r.prompt_tokens >= 0) {
    w.Key("prompt_tokens");
    w.Int(r.prompt_tokens);
  }
  if (r.completion_tokens >= 0) {
    w.Key("completion_tokens");
    w.Int(r.completion_tokens);
  }
  if (r.cached_tokens >= 0) {
    w.Key("cached_tokens");
    w.Int(r.cached_tokens);
  }
  w.Key("finish_reason");
  w.String(r.finish_reason);
  if (!r.error.empty()) {
    w.Key("error");
    w.String(r.error);
  }
  w.Key("client");
  w.String(r.client);
  w.Raw("}\n");
  out.resize(static_cast<size_t>(w.cursor() - out.data()));
}

}  // namespace turnpike::observability
