// The store thread: the one thread that touches the engine (engine.h), fed by two bounded
// queues. It speaks only the engine's roles.
//
//   jobs     admin reads and writes, snapshot reloads, reconciliation: StoreJob objects. A
//            coroutine on a worker awaits one with Call(), which suspends it (the worker keeps
//            serving) and resumes it on its own executor with the result.
//   records  the call log: workers hand over CallBatches (CallLogBuffer); the thread takes
//            everything queued and hands it to its owner's write function in transactions of
//            at most batch_rows rows (group commit: under load one commit carries many
//            requests), then keeps the emptied batches as spares that SubmitRecords hands
//            back, so batches (and the strings in their slots) are reused, not reallocated.
// A tick runs every `tick` for periodic work (the change feed's polls, the reconcile schedule).
// The write and tick functions are the owner's, given at Start: the thread's owner (the
// GovernanceService) decides what a batch and a tick do.
//
// Nobody waits on this thread while holding anything: workers only take the queue mutex to
// move a batch in (a few hundred nanoseconds, once per flush, not per request), and never wait
// for room (SubmitRecords says kFull and the caller applies its policy).
//
// Shutdown, in this order: CloseJobs() once the workers stop issuing jobs (it runs what is
// queued, then refuses new jobs), then the workers' final flushes (SubmitRecords with force),
// then Stop(), which writes every queued record and joins. A SIGKILL loses what is queued and
// what workers still buffer (measured in tests/integration/governance_restart.test.mjs).
//
// Ownership: borrows the engine, which must outlive it; the functions given to Start must stay
// valid until Stop returns.
// Thread safety: Post, SubmitRecords, CloseJobs, Stop and the counters: any thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/result.h"
#include "store/call_record.h"
#include "store/engine.h"

namespace turnpike::store {

class StoreJob {
 public:
  virtual ~StoreJob() = default;
  virtual void Run(Engine& engine) = 0;
  // The job will not run (queue full or closed): complete it with `error`.
  virtual void Refuse(const Error& error) = 0;
};

struct StoreThreadOptions {
  size_t max_jobs = 1024;
  size_t max_records = 65'536;
  size_t batch_rows = 4'096;
  std::chrono::milliseconds tick{250};
};

enum class SubmitResult { kAccepted, kFull, kClosed };

class StoreThread {
 public:
  // Writes one transaction's rows (at most batch_rows records) on the store thread.
  using WriteFn = std::function<void(CallLogStore&, CallBatchParts)>;
  using TickFn = std::function<void(Engine&)>;

  StoreThread(Engine& engine, StoreThreadOptions options);
  ~StoreThread();
  StoreThread(const StoreThread&) = delete;
  StoreThread& operator=(const StoreThread&) = delete;

  // Starts the thread; `tick` may be empty. Once only.
  void Start(WriteFn write, TickFn tick);

  // Queues `job`; if the queue is full or closed the job is refused at once (Refuse runs on the
  // calling thread).
  void Post(std::unique_ptr<StoreJob> job);

  // Moves `batch` into the queue, leaving an empty (recycled) batch in its place, unless that
  // would exceed max_records (kFull, `batch` untouched) or the queue is stopped (kClosed).
  // `force` ignores the bound (final flushes).
  SubmitResult SubmitRecords(CallBatch& batch, bool force = false);

  void CloseJobs();
  void Stop();

  // Runs `fn(Engine&) -> Result<T>` on the store thread and resumes the caller with its result
  // on the caller's executor. kUnavailable if the job queue is full or closed.
  template <typename T, typename Fn>
  boost::asio::awaitable<Result<T>> Call(Fn fn);

  size_t queued_records() const;
  // Written, emptied batches waiting to be handed back by SubmitRecords.
  size_t spare_batches() const;

 private:
  template <typename T, typename Fn, typename Handler>
  class CallJob;

  void Loop();
  // Writes `batches` in transactions of at most batch_rows rows.
  void WriteAll(std::vector<CallBatch>& batches);

  Engine& engine_;
  const StoreThreadOptions options_;
  WriteFn write_;  // set by Start, before the thread runs
  TickFn tick_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable jobs_done_;
  std::deque<std::unique_ptr<StoreJob>> jobs_;
  std::vector<CallBatch> queued_;     // batches waiting for the thread
  size_t queued_rows_ = 0;            // records in queued_
  std::vector<CallBatch> spares_;     // written and cleared, for SubmitRecords to hand back
  std::vector<CallBatchPart> group_;  // the thread's: one transaction's parts
  bool jobs_closed_ = false;
  bool stopping_ = false;
  bool busy_ = false;  // the thread is running jobs it took from the queue
  std::thread thread_;
};

template <typename T, typename Fn, typename Handler>
class StoreThread::CallJob : public StoreJob {
 public:
  CallJob(Fn fn, Handler handler, boost::asio::any_io_executor executor)
      : fn_(std::move(fn)), handler_(std::move(handler)), executor_(std::move(executor)) {}

  void Run(Engine& engine) override { Complete(fn_(engine)); }
  void Refuse(const Error& error) override { Complete(Result<T>(error)); }

 private:
  void Complete(Result<T> result) {
    boost::asio::post(executor_,
                      [handler = std::move(handler_), result = std::move(result)]() mutable {
                        std::move(handler)(std::move(result));
                      });
  }

  Fn fn_;
  Handler handler_;
  boost::asio::any_io_executor executor_;
};

template <typename T, typename Fn>
boost::asio::awaitable<Result<T>> StoreThread::Call(Fn fn) {
  boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  auto initiate = [this, executor](auto handler, Fn job_fn) {
    using Job = CallJob<T, Fn, std::decay_t<decltype(handler)>>;
    Post(std::make_unique<Job>(std::move(job_fn), std::move(handler), executor));
  };
  Result<T> result =
      co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(Result<T>)>(
          initiate, boost::asio::use_awaitable, std::move(fn));
  co_return result;
}

}  // namespace turnpike::store
