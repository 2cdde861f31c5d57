// The OpenTelemetry trace exporter: finished requests (span_record.h) queue here from every
// worker and are sent in batches, as OTLP/HTTP JSON (otlp_json.h), by the exporter's own
// thread to the collector's endpoint (telemetry.otlp in config.h).
//
// Queue: bounded (queue_size records). Push never waits: when the queue is full the record is
// dropped and counted. The thread sends when batch_size records are queued or export_interval
// passed since its last send, whichever comes first; an export that fails (connect, timeout,
// non-2xx) is counted and its batch dropped (no retry: the gateway never holds spans for a
// collector that is down). Stop() sends what is queued, once, and joins the thread.
//
// The HTTP client is a blocking socket on the exporter's thread with `timeout` for connect,
// send and the answer; one connection per export ("Connection: close"); http:// only.
//
// Ownership: built by app/ when telemetry.otlp.endpoint is set, outlives the workers.
// Thread safety: Push and the counters from any thread (the queue's mutex is held for a move,
// never across I/O); the rest from the owner.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "observability/span_record.h"

namespace turnpike::observability {

struct OtlpExporterOptions {
  std::string endpoint;  // http://host[:port]/path
  double sampling_ratio = 1.0;
  std::vector<std::pair<std::string, std::string>> headers;
  size_t queue_size = 2'048;
  size_t batch_size = 512;
  std::chrono::milliseconds export_interval{1'000};
  std::chrono::milliseconds timeout{5'000};
  std::string service_name = "turnpike";
};

class OtlpExporter {
 public:
  // Throws std::invalid_argument for an endpoint that is not http://host[:port][/path].
  // Starts the thread.
  explicit OtlpExporter(OtlpExporterOptions options);
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  double sampling_ratio() const { return options_.sampling_ratio; }

  // Queues one request's spans; false (and counted as dropped) when the queue is full or the
  // exporter stopped.
  bool Push(SpanRecord&& record);

  // Sends what is queued and joins the thread; later Pushes are dropped. Idempotent.
  void Stop();

  uint64_t exported_requests() const { return exported_.load(std::memory_order_relaxed); }
  uint64_t dropped_requests() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t failed_exports() const { return failed_.load(std::memory_order_relaxed); }
  uint64_t exports() const { return exports_.load(std::memory_order_relaxed); }

 private:
  void Run();
  // POSTs one encoded batch; true on a 2xx answer.
  bool Send(const std::string& body);

  const OtlpExporterOptions options_;
  std::string host_;
  std::string port_;
  std::string path_;
  std::string head_;  // the request head up to Content-Length's value

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<SpanRecord> queue_;  // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  std::thread thread_;

  std::atomic<uint64_t> exported_{0};  // requests whose spans a collector accepted
  std::atomic<uint64_t> dropped_{0};   // requests dropped at a full queue
  std::atomic<uint64_t> failed_{0};    // export requests that failed
  std::atomic<uint64_t> exports_{0};   // export requests made
};

}  // namespace turnpike::observability
