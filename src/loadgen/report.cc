#include "loadgen/report.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "common/json_escape.h"

namespace turnpike::loadgen {
namespace {

constexpr double kNsPerMs = 1e6;
constexpr double kRequestsPerCpuFigure = 1000;
constexpr double kMsPerSecond = 1000;
constexpr double kBytesPerMegabyte = 1e6;
constexpr size_t kFormatBufferSize = 512;  // longer than any one formatted piece below

double Ms(uint64_t ns) { return static_cast<double>(ns) / kNsPerMs; }

// Appends printf-style text; every caller's output fits in the buffer.
template <typename... Args>
void Append(std::string& out, const char* format, Args... args) {
  char buffer[kFormatBufferSize];
  const int n = std::snprintf(buffer, sizeof buffer, format, args...);
  if (n > 0) out.append(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof buffer - 1));
}

void AppendHistogramJson(std::string& out, const char* name, const Histogram& h) {
  Append(out, "\"%s\":{\"count\":%llu,\"mean\":%.4f,\"p50\":%.4f,\"p95\":%.4f,\"p99\":%.4f,", name,
         static_cast<unsigned long long>(h.count()), h.Mean() / kNsPerMs, Ms(h.Percentile(0.50)),
         Ms(h.Percentile(0.95)), Ms(h.Percentile(0.99)));
  Append(out, "\"max\":%.4f}", Ms(h.max()));
}

void AppendHistogramLine(std::string& out, const char* label, const Histogram& h) {
  Append(out, "  %-8s p50 %.3f ms  p95 %.3f ms  p99 %.3f ms  max %.3f ms  mean %.3f ms\n", label,
         Ms(h.Percentile(0.50)), Ms(h.Percentile(0.95)), Ms(h.Percentile(0.99)), Ms(h.max()),
         h.Mean() / kNsPerMs);
}

double OkTurnsPerConversation(const RunStats& s) {
  return s.conversations > 0 ? static_cast<double>(s.ok()) / static_cast<double>(s.conversations)
                             : 0.0;
}

double CpuMsPer1000(const BenchResult& r) {
  const uint64_t requests = r.stats.ok() + r.stats.failed();
  if (requests == 0) return 0;
  return (r.cpu_user_s + r.cpu_system_s) * kMsPerSecond * kRequestsPerCpuFigure /
         static_cast<double>(requests);
}

}  // namespace

std::string FormatSummary(const BenchOptions& o, const BenchResult& r) {
  const RunStats& s = r.stats;
  std::string out;
  Append(out, "turnpike bench %s: %d connections, %d threads, %.2f s measured (%.1f s warm-up)\n",
         o.url.c_str(), o.connections, o.threads, r.elapsed_s, o.warmup_s);
  Append(
      out, "  requests %llu ok, %llu failed, %.1f req/s, %.2f MB/s body\n",
      static_cast<unsigned long long>(s.ok()), static_cast<unsigned long long>(s.failed()),
      r.RequestsPerSecond(),
      r.elapsed_s > 0 ? static_cast<double>(s.body_bytes) / kBytesPerMegabyte / r.elapsed_s : 0.0);
  AppendHistogramLine(out, "latency", s.latency);
  if (!o.agent.empty()) {
    Append(out, "  agent    %s: %llu conversations, %.2f ok turns per conversation (--turns %d)\n",
           o.agent.c_str(), static_cast<unsigned long long>(s.conversations),
           OkTurnsPerConversation(s), o.turns);
  }
  if (s.streams_ok > 0) {
    Append(out, "  streams  %llu ok\n", static_cast<unsigned long long>(s.streams_ok));
    AppendHistogramLine(out, "ttft", s.ttft);
  }
  if (s.failed() > 0) {
    out += "  failures";
    for (int i = 1; i < kOutcomeCount; ++i) {
      if (s.outcomes[i] == 0) continue;
      const std::string name(OutcomeName(static_cast<Outcome>(i)));
      Append(out, " %s %llu", name.c_str(), static_cast<unsigned long long>(s.outcomes[i]));
    }
    for (const auto& [status, n] : s.statuses) {
      Append(out, " [%d: %llu]", status, static_cast<unsigned long long>(n));
    }
    out += "\n";
  }
  Append(out, "  cpu      %.2f s user + %.2f s system, %.3f ms per 1000 requests\n", r.cpu_user_s,
         r.cpu_system_s, CpuMsPer1000(r));
  return out;
}

std::string FormatJson(const BenchOptions& o, const BenchResult& r) {
  const RunStats& s = r.stats;
  std::string out = "{\"url\":";
  AppendJsonQuoted(out, o.url);
  Append(out, ",\"connections\":%d,\"threads\":%d,\"duration_s\":%.3f,\"warmup_s\":%.3f,",
         o.connections, o.threads, o.duration_s, o.warmup_s);
  Append(out, "\"stream_every\":%d,\"elapsed_s\":%.6f,\"requests_ok\":%llu,", o.stream_every,
         r.elapsed_s, static_cast<unsigned long long>(s.ok()));
  Append(out, "\"requests_failed\":%llu,\"streams_ok\":%llu,\"requests_per_second\":%.3f,",
         static_cast<unsigned long long>(s.failed()), static_cast<unsigned long long>(s.streams_ok),
         r.RequestsPerSecond());
  Append(out, "\"body_bytes\":%llu,", static_cast<unsigned long long>(s.body_bytes));
  AppendHistogramJson(out, "latency_ms", s.latency);
  out += ",";
  AppendHistogramJson(out, "ttft_ms", s.ttft);
  out += ",\"failures\":{";
  for (int i = 1; i < kOutcomeCount; ++i) {
    const std::string name(OutcomeName(static_cast<Outcome>(i)));
    Append(out, "\"%s\":%llu,", name.c_str(), static_cast<unsigned long long>(s.outcomes[i]));
  }
  out += "\"by_status\":{";
  bool first = true;
  for (const auto& [status, n] : s.statuses) {
    Append(out, "%s\"%d\":%llu", first ? "" : ",", status, static_cast<unsigned long long>(n));
    first = false;
  }
  Append(out, "}},\"cpu\":{\"user_s\":%.4f,\"system_s\":%.4f,\"ms_per_1000_requests\":%.4f}",
         r.cpu_user_s, r.cpu_system_s, CpuMsPer1000(r));
  if (!o.agent.empty()) {
    out += ",\"agent\":{\"id\":";
    AppendJsonQuoted(out, o.agent);
    Append(out, ",\"turns\":%d,\"conversations\":%llu,\"ok_turns_per_conversation\":%.4f}", o.turns,
           static_cast<unsigned long long>(s.conversations), OkTurnsPerConversation(s));
  }
  out += "}\n";
  return out;
}

}  // namespace turnpike::loadgen
