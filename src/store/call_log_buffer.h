// A worker's side of the call log: records of finished requests collect here and move to the
// store thread's queue in batches (at batch_rows, or on the worker's flush timer), so the
// queue's mutex is taken once per batch, never per request.
//
// When the queue is full (call_log.when_full):
//   wait  the worker keeps its rows and offers them again on the next flush, for up to
//         max_wait; it never blocks (the request that produced a row finished long ago).
//   drop  the rows go at once.
// Rows that go are replaced by one stand-in per tenant, key and month carrying their summed
// cost and tokens (call_record.h, dropped_rows), queued regardless of the bound: a dropped log
// row never drops spend, and the call log's sums still equal the spend table. The count of
// dropped rows is exported as turnpike_call_log_dropped_rows_total.
//
// Ownership: one per worker (core::WorkerCore); the StoreThread outlives it.
// Thread safety: the owning worker only, except dropped_rows() (any thread).
#pragma once

#include <chrono>

#include "observability/metrics.h"
#include "store/call_record.h"
#include "store/store_thread.h"

namespace turnpike::store {

struct CallLogBufferOptions {
  size_t batch_rows = 4'096;
  // A batch also goes once its texts pass this (opted-in request bodies), and a waiting
  // worker drops rows past 16 times this: a worker's buffer stays bounded in bytes too.
  size_t batch_text_bytes = 16 << 20;
  bool drop_when_full = false;
  std::chrono::milliseconds max_wait{2'000};
  size_t max_rows = 65'536;  // beyond this a waiting worker drops even before max_wait
};

class CallLogBuffer {
 public:
  using Clock = std::chrono::steady_clock;

  CallLogBuffer(StoreThread& thread, CallLogBufferOptions options)
      : thread_(thread), options_(options) {}
  ~CallLogBuffer() { Flush(true); }

  // Copies in the record of a request that ended (call_record.h).
  void Add(const CallRecordView& r);
  // Offers the buffered rows to the queue; `final` ignores the queue's bound (shutdown).
  void Flush(bool final = false);

  uint64_t dropped_rows() const { return dropped_.value(); }
  size_t buffered() const { return rows_.size(); }

 private:
  void Drop();

  StoreThread& thread_;
  const CallLogBufferOptions options_;
  CallBatch rows_;
  Clock::time_point waiting_since_{};  // first refusal of the rows now buffered
  observability::Counter dropped_;
};

}  // namespace turnpike::store
