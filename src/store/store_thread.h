// The store thread(s): the threads that touch the engine (engine.h), fed by bounded queues.
// They speak only the engine's roles.
//
//   jobs     admin reads and writes, snapshot reloads, reconciliation: StoreJob objects. A
//            coroutine on a worker awaits one with Call(), which suspends it (the worker keeps
//            serving) and resumes it on its own executor with the result. Each job names its
//            lane (JobLane): kControl jobs change the owner's state (admin writes, reloads)
//            and run one at a time, in order; kRead jobs only read (the store, and what the
//            owner publishes for any thread) and may run in parallel with anything (reconcile
//            among them: the engine corrects spend by additions from one snapshot,
//            store/call_log.h); kLog jobs run between call-log batches, never beside one.
//   records  the call log: workers hand over CallBatches (CallLogBuffer); the log lane takes
//            everything queued and hands it to its owner's write function in transactions of
//            at most batch_rows rows (group commit: under load one commit carries many
//            requests), then keeps the emptied batches as spares that SubmitRecords hands
//            back, so batches (and the strings in their slots) are reused, not reallocated.
//
// Lanes: one thread per engine session (engine.h: one connection each), so a slow admin read
// never holds a call-log batch and the change feed back. One thread per connection rather than
// one thread polling several non-blocking connections: the engine's calls stay sequential code
// (pg.h), a thread costs nothing while it waits, and N is small (store.pool, at most 64).
//   1 session     lane 0 runs the records, every job and both ticks, in order (as before pools).
//   2 sessions    lane 0 "log" (thread tp-store): the records, kLog jobs, `tick`;
//                 lane 1 "control" (tp-store-c): kControl and kRead jobs, `control_tick`.
//   N >= 3        lanes 0 and 1 as above, but lane 1 takes no kRead job; lanes 2..N-1 "read"
//                 (tp-store-r) share the kRead queue.
// A tick runs every `tick` for periodic work: `tick` on the log lane (engine upkeep, the
// reconcile schedule), `control_tick` on the control lane (the change feed's polls). The lane
// that runs `control_tick` also runs it as soon as its session's change descriptor is readable
// (GovernanceRecords::ChangeFd: a LISTEN socket): it sleeps in poll() on that descriptor and an
// eventfd its queue is signalled through, so a notified change is read at once and an idle
// fleet engine does not wake every few milliseconds to look. At most one such early tick per
// millisecond (a descriptor that stays readable cannot spin the lane). The write
// and tick functions are the owner's, given at Start: the thread's owner (the
// GovernanceService) decides what a batch and a tick do.
//
// Nobody waits on these threads while holding anything: workers only take the queue mutex to
// move a batch or a job in (a few hundred nanoseconds, once per flush, not per request), and
// never wait for room (SubmitRecords says kFull and the caller applies its policy). No lock is
// held while a job, a batch or a tick runs.
//
// Shutdown, in this order: CloseJobs() once the workers stop issuing jobs (it runs what is
// queued on every lane, then refuses new jobs), then the workers' final flushes (SubmitRecords
// with force), then Stop(), which writes every queued record and joins every lane. A SIGKILL
// loses what is queued and what workers still buffer (measured in
// tests/integration/governance_restart.test.mjs).
//
// Ownership: borrows the engine, which must outlive it; the functions given to Start must stay
// valid until Stop returns.
// Thread safety: Post, SubmitRecords, CloseJobs, Stop, the counters and RenderMetrics: any
// thread.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "net/bridge.h"
#include "observability/metrics.h"
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

// Which lane runs a job (see the top of this file).
enum class JobLane : uint8_t { kControl, kRead, kLog };

struct StoreThreadOptions {
  size_t max_jobs = 1024;
  size_t max_records = 65'536;
  size_t batch_rows = 4'096;
  std::chrono::milliseconds tick{250};
  // How long Call waits for its job (0: until it completes). Fleet mode sets
  // fleet.outage_deadline: a server that does not answer (down, or frozen) costs a caller at most
  // this, then kUnavailable; the job itself still runs, later, and its result is dropped.
  std::chrono::milliseconds call_deadline{0};
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

  // Starts the lanes (one per engine session); either tick may be empty. Once only.
  void Start(WriteFn write, TickFn tick, TickFn control_tick = nullptr);

  // Queues `job` on `lane`; if the queues are full (max_jobs queued on all lanes together) or
  // closed the job is refused at once (Refuse runs on the calling thread).
  void Post(std::unique_ptr<StoreJob> job, JobLane lane = JobLane::kControl);

  // Moves `batch` into the queue, leaving an empty (recycled) batch in its place, unless that
  // would exceed max_records (kFull, `batch` untouched) or the queue is stopped (kClosed).
  // `force` ignores the bound (final flushes).
  SubmitResult SubmitRecords(CallBatch& batch, bool force = false);

  void CloseJobs();
  void Stop();

  // Runs `fn(Engine&) -> Result<T>` on a thread of `lane` (given that lane's session) and
  // resumes the caller with its result on the caller's executor (net/bridge.h). kUnavailable
  // if the job queues are full or closed, or when call_deadline passes first (a timer on the
  // caller's executor; whichever comes first answers, the other is dropped).
  template <typename T, typename Fn>
  boost::asio::awaitable<Result<T>> Call(Fn fn, JobLane lane = JobLane::kControl);

  // The session that runs `lane`'s jobs (the first one, for kRead): the owner's start-up work
  // that belongs to a lane (the change feed's first poll) runs on it before Start.
  Engine& lane_engine(JobLane lane);
  // Threads (and sessions) in use: engine.sessions().
  size_t lanes() const { return sessions_.size(); }

  size_t queued_records() const;
  // Written, emptied batches waiting to be handed back by SubmitRecords.
  size_t spare_batches() const;
  // turnpike_store_jobs_total{lane} and turnpike_store_jobs_queued{lane}, for the queues in
  // use ("log", "control", "read"); turnpike_store_connections (sessions).
  void RenderMetrics(observability::PrometheusWriter& writer) const;

 private:
  template <typename T, typename Fn, typename Done>
  class CallJob;
  template <typename T>
  class CallRace;

  // A lane's wake-up: a condition variable, and an eventfd written with it while a lane sleeps
  // in poll() on a change descriptor (see the top of this file), so that it wakes too.
  class Waker {
   public:
    Waker();
    ~Waker();
    Waker(const Waker&) = delete;
    Waker& operator=(const Waker&) = delete;
    void NotifyOne();
    void NotifyAll();
    // Waits (lock held on entry and return) until `ready`, `deadline`, or `fd` (-1: none)
    // readable; true if `fd` is readable.
    template <typename Ready>
    bool Wait(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point deadline,
              Ready ready, int fd);

   private:
    bool Poll(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point deadline,
              int fd);
    std::condition_variable cv_;
    int event_fd_ = -1;
    std::atomic<bool> polling_{false};  // a lane is in Poll (set and cleared under the lock)
  };

  // The jobs of one or more lanes; guarded by mu_.
  struct Queue {
    std::string_view name;
    std::deque<std::unique_ptr<StoreJob>> jobs;
    size_t running = 0;  // taken by a lane, not finished
    uint64_t ran = 0;
    Waker wake;  // job lanes wait here (the log lane waits on wake_)
  };

  // When a control lane next waits: until its tick, or at once if its session's change
  // descriptor turns readable (not again within a millisecond of the last early tick).
  struct ControlClock {
    std::chrono::steady_clock::time_point next_tick;
    std::chrono::steady_clock::time_point early_after{};
    int Fd(Engine& session, std::chrono::steady_clock::time_point now) const;
    // Until when to wait: the tick, or the end of the gap while the descriptor is ignored.
    std::chrono::steady_clock::time_point Until(std::chrono::steady_clock::time_point now) const;
  };

  void Loop();                   // lane 0
  void JobLoop(size_t lane);     // lanes 1..
  Queue& QueueOf(JobLane lane);  // by the session count
  bool Idle() const;             // every queue empty and nothing running; under mu_
  std::deque<std::unique_ptr<StoreJob>> TakeAllJobs();  // under mu_
  // Writes `batches` in transactions of at most batch_rows rows.
  void WriteAll(std::vector<CallBatch>& batches);

  Engine& engine_;
  const StoreThreadOptions options_;
  std::vector<Engine*> sessions_;  // engine_.session(i), one per lane; constant
  WriteFn write_;                  // set by Start, before the threads run
  TickFn tick_;
  TickFn control_tick_;
  mutable std::mutex mu_;
  Waker wake_;
  std::condition_variable jobs_done_;
  // queues_[0] "log", [1] "control", [2] "read": as many as the lanes need (top of this file).
  std::vector<std::unique_ptr<Queue>> queues_;
  size_t queued_jobs_ = 0;            // on every queue together
  std::vector<CallBatch> queued_;     // batches waiting for the thread
  size_t queued_rows_ = 0;            // records in queued_
  std::vector<CallBatch> spares_;     // written and cleared, for SubmitRecords to hand back
  std::vector<CallBatchPart> group_;  // the log lane's: one transaction's parts
  bool jobs_closed_ = false;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // [i] runs lane i
};

template <typename T, typename Fn, typename Done>
class StoreThread::CallJob : public StoreJob {
 public:
  CallJob(Fn fn, Done done) : fn_(std::move(fn)), done_(std::move(done)) {}

  void Run(Engine& engine) override { std::move(done_)(fn_(engine)); }
  void Refuse(const Error& error) override { std::move(done_)(Result<T>(error)); }

 private:
  Fn fn_;
  Done done_;
};

// A Call with a deadline: its completion, taken once by the job's result or by the deadline's
// timer, whichever comes first (any thread); the other finds it gone. Held by both.
template <typename T>
class StoreThread::CallRace {
 public:
  template <typename Done>
  void Hold(Done done) {
    std::lock_guard lock(mu_);
    finish_ = std::make_unique<FinishWith<Done>>(std::move(done));
  }
  void Finish(Result<T> value) {
    std::unique_ptr<Finisher> taken;
    {
      std::lock_guard lock(mu_);
      taken = std::move(finish_);
    }
    if (taken) taken->Finish(std::move(value));
  }

 private:
  struct Finisher {
    virtual ~Finisher() = default;
    virtual void Finish(Result<T> value) = 0;
  };
  template <typename Done>
  struct FinishWith final : Finisher {
    explicit FinishWith(Done d) : done(std::move(d)) {}
    void Finish(Result<T> value) override { std::move(done)(std::move(value)); }
    Done done;
  };
  std::mutex mu_;
  std::unique_ptr<Finisher> finish_;
};

template <typename T, typename Fn>
boost::asio::awaitable<Result<T>> StoreThread::Call(Fn fn, JobLane lane) {
  if (options_.call_deadline.count() <= 0) {
    auto submit = [this, lane, job_fn = std::move(fn)](auto done) mutable {
      using Job = CallJob<T, Fn, decltype(done)>;
      Post(std::make_unique<Job>(std::move(job_fn), std::move(done)), lane);
    };
    auto job = net::AwaitJob<Result<T>>(std::move(submit));
    Result<T> result = co_await std::move(job);
    co_return result;
  }
  // The timer lives in this frame (on the caller's executor, cancelled there once resumed); the
  // race outlives whichever of the two answers last.
  boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  boost::asio::steady_timer timer(executor);
  auto race = std::make_shared<CallRace<T>>();
  timer.expires_after(options_.call_deadline);
  timer.async_wait([race](boost::system::error_code ec) {
    if (ec) return;  // cancelled: the job answered
    race->Finish(Result<T>(Error{ErrorCode::kUnavailable,
                                 "The store did not answer within fleet.outage_deadline.", ""}));
  });
  auto submit = [this, lane, race, job_fn = std::move(fn)](auto done) mutable {
    race->Hold(std::move(done));
    auto finish = [race](Result<T> value) { race->Finish(std::move(value)); };
    Post(std::make_unique<CallJob<T, Fn, decltype(finish)>>(std::move(job_fn), std::move(finish)),
         lane);
  };
  auto job = net::AwaitJob<Result<T>>(std::move(submit));
  Result<T> result = co_await std::move(job);
  timer.cancel();
  co_return result;
}

}  // namespace turnpike::store
