// Renders a benchmark's results: a short human summary and a JSON document with every number.
//
// JSON shape (times in milliseconds, CPU in seconds):
//   {"url", "connections", "threads", "duration_s", "warmup_s", "stream_every",
//    "elapsed_s", "requests_ok", "requests_failed", "streams_ok", "requests_per_second",
//    "body_bytes",
//    "latency_ms": {"count", "mean", "p50", "p95", "p99", "max"},   // OK requests, full body
//    "ttft_ms":    {"count", "mean", "p50", "p95", "p99", "max"},   // OK streams, first data:
//    "failures": {"connect_error", "write_error", "read_error", "timeout", "http_status",
//                 "stream_missing_done", "stream_truncated", "bad_response",
//                 "by_status": {"500": n, ...}},
//    "cpu": {"user_s", "system_s", "ms_per_1000_requests"},           // this process only
//    "agent": {"id", "turns", "conversations", "ok_turns_per_conversation"}}  // --agent only
// (An agent-turn run's requests are its turns; "turns" is --turns, "conversations" those
// created for measured turns.)
//
// Threads: pure functions.
#pragma once

#include <string>

#include "loadgen/bench_options.h"
#include "loadgen/driver.h"

namespace turnpike::loadgen {

std::string FormatSummary(const BenchOptions& options, const BenchResult& result);
std::string FormatJson(const BenchOptions& options, const BenchResult& result);

}  // namespace turnpike::loadgen
