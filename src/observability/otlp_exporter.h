// The OpenTelemetry trace exporter: finished requests (span_record.h) queue here from every
// worker and are sent in batches, as OTLP/HTTP protobuf or JSON (otlp_encoding.h), by the
// exporter's own thread to the collector's endpoint (telemetry.otlp in config.h).
//
// Queue: bounded (queue_size records), two preallocated arrays of flat records swapped by the
// thread. Push never waits and never allocates: the worker writes the record straight into its
// slot (a few hundred instructions under the queue's lock, no I/O); when the queue is full the
// record is dropped and counted. A slot is never constructed: its filler writes every field,
// and an array's pages are touched only as far as the traffic between two exports reaches. The
// thread sends when batch_size records are queued or export_interval passed since its last send,
// whichever comes first; an export that fails (connect, timeout, non-2xx) is counted and its batch
// dropped (no retry: the gateway never holds spans for a collector that is down). Stop() sends what
// is queued, once, and joins the thread. Records carry steady-clock nanoseconds: the thread turns
// them into unix time with the clocks' offset read once per batch (no clock read on the worker).
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
// Thread safety: Push and the counters from any thread (the queue's lock is held while one
// record is written, never across I/O or a wait); the rest from the owner.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
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

// Queue slots are written in place and copied as bytes; nothing in them is freed. Trivially
// copyable makes a record an implicit-lifetime type: raw storage holds one once it is written.
static_assert(std::is_trivially_copyable_v<SpanRecord>);
static_assert(alignof(SpanRecord) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

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

  // Queues one request's spans: `fill(SpanRecord&)` writes them into a slot, under the
  // queue's lock (it must not block). The slot holds an older record's bytes or none: `fill`
  // writes every field (the attempts past attempt_count excepted, which nothing reads). False
  // (and counted as dropped) when the queue is full or the exporter stopped; `fill` is then
  // not called.
  template <typename Fill>
  bool Push(Fill&& fill) {
    bool wake = false;
    {
      std::lock_guard<QueueLock> lock(queue_lock_);
      if (stopping_ || queue_.size >= options_.queue_size) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
      fill(queue_.records()[queue_.size++]);
      wake = queue_.size == options_.batch_size;
    }
    if (wake) Wake();
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
  // A spin lock for the queue. It is held for one record's write (a few hundred instructions,
  // never across I/O or a wait), where an uncontended std::mutex's lock and unlock cost a fifth
  // as much again; a waiter spins briefly, then yields its core each turn.
  class QueueLock {
   public:
    void lock() {
      while (held_.exchange(true, std::memory_order_acquire)) {
        for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
          if (spins < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
          } else {
            std::this_thread::yield();
          }
        }
      }
    }
    void unlock() { held_.store(false, std::memory_order_release); }

   private:
    static constexpr int kSpins = 64;
    std::atomic<bool> held_{false};
  };

  void Run();
  // Wakes the thread (a full batch, or stopping). Takes wake_mu_ first, so a wake between the
  // thread's test of the queue and its wait is not lost.
  void Wake();
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

  // queue_size records' storage, allocated once and never constructed as a whole; the first
  // `size` hold records.
  struct Slots {
    explicit Slots(size_t capacity) : bytes(new std::byte[capacity * sizeof(SpanRecord)]) {}
    SpanRecord* records() { return reinterpret_cast<SpanRecord*>(bytes.get()); }
    std::unique_ptr<std::byte[]> bytes;
    size_t size = 0;
  };

  std::mutex wake_mu_;  // the thread's wait; held by others only to wake it
  std::condition_variable wake_;
  QueueLock queue_lock_;
  Slots queue_;            // guarded by queue_lock_
  bool stopping_ = false;  // guarded by queue_lock_
  std::thread thread_;

  std::atomic<uint64_t> exported_{0};  // requests whose spans a collector accepted
  std::atomic<uint64_t> dropped_{0};   // requests dropped at a full queue
  std::atomic<uint64_t> failed_{0};    // export requests that failed
  std::atomic<uint64_t> exports_{0};   // export requests made
};

}  // namespace turnpike::observability
