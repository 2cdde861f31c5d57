// JSON-lines access log that never blocks a worker and takes no lock per request.
//
// Three roles, three threads:
//   - AccessRecord + AppendAccessLogLine(): pure formatting, called on the worker thread.
//   - AccessLogBuffer: one per worker thread, owned and used only by that thread. Append()
//     formats a record into a local string; every `flush_bytes` it hands the whole string to
//     the sink. The owner also calls FlushNow() from a periodic timer (so a quiet worker's
//     lines still appear) and at shutdown.
//   - AccessLogSink: one per process, shared by all workers. Submit() takes a mutex once per
//     batch (not per line) just to move the batch into a pending list; a background thread it
//     owns writes the batches to the fd. If the disk or pipe falls behind and
//     `max_pending_bytes` of unwritten data accumulate, whole batches are dropped and counted
//     (dropped_lines()) rather than blocking a worker or growing memory without bound.
//
// Shutdown order: each worker calls FlushNow() (or destroys its buffer), then the sink is
// destroyed, which writes everything already submitted and joins its thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace turnpike::observability {

// One finished request. String fields are views: they must stay valid only for the duration of
// the AppendAccessLogLine()/AccessLogBuffer::Append() call, which copies them into the line.
// Negative optional numbers are omitted from the line.
struct AccessRecord {
  std::chrono::system_clock::time_point time;  // request start; RFC 3339 UTC, milliseconds
  std::string_view request_id;
  std::string_view method;
  std::string_view path;
  int status = 0;
  std::string_view model;       // public model name, or empty
  std::string_view deployment;  // e.g. base URL or deployment name, or empty
  int upstream_status = -1;     // -1 = no upstream response (omitted)
  int attempts = 0;
  bool stream = false;
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  double total_ms = 0;
  int64_t overhead_us = 0;  // gateway's own time, excluding upstream waits
  double upstream_ttfb_ms = -1;
  double ttft_ms = -1;  // time to first token of a stream
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;
  std::string_view finish_reason;
  std::string_view error;   // empty = omitted
  std::string_view client;  // "ip:port"
};

// Appends one JSON object and '\n' to `out`. Strings are escaped per RFC 8259: quotes,
// backslashes and control characters are escaped; invalid UTF-8 becomes U+FFFD. Keys appear
// in AccessRecord's field order. Never throws except std::bad_alloc.
void AppendAccessLogLine(const AccessRecord& record, std::string& out);

struct AccessLogSinkOptions {
  // Bound on submitted-but-not-yet-written bytes; a batch that would exceed it is dropped.
  size_t max_pending_bytes = 8 * 1024 * 1024;
};

class AccessLogSink {
 public:
  // "-" = stdout; otherwise opens (creating, mode 0644) the file for appending. Throws
  // std::system_error naming the path if it cannot be opened (start-up only). Writing to a
  // closed pipe raises SIGPIPE: the process is expected to ignore it (as any server does).
  static std::unique_ptr<AccessLogSink> Open(const std::string& path,
                                             AccessLogSinkOptions options = {});

  // Writes to `fd`, closing it on destruction if `owns_fd`. Starts the writer thread.
  AccessLogSink(int fd, bool owns_fd, AccessLogSinkOptions options = {});
  AccessLogSink(const AccessLogSink&) = delete;
  AccessLogSink& operator=(const AccessLogSink&) = delete;
  // Writes everything already submitted, then joins the writer thread.
  ~AccessLogSink();

  // Any thread. `batch` is whole lines, each ending in '\n'. Never blocks on I/O.
  void Submit(std::string&& batch);

  // Any thread except the writer. Blocks until every batch accepted before the call has been
  // written (or failed to write). For tests and shutdown; not for worker threads.
  void Flush();

  // Any thread. Lines dropped because of the pending bound or a write error.
  uint64_t dropped_lines() const { return dropped_lines_.load(std::memory_order_relaxed); }
  // Any thread. Failed write() calls (e.g. disk full); their lines count as dropped.
  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void WriteBatch(const std::string& batch);

  // Constant after construction.
  const int fd_;
  const bool owns_fd_;
  const AccessLogSinkOptions options_;

  std::atomic<uint64_t> dropped_lines_{0};
  std::atomic<uint64_t> write_errors_{0};

  std::mutex mu_;
  std::condition_variable work_cv_;     // writer waits for batches or stop
  std::condition_variable written_cv_;  // Flush() waits for progress
  // Guarded by mu_.
  std::vector<std::string> pending_;
  size_t unwritten_bytes_ = 0;  // pending plus the batches being written
  uint64_t accepted_batches_ = 0;
  uint64_t written_batches_ = 0;
  bool stop_ = false;

  std::thread writer_;  // last: starts after every other member is initialized
};

// Per-worker buffer; single-threaded (owned and used by one worker thread). `sink` must
// outlive the buffer. The destructor calls FlushNow().
class AccessLogBuffer {
 public:
  static constexpr size_t kDefaultFlushBytes = 32 * 1024;

  explicit AccessLogBuffer(AccessLogSink& sink, size_t flush_bytes = kDefaultFlushBytes);
  AccessLogBuffer(const AccessLogBuffer&) = delete;
  AccessLogBuffer& operator=(const AccessLogBuffer&) = delete;
  ~AccessLogBuffer();

  // Formats the record; submits the buffer to the sink once it holds >= flush_bytes.
  void Append(const AccessRecord& record);

  // Submits whatever is buffered (nothing if empty).
  void FlushNow();

 private:
  AccessLogSink& sink_;
  const size_t flush_bytes_;
  std::string buffer_;
};

}  // namespace turnpike::observability
