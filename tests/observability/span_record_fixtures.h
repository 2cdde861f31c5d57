// Finished requests (span_record.h) for the OTLP encoders' tests.
#pragma once

#include "observability/span_record.h"

namespace turnpike::observability {

// A streamed chat call with a parent trace, every phase, a first token and two attempts (the
// first failed with a 503, the second answered).
inline SpanRecord ChatRecord() {
  SpanRecord r;
  r.trace_hi = 0x4bf92f3577b34da6ULL;
  r.trace_lo = 0xa3ce929d0e0e4736ULL;
  r.span_id = 0x1111111111111111ULL;
  r.parent_span_id = 0x00f067aa0ba902b7ULL;
  r.kind = TraceKind::kModel;
  r.phases = {1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 2000};
  r.tracestate = "vendor=1";
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.model = "gpt-4o-mini";
  r.finish_reason = "stop";
  r.tenant_id = "t1";
  r.key_id = "k1";
  r.status = 200;
  r.input_tokens = 12;
  r.output_tokens = 5;
  r.cost_micros = 1500;
  r.stream = true;
  r.attempts_made = 2;
  r.attempt_count = 2;
  r.attempts[0] = {0x2222222222222222ULL, 1250,       1290,        503, "d1",
                   "anthropic",           "claude-x", "127.0.0.1", 9000};
  r.attempts[1] = {0x3333333333333333ULL, 1300, 0, 200, "d2", "gemini", "gemini-2", "host", 0};
  return r;
}

// A request of neither door (GET /healthz), root of its trace, no phase but its ends.
inline SpanRecord OtherRecord() {
  SpanRecord r;
  r.trace_hi = 1;
  r.trace_lo = 2;
  r.span_id = 3;
  r.method = "GET";
  r.path = "/healthz";
  r.status = 200;
  r.phases.received = 10;
  r.phases.done = 20;
  return r;
}

// A search door request that failed (500, "internal").
inline SpanRecord SearchRecord() {
  SpanRecord r = OtherRecord();
  r.kind = TraceKind::kSearch;
  r.model = "es_search";
  r.search_index = "docs";
  r.method = "POST";
  r.path = "/es/docs/_search";
  r.status = 500;
  r.error = "internal";
  return r;
}

}  // namespace turnpike::observability
