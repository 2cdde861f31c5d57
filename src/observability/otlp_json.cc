#include "observability/otlp_json.h"

#include <charconv>

#include "common/json_escape.h"

namespace turnpike::observability {
namespace {
// OTLP SpanKind and Status.code values.
constexpr int kKindInternal = 1;
constexpr int kKindServer = 2;
constexpr int kKindClient = 3;
constexpr int kStatusError = 2;
constexpr double kMicrosPerUsd = 1e6;

void AppendEscaped(std::string& out, std::string_view s) { AppendJsonQuoted(out, s); }

// Two digits at a time, from the end (the times are 19-digit nanoseconds).
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

void AppendInt(std::string& out, int64_t value) {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  const bool negative = value < 0;
  uint64_t v = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  while (v >= 100) {
    const size_t pair = (v % 100) * 2;
    v /= 100;
    p -= 2;
    p[0] = kDigitPairs[pair];
    p[1] = kDigitPairs[pair + 1];
  }
  if (v >= 10) {
    p -= 2;
    p[0] = kDigitPairs[v * 2];
    p[1] = kDigitPairs[v * 2 + 1];
  } else {
    *--p = static_cast<char>('0' + v);
  }
  if (negative) *--p = '-';
  out.append(p, static_cast<size_t>(end - p));
}

// Writes the attribute list of one span: each Add* call appends one {"key","value"} object.
class Attributes {
 public:
  explicit Attributes(std::string& out) : out_(out) { out_.append(",\"attributes\":["); }
  ~Attributes() { out_.push_back(']'); }
  Attributes(const Attributes&) = delete;
  Attributes& operator=(const Attributes&) = delete;

  void String(std::string_view key, std::string_view value) {
    if (value.empty()) return;
    Key(key);
    out_.append("{\"stringValue\":");
    AppendEscaped(out_, value);
    out_.append("}}");
  }
  void Int(std::string_view key, int64_t value) {
    Key(key);
    out_.append("{\"intValue\":\"");
    AppendInt(out_, value);
    out_.append("\"}}");
  }
  void Double(std::string_view key, double value) {
    Key(key);
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, value);  // shortest round trip
    out_.append("{\"doubleValue\":").append(buf, r.ptr).append("}}");
  }
  void Bool(std::string_view key, bool value) {
    Key(key);
    out_.append("{\"boolValue\":").append(value ? "true" : "false").append("}}");
  }
  void StringArray1(std::string_view key, std::string_view value) {
    if (value.empty()) return;
    Key(key);
    out_.append("{\"arrayValue\":{\"values\":[{\"stringValue\":");
    AppendEscaped(out_, value);
    out_.append("}]}}}");
  }

 private:
  void Key(std::string_view key) {
    if (!first_) out_.push_back(',');
    first_ = false;
    // Keys are this file's constants: nothing to escape.
    out_.append("{\"key\":\"").append(key).append("\",\"value\":");
  }
  std::string& out_;
  bool first_ = true;
};

// A request's ids as hex, written once for all its spans.
struct Ids {
  explicit Ids(const SpanRecord& r) {
    WriteHex16(r.trace_hi, trace);
    WriteHex16(r.trace_lo, trace + 16);
    WriteHex16(r.span_id, server);
  }
  char trace[32];
  char server[16];
};

// A span's name: "{first} {second}", or "{first}" when second is empty.
struct Name {
  std::string_view first;
  std::string_view second;
};

// Opens a span object up to its attributes: ids, name, kind, times. `parent` is 16 hex
// characters, or empty (a root span).
void OpenSpan(std::string& out, const SpanRecord& r, const Ids& ids, std::string_view span_id,
              std::string_view parent, Name name, int kind, int64_t start_ns, int64_t end_ns,
              bool with_state) {
  out.append("{\"traceId\":\"");
  out.append(ids.trace, sizeof ids.trace);
  out.append("\",\"spanId\":\"");
  out.append(span_id);
  out.push_back('"');
  if (!parent.empty()) {
    out.append(",\"parentSpanId\":\"");
    out.append(parent);
    out.push_back('"');
  }
  if (with_state && !r.tracestate.empty()) {
    out.append(",\"traceState\":");
    AppendEscaped(out, r.tracestate);
  }
  out.append(",\"name\":");
  out.push_back('"');
  AppendJsonEscaped(out, name.first);
  if (!name.second.empty()) {
    out.push_back(' ');
    AppendJsonEscaped(out, name.second);
  }
  out.push_back('"');
  out.append(",\"kind\":");
  AppendInt(out, kind);
  out.append(",\"startTimeUnixNano\":\"");
  AppendInt(out, start_ns);
  out.append("\",\"endTimeUnixNano\":\"");
  AppendInt(out, end_ns < start_ns ? start_ns : end_ns);
  out.push_back('"');
}

void CloseSpan(std::string& out, bool error, std::string_view message) {
  if (error) {
    out.append(",\"status\":{\"code\":");
    AppendInt(out, kStatusError);
    if (!message.empty()) {
      out.append(",\"message\":");
      AppendEscaped(out, message);
    }
    out.push_back('}');
  }
  out.push_back('}');
}

const AttemptRecord* Answering(const SpanRecord& r) {
  return r.attempt_count == 0 ? nullptr : &r.attempts[r.attempt_count - 1];
}

void ServerSpan(std::string& out, const SpanRecord& r, const Ids& ids) {
  Name name{r.method, r.path};
  std::string_view operation;
  if (r.kind == TraceKind::kModel) {
    operation = GenAiOperationName(r.path);
    name = {operation, r.model};
  } else if (r.kind == TraceKind::kSearch) {
    name = {"search", r.search_index.empty() ? r.model : r.search_index};
  }
  char parent[16];
  if (r.parent_span_id != 0) WriteHex16(r.parent_span_id, parent);
  OpenSpan(out, r, ids, {ids.server, sizeof ids.server},
           {parent, r.parent_span_id != 0 ? sizeof parent : 0}, name, kKindServer,
           r.phases.received, r.phases.done, true);
  {
    Attributes a(out);
    if (r.kind == TraceKind::kModel) {
      a.String("gen_ai.operation.name", operation);
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
    if (!r.tenant_id.empty()) a.Double("turnpike.cost_usd", r.cost_micros / kMicrosPerUsd);
    if (r.kind != TraceKind::kOther) a.Bool("turnpike.cache.hit", r.cache_hit);
    a.String("error.type", r.error);
  }
  if (r.phases.first_token != 0) {
    out.append(",\"events\":[{\"timeUnixNano\":\"");
    AppendInt(out, r.phases.first_token);
    out.append("\",\"name\":\"gen_ai.first_token\"}]");
  }
  CloseSpan(out, r.status >= 500, r.error);
}

void PhaseSpan(std::string& out, const SpanRecord& r, const Ids& ids, uint64_t n,
               std::string_view name, int64_t start, int64_t end) {
  if (start == 0 || end == 0) return;
  out.push_back(',');
  char id[16];
  WriteHex16(DeriveSpanId(r.span_id, n), id);
  OpenSpan(out, r, ids, {id, sizeof id}, {ids.server, sizeof ids.server}, Name{name, {}},
           kKindInternal, start, end, false);
  CloseSpan(out, false, {});
}

void AttemptSpans(std::string& out, const SpanRecord& r, const Ids& ids) {
  const std::string_view operation = GenAiOperationName(r.path);
  for (size_t i = 0; i < r.attempt_count; ++i) {
    const AttemptRecord& at = r.attempts[i];
    out.push_back(',');
    char id[16];
    WriteHex16(at.span_id, id);
    OpenSpan(out, r, ids, {id, sizeof id}, {ids.server, sizeof ids.server},
             Name{operation, at.upstream_model}, kKindClient, at.start_ns,
             at.end_ns != 0 ? at.end_ns : r.phases.done, false);
    const bool failed = at.status < 0 || at.status >= 400;
    {
      Attributes a(out);
      a.String("gen_ai.operation.name", operation);
      a.String("gen_ai.provider.name", GenAiProviderName(at.provider));
      a.String("gen_ai.request.model", at.upstream_model);
      a.String("server.address", at.server_address);
      if (at.server_port != 0) a.Int("server.port", at.server_port);
      if (at.status >= 0) a.Int("http.response.status_code", at.status);
      a.String("turnpike.deployment", at.deployment);
      if (failed) a.String("error.type", at.status < 0 ? "connection" : std::to_string(at.status));
    }
    CloseSpan(out, failed, {});
  }
}

void RequestSpans(std::string& out, const SpanRecord& r) {
  const Ids ids(r);
  ServerSpan(out, r, ids);
  const PhaseTimes& p = r.phases;
  PhaseSpan(out, r, ids, 1, "gateway.parse", p.received, p.parsed);
  PhaseSpan(out, r, ids, 2, "gateway.governance", p.parsed, p.admitted);
  PhaseSpan(out, r, ids, 3, "upstream.connect", p.admitted, p.upstream_connected);
  PhaseSpan(out, r, ids, 4, "upstream.first_byte", p.upstream_sent, p.upstream_head);
  PhaseSpan(out, r, ids, 5, r.stream ? "response.stream" : "response.write", p.client_head, p.done);
  AttemptSpans(out, r, ids);
}
}  // namespace

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
                    std::string& out) {
  out.append(
      "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
      "\"value\":{\"stringValue\":");
  AppendEscaped(out, service_name);
  out.append("}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"turnpike\"},\"spans\":[");
  bool first = true;
  for (const SpanRecord& r : records) {
    if (!first) out.push_back(',');
    first = false;
    RequestSpans(out, r);
  }
  out.append("]}]}]}");
}

}  // namespace turnpike::observability
