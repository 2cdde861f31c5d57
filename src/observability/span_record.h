// What a finished, sampled request hands the OpenTelemetry exporter: a compact record with its
// own copies of the strings, turned into OTLP spans (a server span, its phases' child spans and
// one client span per upstream attempt) on the exporter's thread, never on the worker.
//
// Ownership: built on the request's worker (core/request_trace.h), moved into the exporter's
// queue, encoded and destroyed on the exporter's thread. Times are unix nanoseconds; 0 = the
// phase was not reached.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "observability/trace_context.h"

namespace turnpike::observability {

struct AttemptRecord {
  uint64_t span_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int status = -1;
  std::string deployment;
  std::string provider;  // the dialect's name (openai, anthropic, gemini, ...)
  std::string upstream_model;
  std::string server_address;
  uint16_t server_port = 0;
};

// The request's phases (core/request_context.h Phases) as unix nanoseconds.
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
  uint64_t trace_hi = 0;
  uint64_t trace_lo = 0;
  uint64_t span_id = 0;
  uint64_t parent_span_id = 0;
  TraceKind kind = TraceKind::kOther;
  PhaseTimes phases;
  std::string tracestate;
  std::string method;
  std::string path;
  std::string model;  // the public model name (kModel), or the search door's operation
  std::string search_index;
  std::string finish_reason;
  std::string error;  // the error code's name; empty: none
  std::string tenant_id;
  std::string key_id;
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

}  // namespace turnpike::observability
