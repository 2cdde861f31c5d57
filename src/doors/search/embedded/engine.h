// The embedded backend's thread: the one thread that runs the Store (store.h), fed by a bounded
// queue of jobs. A worker's coroutine awaits a job with Call(): it suspends (the worker keeps
// serving), the job runs on this thread, and the coroutine resumes on its own executor with
// the result (net/bridge.h). A job whose deadline passed while it waited is not run (504
// timeout_exception); a full queue refuses at once (503). Searches of one process are serialised
// here: the engine's throughput is one core's, which the benchmarks measure.
//
// EmbeddedBackend is the per-worker search::Backend over one Engine.
//
// Ownership: app/ owns the Engine; it outlives every worker (destroy it after the server).
// Thread safety: Call from any thread; the Store only on the engine thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "doors/search/backend.h"
#include "doors/search/embedded/store.h"
#include "doors/search/es_error.h"
#include "net/bridge.h"

namespace turnpike::search::embedded {

class Engine {
 public:
  static constexpr size_t kDefaultMaxJobs = 4096;
  static Result<std::unique_ptr<Engine>> Open(const std::string& path,
                                              size_t max_jobs = kDefaultMaxJobs);
  ~Engine();  // runs what is queued, then joins

  // Blocks until every job queued so far has run and posted its completion. app/ calls it
  // after the server's loops stop and before their io_contexts are destroyed, so no
  // completion is ever posted to a destroyed executor (the io_contexts then destroy the
  // posted handlers with everything else they hold).
  void Drain();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs fn(Store&) -> Result<T> on the engine thread.
  template <typename T, typename Fn>
  boost::asio::awaitable<Result<T>> Call(Deadline deadline, Fn fn);

  // Jobs taken from the queue (run, or answered 504 for a passed deadline), for tests.
  uint64_t jobs_run() const;

 private:
  class Job {
   public:
    virtual ~Job() = default;
    virtual void Run(Store* store, bool expired) = 0;  // store null: refused
  };
  template <typename T, typename Fn, typename Done>
  class CallJob;

  explicit Engine(std::unique_ptr<Store> store, size_t max_jobs);
  void Post(std::unique_ptr<Job> job, Deadline deadline);
  void Loop();

  std::unique_ptr<Store> store_;  // the engine thread's
  const size_t max_jobs_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  bool busy_ = false;  // the thread is running a batch
  std::deque<std::pair<std::unique_ptr<Job>, Deadline>> jobs_;
  bool stopping_ = false;
  uint64_t jobs_run_ = 0;
  std::thread thread_;
};

template <typename T, typename Fn, typename Done>
class Engine::CallJob : public Engine::Job {
 public:
  CallJob(Fn fn, Done done) : fn_(std::move(fn)), done_(std::move(done)) {}

  void Run(Store* store, bool expired) override {
    if (store == nullptr) {
      std::move(done_)(Result<T>(EsError("es_rejected_execution_exception",
                                         "the embedded search engine's queue is full",
                                         ErrorCode::kUnavailable)));
    } else if (expired) {
      std::move(done_)(Result<T>(EsError(kTimeout, "the search deadline passed while queued",
                                         ErrorCode::kUpstreamTimeout)));
    } else {
      std::move(done_)(fn_(*store));
    }
  }

 private:
  Fn fn_;
  Done done_;
};

template <typename T, typename Fn>
boost::asio::awaitable<Result<T>> Engine::Call(Deadline deadline, Fn fn) {
  auto submit = [this, deadline, job_fn = std::move(fn)](auto done) mutable {
    using Job = CallJob<T, Fn, decltype(done)>;
    Post(std::make_unique<Job>(std::move(job_fn), std::move(done)), deadline);
  };
  auto job = net::AwaitJob<Result<T>>(std::move(submit));
  Result<T> result = co_await std::move(job);
  co_return result;
}

class EmbeddedBackend : public Backend {
 public:
  explicit EmbeddedBackend(Engine& engine) : engine_(engine) {}

  std::string_view name() const override { return "embedded"; }
  const Capabilities& capabilities() const override;
  Awaitable<Status> CreateIndex(Scope scope, Mapping mapping, Deadline deadline) override;
  Awaitable<Result<IndexInfo>> GetIndex(Scope scope, Deadline deadline) override;
  Awaitable<Status> DeleteIndex(Scope scope, Deadline deadline) override;
  Awaitable<Result<std::vector<IndexListing>>> ListIndices(std::string tenant,
                                                           Deadline deadline) override;
  Awaitable<Status> PutMapping(Scope scope, Mapping mapping, Deadline deadline) override;
  Awaitable<Status> Refresh(Scope scope, Deadline deadline) override;
  Awaitable<Result<std::vector<WriteResult>>> Write(Scope scope, std::vector<WriteOp> ops,
                                                    Deadline deadline) override;
  Awaitable<Result<std::optional<StoredDocument>>> Get(Scope scope, std::string id,
                                                       Deadline deadline) override;
  Awaitable<Result<Page>> Search(Scope scope, const SearchRequest& request,
                                 Deadline deadline) override;
  Awaitable<Result<Total>> Count(Scope scope, const Query& query, const Knn* knn, int64_t up_to,
                                 Deadline deadline) override;
  Awaitable<Result<std::vector<AggResult>>> Aggregate(Scope scope, const Query& query,
                                                      const std::vector<Aggregation>& aggs,
                                                      Deadline deadline) override;
  Awaitable<Result<Coverage>> Cover(Scope scope, Deadline deadline) override;

 private:
  Engine& engine_;
};

}  // namespace turnpike::search::embedded
