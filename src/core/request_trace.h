// A request's OpenTelemetry trace at its two ends: BeginTrace (WorkerCore::Start) reads the
// client's W3C traceparent/tracestate, decides sampling and gives the request its ids;
// RecordTrace (WorkerCore::Finish) writes what the spans need straight into a flat SpanRecord
// slot of the exporter's queue (observability/otlp_exporter.h): no allocation, no clock read.
// Only called when tracing is on.
//
// Threads: the request's worker.
#pragma once

#include "core/request_context.h"
#include "http/exchange.h"
#include "observability/otlp_exporter.h"

namespace turnpike::core {

struct ExchangeRecord;

void BeginTrace(const observability::OtlpExporter& exporter, const http::Exchange& exchange,
                RequestContext& ctx);

// Queues the request's spans when it was sampled (dropped and counted when the queue is full).
void RecordTrace(observability::OtlpExporter& exporter, const ExchangeRecord& exchange,
                 const RequestContext& ctx);

}  // namespace turnpike::core
