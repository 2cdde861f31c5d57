#include "observability/trace_context.h"

#include <random>

namespace turnpike::observability {
namespace {
constexpr size_t kTraceIdStart = 3;
constexpr size_t kSpanIdStart = 36;
constexpr size_t kFlagsStart = 53;

// -1 for anything but a lowercase hex digit (the spec forbids uppercase).
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool ReadHex(std::string_view text, uint64_t& out) {
  uint64_t v = 0;
  for (char c : text) {
    const int d = HexValue(c);
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

}  // namespace

std::optional<TraceParent> ParseTraceParent(std::string_view value) {
  if (value.size() < kTraceParentSize) return std::nullopt;
  uint64_t version = 0;
  if (!ReadHex(value.substr(0, 2), version) || version == 0xff) return std::nullopt;
  if (version == 0 && value.size() != kTraceParentSize) return std::nullopt;
  if (value.size() > kTraceParentSize && value[kTraceParentSize] != '-') return std::nullopt;
  if (value[2] != '-' || value[kSpanIdStart - 1] != '-' || value[kFlagsStart - 1] != '-') {
    return std::nullopt;
  }
  TraceParent p;
  uint64_t flags = 0;
  if (!ReadHex(value.substr(kTraceIdStart, 16), p.trace_hi) ||
      !ReadHex(value.substr(kTraceIdStart + 16, 16), p.trace_lo) ||
      !ReadHex(value.substr(kSpanIdStart, 16), p.span_id) ||
      !ReadHex(value.substr(kFlagsStart, 2), flags)) {
    return std::nullopt;
  }
  if ((p.trace_hi == 0 && p.trace_lo == 0) || p.span_id == 0) return std::nullopt;
  p.sampled = (flags & 1) != 0;
  return p;
}

void RenderTraceParent(uint64_t trace_hi, uint64_t trace_lo, uint64_t span_id, bool sampled,
                       char* out) {
  out[0] = '0';
  out[1] = '0';
  out[2] = '-';
  WriteHex16(trace_hi, out + kTraceIdStart);
  WriteHex16(trace_lo, out + kTraceIdStart + 16);
  out[kSpanIdStart - 1] = '-';
  WriteHex16(span_id, out + kSpanIdStart);
  out[kFlagsStart - 1] = '-';
  out[kFlagsStart] = '0';
  out[kFlagsStart + 1] = sampled ? '1' : '0';
}

bool ShouldSample(double ratio, const std::optional<TraceParent>& parent, uint64_t trace_lo) {
  if (ratio >= 1.0) return true;
  if (ratio <= 0.0) return false;
  if (parent) return parent->sampled;
  // 2^64 as a double: ratio * 2^64 stays below it for ratio < 1.
  constexpr double kTwoTo64 = 18446744073709551616.0;
  return static_cast<double>(trace_lo) < ratio * kTwoTo64;
}

namespace trace_detail {
[[gnu::noinline, gnu::cold]] uint64_t SeedState() {
  return ((static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()) | 1;
}
}  // namespace trace_detail

std::string_view TraceState::BeginAttempt(std::chrono::steady_clock::time_point now) {
  const uint64_t id = NewSpanId();
  recording_ = attempt_count < kMaxAttemptSpans;
  if (recording_) {
    AttemptSpan& a = attempts[attempt_count++];
    a = AttemptSpan{};
    a.span_id = id;
    a.start = now;
  }
  RenderTraceParent(trace_hi, trace_lo, id, sampled, traceparent.data());
  return {traceparent.data(), traceparent.size()};
}

void TraceState::EndAttempt(std::chrono::steady_clock::time_point now, int status) {
  if (!recording_) return;
  AttemptSpan& a = attempts[attempt_count - 1];
  a.end = now;
  a.status = status;
  recording_ = false;
}

}  // namespace turnpike::observability
