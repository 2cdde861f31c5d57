// W3C Trace Context for OpenTelemetry traces: a request's trace state (ids, sampling, the
// upstream attempts' spans), traceparent parsing and rendering, the sampling decision and span
// ids. What a finished request hands the exporter is span_record.h; the exporter is
// otlp_exporter.h.
//
// Ownership: a TraceState lives in the request's context (core/request_context.h) and is
// filled on the request's worker: when tracing is off its `on` stays false and nothing else is
// touched (no allocation, no header read or written). Thread safety: a TraceState belongs to
// its request's worker; the free functions are pure except NewSpanId (a per-thread generator).
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace turnpike::observability {

// "00-" + 32 hex trace id + "-" + 16 hex span id + "-" + 2 hex flags.
inline constexpr size_t kTraceParentSize = 55;
// Upstream attempts recorded as spans per request; later attempts are counted, not recorded.
inline constexpr size_t kMaxAttemptSpans = 4;

struct TraceParent {
  uint64_t trace_hi = 0;  // the trace id's first 8 bytes (big-endian as hex)
  uint64_t trace_lo = 0;
  uint64_t span_id = 0;  // the parent's span id
  bool sampled = false;  // flags bit 0
};

// Parses a traceparent header value. nullopt for anything the W3C spec says to ignore: bad
// length or hex (uppercase too), version "ff", an all-zero trace or span id, version 00 with
// trailing data. A higher version's value is read by its first 55 characters when what
// follows is "-..." (the spec's forward compatibility).
std::optional<TraceParent> ParseTraceParent(std::string_view value);

// Writes exactly kTraceParentSize characters (version 00) to `out`.
void RenderTraceParent(uint64_t trace_hi, uint64_t trace_lo, uint64_t span_id, bool sampled,
                       char* out);

// Lowercase hex of `v`, 16 characters, to `out`. With SSE2 (every x86-64): the bytes, most
// significant first, split into nibbles interleaved high then low, each turned into a digit
// (nibbles above 9 moved up to 'a') in one vector. Elsewhere: each half's nibbles spread to one
// byte each, then turned into digits eight at a time. Neither has a table or a branch.
inline void WriteHex16(uint64_t v, char* out) {
#if defined(__SSE2__)
  const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(__builtin_bswap64(v)));
  const __m128i low4 = _mm_set1_epi8(0x0f);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low4);
  const __m128i nibbles = _mm_unpacklo_epi8(high, _mm_and_si128(bytes, low4));
  const __m128i letters =
      _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
  const __m128i digits = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), digits);
#else
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  for (int half = 0; half < 2; ++half) {
    uint64_t s = half == 0 ? v >> 32 : v & 0xffffffffULL;
    s = ((s & 0xffff0000ULL) << 16) | (s & 0x0000ffffULL);
    s = ((s & 0x0000ff000000ff00ULL) << 8) | (s & 0x000000ff000000ffULL);
    s = ((s & 0x00f000f000f000f0ULL) << 4) | (s & 0x000f000f000f000fULL);
    // Byte 7 holds the first digit: it goes first in memory.
    if constexpr (std::endian::native == std::endian::little) s = __builtin_bswap64(s);
    s += kOnes * '0' + (((s + kOnes * 6) >> 4) & kOnes) * ('a' - '0' - 10);
    std::memcpy(out + half * 8, &s, 8);
  }
#endif
}

// Whether a request is recorded. A parent (the client's traceparent) decides when the ratio is
// below 1 (parent-based sampling); at ratio 1 every trace is recorded, at 0 none; otherwise a
// new trace is recorded when its trace id's low 64 bits fall below ratio * 2^64 (the
// TraceIdRatioBased rule, so every hop that sees the id decides alike).
bool ShouldSample(double ratio, const std::optional<TraceParent>& parent, uint64_t trace_lo);

namespace trace_detail {
// SplitMix64's step: advances `state`, returns its next output.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A thread's first generator state, from the system's entropy; never 0. Out of line and cold:
// its std::random_device would give every caller a frame of kilobytes.
uint64_t SeedState();
}  // namespace trace_detail

// A random non-zero 64-bit id from this thread's generator (seeded once per thread).
inline uint64_t NewSpanId() {
  // Constant-initialised (no TLS init guard on every call); seeded on first use.
  thread_local uint64_t state = 0;
  if (state == 0) [[unlikely]] {
    state = trace_detail::SeedState();
  }
  uint64_t id = 0;
  while (id == 0) id = trace_detail::SplitMix64(state);
  return id;
}

// The `n`th child id of a random span id `seed` (the exporter's phase spans): a distinct odd
// multiple of 2^64 / phi mixed in per n, so a request's ids differ from each other and from
// `seed`, and are as random as it is; never 0.
inline uint64_t DeriveSpanId(uint64_t seed, uint64_t n) {
  const uint64_t id = seed ^ (n * 0x9e3779b97f4a7c15ULL);
  return id == 0 ? n : id;
}

enum class TraceKind : uint8_t {
  kModel,   // a model call (LLM door): "chat {model}"
  kSearch,  // a search door request: "search {index}"
  kOther,   // anything else: "{method} {path}"
};

// One upstream attempt, as the model call saw it; views point into the route table, which
// outlives the request.
struct AttemptSpan {
  uint64_t span_id = 0;
  std::chrono::steady_clock::time_point start{};
  std::chrono::steady_clock::time_point end{};  // unset: the answering attempt (ends with it)
  int status = -1;                              // the upstream's status; -1: none (an error)
  std::string_view deployment;
  std::string_view provider;  // the dialect's name (route_table.h DeploymentTarget::provider)
  std::string_view upstream_model;
  std::string_view server_address;  // the origin's host
  uint16_t server_port = 0;
};

struct TraceState {
  bool on = false;       // tracing is on: ids below are set and attempts are recorded
  bool sampled = false;  // the request's spans are exported
  TraceKind kind = TraceKind::kOther;
  uint8_t attempt_count = 0;  // recorded in `attempts` (at most kMaxAttemptSpans)
  uint64_t trace_hi = 0;
  uint64_t trace_lo = 0;
  uint64_t span_id = 0;         // the server span's
  uint64_t parent_span_id = 0;  // the client's span (0: a new trace)
  std::string tracestate;       // the client's, passed on as received (empty: none)
  std::string search_index;     // kSearch: the index (or pattern) searched
  std::array<AttemptSpan, kMaxAttemptSpans> attempts{};
  // The traceparent the upstream attempt in flight is sent (RenderTraceParent).
  std::array<char, kTraceParentSize> traceparent{};

  // Starts an attempt's span (a new span id, the traceparent for its request), returns the
  // header value to send; the span is recorded while fewer than kMaxAttemptSpans are.
  std::string_view BeginAttempt(std::chrono::steady_clock::time_point now);
  // The attempt in flight ended (failed or moved on) with the upstream's `status` (-1: none).
  void EndAttempt(std::chrono::steady_clock::time_point now, int status);
  // The attempt in flight's span; nullptr when it is not recorded (past kMaxAttemptSpans).
  AttemptSpan* recording() { return recording_ ? &attempts[attempt_count - 1] : nullptr; }

 private:
  bool recording_ = false;  // the attempt in flight has a slot in `attempts`
};

}  // namespace turnpike::observability
