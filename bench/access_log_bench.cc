// Cost of formatting one access-log line on a worker thread, and of the per-worker buffer
// path (format + periodic hand-off to the sink).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>

#include "observability/access_log.h"

namespace {

using turnpike::observability::AccessLogBuffer;
using turnpike::observability::AccessLogSink;
using turnpike::observability::AccessRecord;
using turnpike::observability::AppendAccessLogLine;

AccessRecord TypicalRecord() {
  AccessRecord r;
  r.time = std::chrono::system_clock::now();
  r.request_id = "req_01J2X8K7Q9M3N4P5R6S7T8V9W0";
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.status = 200;
  r.model = "gpt-4o-mini";
  r.deployment = "http://127.0.0.1:9000/v1";
  r.upstream_status = 200;
  r.attempts = 1;
  r.stream = true;
  r.bytes_in = 734;
  r.bytes_out = 18'233;
  r.total_ms = 842.317;
  r.overhead_us = 96;
  r.upstream_ttfb_ms = 212.004;
  r.ttft_ms = 214.5;
  r.prompt_tokens = 182;
  r.completion_tokens = 512;
  r.cached_tokens = 0;
  r.finish_reason = "stop";
  r.client = "10.12.1.17:53122";
  return r;
}

void BM_AppendAccessLogLine(benchmark::State& state) {
  const AccessRecord record = TypicalRecord();
  std::string out;
  out.reserve(4096);
  for (auto _ : state) {
    out.clear();
    AppendAccessLogLine(record, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["line_bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_AppendAccessLogLine);

// Worst case for escaping: every string field needs escapes or UTF-8 validation.
void BM_AppendAccessLogLineHostile(benchmark::State& state) {
  AccessRecord record = TypicalRecord();
  record.path = "/v1/chat/completions?q=\"caf\xC3\xA9\"\n\x01\xFF";
  record.error = "upstream said: \"bad \\ request\"\t\xE2\x82\xAC";
  std::string out;
  out.reserve(4096);
  for (auto _ : state) {
    out.clear();
    AppendAccessLogLine(record, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_AppendAccessLogLineHostile);

// Append through a per-worker buffer into a sink writing to /dev/null: includes the amortized
// hand-off (one mutex + one allocation per 32 KiB batch).
void BM_AccessLogBufferAppend(benchmark::State& state) {
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  AccessLogSink sink(fd, /*owns_fd=*/true);
  const AccessRecord record = TypicalRecord();
  {
    AccessLogBuffer buffer(sink);
    for (auto _ : state) buffer.Append(record);
  }
  sink.Flush();
  state.counters["dropped_lines"] = static_cast<double>(sink.dropped_lines());
}
BENCHMARK(BM_AccessLogBufferAppend);

}  // namespace
