#include "core/request_trace.h"

#include "core/worker_core.h"

namespace turnpike::core {
namespace {

template <typename Request>
std::string_view Header(const Request& request, std::string_view name) {
  auto it = request.find(name);
  return it == request.end() ? std::string_view{} : std::string_view(it->value());
}

// A phase's time as the record carries it: steady-clock nanoseconds (the exporter adds the
// clocks' offset); 0 = not reached.
int64_t Nanos(Clock::time_point t) {
  if (t == Clock::time_point{}) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Writes the request's spans into `r`, a queue slot holding an older record's bytes or none:
// every field is assigned here (the attempts past attempt_count excepted: nothing reads them).
void Fill(observability::SpanRecord& r, const ExchangeRecord& exchange, const RequestContext& ctx) {
  const observability::TraceState& t = ctx.trace;
  r.trace_hi = t.trace_hi;
  r.trace_lo = t.trace_lo;
  r.span_id = t.span_id;
  r.parent_span_id = t.parent_span_id;
  r.kind = t.kind != observability::TraceKind::kOther ? t.kind
           : ctx.model.empty()                        ? observability::TraceKind::kOther
                                                      : observability::TraceKind::kModel;
  const Phases& p = ctx.phases;
  r.phases = {Nanos(p.received),           Nanos(p.parsed),        Nanos(p.admitted),
              Nanos(p.upstream_connected), Nanos(p.upstream_sent), Nanos(p.upstream_head),
              Nanos(p.client_head),        Nanos(p.first_token),   Nanos(p.done)};
  observability::AssignTraceState(r.tracestate, t.tracestate);
  r.method = exchange.method;
  r.path = exchange.path;
  r.model = ctx.model;
  r.search_index = t.search_index;
  r.finish_reason = ctx.finish_reason;
  r.error = ctx.error ? ErrorCodeName(*ctx.error) : std::string_view{};
  r.tenant_id = ctx.principal.tenant != nullptr ? std::string_view(ctx.principal.tenant->tenant.id)
                                                : std::string_view{};
  r.key_id = ctx.principal.key != nullptr ? std::string_view(ctx.principal.key->key.public_id)
                                          : std::string_view{};
  r.status = ctx.status;
  r.input_tokens = ctx.usage.prompt_tokens;
  r.output_tokens = ctx.usage.completion_tokens;
  r.cost_micros = ctx.cost_micros;
  r.stream = ctx.stream;
  r.cache_hit = ctx.cache_status == store::CacheStatus::kHit;
  r.attempts_made = ctx.attempts_made;
  r.attempt_count = t.attempt_count;
  for (size_t i = 0; i < t.attempt_count; ++i) {
    const observability::AttemptSpan& a = t.attempts[i];
    observability::AttemptRecord& out = r.attempts[i];
    out.span_id = a.span_id;
    out.start_ns = Nanos(a.start);
    out.end_ns = Nanos(a.end);
    out.status = a.status;
    out.deployment = a.deployment;
    out.provider = a.provider;
    out.upstream_model = a.upstream_model;
    out.server_address = a.server_address;
    out.server_port = a.server_port;
  }
}

}  // namespace

void BeginTrace(const observability::OtlpExporter& exporter, const http::Exchange& exchange,
                RequestContext& ctx) {
  observability::TraceState& t = ctx.trace;
  const auto& request = exchange.request();
  const std::string_view traceparent = Header(request, "traceparent");
  const std::optional<observability::TraceParent> parent =
      traceparent.empty() ? std::nullopt : observability::ParseTraceParent(traceparent);
  t.on = true;
  if (parent) {
    t.trace_hi = parent->trace_hi;
    t.trace_lo = parent->trace_lo;
    t.parent_span_id = parent->span_id;
    const std::string_view state = Header(request, "tracestate");
    if (!state.empty()) t.tracestate = std::string(state);
  } else {
    t.trace_hi = observability::NewSpanId();
    t.trace_lo = observability::NewSpanId();
  }
  t.span_id = observability::NewSpanId();
  t.sampled = observability::ShouldSample(exporter.sampling_ratio(), parent, t.trace_lo);
}

void RecordTrace(observability::OtlpExporter& exporter, const ExchangeRecord& exchange,
                 const RequestContext& ctx) {
  if (!ctx.trace.sampled) return;
  exporter.Push([&exchange, &ctx](observability::SpanRecord& slot) { Fill(slot, exchange, ctx); });
}

}  // namespace turnpike::core
