// OTLP/HTTP JSON encoding of finished requests (span_record.h) as one ExportTraceServiceRequest:
// {"resourceSpans":[{"resource":{...},"scopeSpans":[{"scope":{...},"spans":[...]}]}]}, trace
// and span ids as lowercase hex, times as unix-nanosecond strings, attributes as
// {"key":..,"value":{"stringValue"|"intValue"|"doubleValue"|"boolValue"|"arrayValue":..}}.
//
// Per request: a SERVER span (named by the GenAI semantic conventions: "chat {model}",
// "embeddings {model}", "search {index}", else "{method} {path}"), an INTERNAL child span per
// phase reached (gateway.parse, gateway.governance, upstream.connect, upstream.first_byte,
// response.stream or response.write) and a CLIENT child span per recorded upstream attempt.
// Child phase span ids are derived from the server span's id (DeriveSpanId), so encoding is a
// pure function of its input. Runs on the exporter's thread. Thread safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "observability/span_record.h"

namespace turnpike::observability {

// The semantic conventions' gen_ai.provider.name for a dialect's name (openai, anthropic,
// gemini -> gcp.gemini, cohere, ollama; openai_responses and openai_completions -> openai).
std::string_view GenAiProviderName(std::string_view dialect);

// gen_ai.operation.name from the client's request path: embeddings, text_completion or chat.
std::string_view GenAiOperationName(std::string_view path);

// Appends the whole export request for `records` to `out`.
void EncodeOtlpJson(std::span<const SpanRecord> records, std::string_view service_name,
                    std::string& out);

}  // namespace turnpike::observability
