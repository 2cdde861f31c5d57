// The OpenTelemetry trace exporter: finished requests (span_record.h) queue here from every
// worker and are sent in batches, as OTLP/HTTP protobuf or JSON (otlp_encoding.h), by the
// exporter's own thread to the collector's endpoint (telemetry.otlp in config.h).
//
// Queue: bounded (queue_size records), two preallocated vectors of flat records swapped by the
// thread. Push never waits and never allocates: the worker writes the record straight into its
// slot (a few hundred instructions under the queue's mutex, no I/O); when the queue is full the
// record is dropped and counted. The thread sends when batch_size records are queued or
// export_interval passed since its last send, whichever comes first; an export that fails
// (connect, timeout, non-2xx) is counted and its batch dropped (no retry: the gateway never
// holds spans for a collector that is down). Stop() sends what is queued, once, and joins the
// thread. Records carry steady-clock nanoseconds: the thread turns them into unix time with
// the clocks' offset read once per batch (no clock read on the worker).
//
// The HTTP client is a blocking socket on the exporter's thread with `timeout` for connect,
// send and the answer; http:// only. One keep-alive connection is reused across exports (the
// address is resolved only when a connection is opened); it is reopened when the collector
// closed it, answered without a length, or an exchange on it failed (a reused connection found
// closed before any answer is retried once on a new one).
//
// Push takes a filler or a const SpanRecord& (copied); an rvalue SpanRecord does not compile
// (it would be taken for a filler): write the record in place instead.
//
// Ownership: built by app/ when telemetry.otlp.endpoint is set, outlives the workers.
// Thread safety: Push and the counters from any thread (the queue's mutex is held while one
// record is written, never across I/O); the rest from the owner.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "observability/otlp_encoding.h"
#include "observability/span_record.h"

namespace turnpike::observability {

// Queue slots are written in place and copied as bytes; nothing in them is freed.
static_assert(std::is_trivially_copyable_v<SpanRecord>);

struct OtlpExporterOptions {
  std::string endpoint;  // http://host[:port]/path
  double sampling_ratio = 1.0;
  std::vector<std::pair<std::string, std::string>> headers;
  size_t queue_size = 2'048;
  size_t batch_size = 512;
  std::chrono::milliseconds export_interval{1'000};
  std::chrono::milliseconds timeout{5'000};
  std::string service_name = "turnpike";
  OtlpProtocol protocol = OtlpProtocol::kProtobuf;
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

  // Queues one request's spans: `fill(SpanRecord&)` writes them into a default-constructed
  // slot, under the queue's mutex (it must not block). False (and counted as dropped) when the
  // queue is full or the exporter stopped; `fill` is then not called.
  template <typename Fill>
  bool Push(Fill&& fill) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || queue_.size() >= options_.queue_size) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
      fill(queue_.emplace_back());
      wake = queue_.size() == options_.batch_size;
    }
    if (wake) wake_.notify_one();
    return true;
  }
  bool Push(const SpanRecord& record) {
    return Push([&record](SpanRecord& slot) { slot = record; });
  }

  // Sends what is queued and joins the thread; later Pushes are dropped. Idempotent.
  void Stop();

  uint64_t exported_requests() const { return exported_.load(std::memory_order_relaxed); }
  uint64_t dropped_requests() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t failed_exports() const { return failed_.load(std::memory_order_relaxed); }
  uint64_t exports() const { return exports_.load(std::memory_order_relaxed); }

 private:
  void Run();
  // POSTs one encoded batch on the kept connection (opened when there is none); true on a
  // 2xx answer.
  bool Send(std::string_view body);
  // One request and its answer on connection_; the status (-1: failed) and whether any answer
  // byte came back.
  int Exchange(std::string_view body, std::chrono::steady_clock::time_point deadline,
               bool& answered);
  void CloseConnection();

  const OtlpExporterOptions options_;
  std::string host_;
  std::string port_;
  std::string path_;
  std::string head_;  // the request head up to Content-Length's value

  // The exporter thread's: the kept connection (-1: none), the answer being read.
  int connection_ = -1;
  std::string request_head_;
  std::string answer_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<SpanRecord> queue_;  // guarded by mu_; reserved queue_size, never grown
  bool stopping_ = false;          // guarded by mu_
  std::thread thread_;

  std::atomic<uint64_t> exported_{0};  // requests whose spans a collector accepted
  std::atomic<uint64_t> dropped_{0};   // requests dropped at a full queue
  std::atomic<uint64_t> failed_{0};    // export requests that failed
  std::atomic<uint64_t> exports_{0};   // export requests made
};

}  // namespace turnpike::observability
