#include "store/store_thread.h"

#include <algorithm>

#include "common/thread_name.h"

namespace turnpike::store {
namespace {

// Spare batches kept for reuse: enough for a flush of every worker between two writes.
constexpr size_t kMaxSpares = 64;

constexpr size_t kLogQueue = 0;
constexpr size_t kControlQueue = 1;
constexpr size_t kReadQueue = 2;
constexpr std::string_view kQueueNames[] = {"log", "control", "read"};

}  // namespace

StoreThread::StoreThread(Engine& engine, StoreThreadOptions options)
    : engine_(engine), options_(options) {
  const size_t sessions = std::max<size_t>(1, engine.sessions());
  for (size_t i = 0; i < sessions; ++i) sessions_.push_back(&engine.session(i));
  // One queue per kind of lane in use (the table at the top of the header).
  for (size_t q = 0; q < std::min<size_t>(sessions, 3); ++q) {
    queues_.push_back(std::make_unique<Queue>());
    queues_.back()->name = kQueueNames[q];
  }
}

StoreThread::~StoreThread() { Stop(); }

StoreThread::Queue& StoreThread::QueueOf(JobLane lane) {
  switch (lane) {
    case JobLane::kLog:
      return *queues_[kLogQueue];
    case JobLane::kControl:
      return *queues_[std::min(kControlQueue, queues_.size() - 1)];
    case JobLane::kRead:
      break;
  }
  return *queues_[std::min(kReadQueue, queues_.size() - 1)];
}

Engine& StoreThread::lane_engine(JobLane lane) {
  // Queue q is served by lane q first (and lanes beyond it, for the read queue).
  for (size_t q = 0; q < queues_.size(); ++q) {
    if (queues_[q].get() == &QueueOf(lane)) return *sessions_[q];
  }
  return *sessions_[0];
}

void StoreThread::Start(WriteFn write, TickFn tick, TickFn control_tick) {
  write_ = std::move(write);
  tick_ = std::move(tick);
  control_tick_ = std::move(control_tick);
  threads_.emplace_back([this] {
    SetThreadName("tp-store");
    Loop();
  });
  for (size_t lane = 1; lane < sessions_.size(); ++lane) {
    threads_.emplace_back([this, lane] {
      SetThreadName(lane == 1 ? "tp-store-c" : "tp-store-r");
      JobLoop(lane);
    });
  }
}

void StoreThread::Post(std::unique_ptr<StoreJob> job, JobLane lane) {
  {
    std::lock_guard lock(mu_);
    if (!jobs_closed_ && queued_jobs_ < options_.max_jobs) {
      Queue& queue = QueueOf(lane);
      queue.jobs.push_back(std::move(job));
      ++queued_jobs_;
      if (&queue == queues_[kLogQueue].get()) {
        wake_.notify_one();
      } else {
        queue.wake.notify_one();
      }
      return;
    }
  }
  const Error error{ErrorCode::kUnavailable, "The store is busy or shutting down; try again.", ""};
  job->Refuse(error);
}

SubmitResult StoreThread::SubmitRecords(CallBatch& batch, bool force) {
  std::lock_guard lock(mu_);
  if (stopping_) return SubmitResult::kClosed;
  if (!force && queued_rows_ + batch.size() > options_.max_records) return SubmitResult::kFull;
  if (batch.empty()) return SubmitResult::kAccepted;
  queued_rows_ += batch.size();
  queued_.push_back(std::move(batch));
  if (spares_.empty()) {
    batch = CallBatch{};
  } else {
    batch = std::move(spares_.back());
    spares_.pop_back();
  }
  wake_.notify_one();
  return SubmitResult::kAccepted;
}

size_t StoreThread::queued_records() const {
  std::lock_guard lock(mu_);
  return queued_rows_;
}

size_t StoreThread::spare_batches() const {
  std::lock_guard lock(mu_);
  return spares_.size();
}

bool StoreThread::Idle() const {
  for (const auto& queue : queues_) {
    if (!queue->jobs.empty() || queue->running != 0) return false;
  }
  return true;
}

std::deque<std::unique_ptr<StoreJob>> StoreThread::TakeAllJobs() {
  std::deque<std::unique_ptr<StoreJob>> all;
  for (auto& queue : queues_) {
    for (auto& job : queue->jobs) all.push_back(std::move(job));
    queue->jobs.clear();
  }
  queued_jobs_ = 0;
  return all;
}

void StoreThread::CloseJobs() {
  std::unique_lock lock(mu_);
  jobs_closed_ = true;
  if (threads_.empty()) return;
  jobs_done_.wait(lock, [this] { return Idle(); });
}

void StoreThread::Stop() {
  {
    std::lock_guard lock(mu_);
    jobs_closed_ = true;
    stopping_ = true;
    wake_.notify_one();
    for (auto& queue : queues_) queue->wake.notify_all();
  }
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // Never started (tests, or start-up failed): refuse what is queued.
  std::deque<std::unique_ptr<StoreJob>> left;
  {
    std::lock_guard lock(mu_);
    left = TakeAllJobs();
  }
  for (auto& job : left) job->Refuse(Error{ErrorCode::kUnavailable, "The store stopped.", ""});
}

void StoreThread::WriteAll(std::vector<CallBatch>& batches) {
  size_t rows = 0;
  for (const CallBatch& batch : batches) {
    for (size_t i = 0; i < batch.size(); i += options_.batch_rows) {
      const CallBatchPart part{&batch, i, std::min(i + options_.batch_rows, batch.size())};
      if (rows > 0 && rows + part.size() > options_.batch_rows) {
        write_(engine_.call_log(), group_);
        group_.clear();
        rows = 0;
      }
      group_.push_back(part);
      rows += part.size();
    }
  }
  if (!group_.empty()) write_(engine_.call_log(), group_);
  group_.clear();
}

void StoreThread::Loop() {
  Queue& own = *queues_[kLogQueue];
  // With one session this lane is also the control lane.
  const bool control = sessions_.size() == 1;
  auto next_tick = std::chrono::steady_clock::now() + options_.tick;
  std::vector<CallBatch> batches;
  std::deque<std::unique_ptr<StoreJob>> jobs;
  for (;;) {
    bool stop = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_until(lock, next_tick,
                       [&] { return stopping_ || !own.jobs.empty() || !queued_.empty(); });
      jobs.swap(own.jobs);
      queued_jobs_ -= jobs.size();
      own.running = jobs.size();
      batches.swap(queued_);
      queued_rows_ = 0;
      stop = stopping_;
    }
    for (auto& job : jobs) job->Run(engine_);
    if (!jobs.empty()) {
      const size_t ran = jobs.size();
      jobs.clear();
      std::lock_guard lock(mu_);
      own.running = 0;
      own.ran += ran;
      jobs_done_.notify_all();
    }
    if (!batches.empty()) {
      WriteAll(batches);
      {
        std::lock_guard lock(mu_);
        for (CallBatch& batch : batches) {
          if (spares_.size() >= kMaxSpares) break;
          batch.Clear();
          spares_.push_back(std::move(batch));
        }
      }
      batches.clear();  // those beyond kMaxSpares are freed here
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_tick) {
      if (tick_) tick_(engine_);
      if (control && control_tick_) control_tick_(engine_);
      next_tick = now + options_.tick;
    }
    if (stop) {
      std::lock_guard lock(mu_);
      if (own.jobs.empty() && queued_.empty()) break;
    }
  }
  std::lock_guard lock(mu_);
  jobs_done_.notify_all();
}

void StoreThread::JobLoop(size_t lane) {
  Engine& engine = *sessions_[lane];
  Queue& queue = *queues_[std::min(lane, queues_.size() - 1)];
  const bool control = lane == kControlQueue;
  auto next_tick = std::chrono::steady_clock::now() + options_.tick;
  for (;;) {
    std::unique_ptr<StoreJob> job;
    {
      std::unique_lock lock(mu_);
      const auto ready = [&] { return stopping_ || !queue.jobs.empty(); };
      if (control) {
        queue.wake.wait_until(lock, next_tick, ready);
      } else {
        queue.wake.wait(lock, ready);
      }
      if (!queue.jobs.empty()) {
        // One at a time: the read lanes share their queue.
        job = std::move(queue.jobs.front());
        queue.jobs.pop_front();
        --queued_jobs_;
        ++queue.running;
      } else if (stopping_) {
        break;
      }
    }
    if (job) {
      job->Run(engine);
      job.reset();
      std::lock_guard lock(mu_);
      --queue.running;
      ++queue.ran;
      jobs_done_.notify_all();
    }
    const auto now = std::chrono::steady_clock::now();
    if (control && now >= next_tick) {
      if (control_tick_) control_tick_(engine);
      next_tick = now + options_.tick;
    }
  }
  std::lock_guard lock(mu_);
  jobs_done_.notify_all();
}

void StoreThread::RenderMetrics(observability::PrometheusWriter& w) const {
  using observability::MetricType;
  std::lock_guard lock(mu_);
  w.Family("turnpike_store_connections",
           "Store sessions (connections) in use, one thread each: the log lane, the control "
           "lane, the read lanes.",
           MetricType::kGauge);
  w.Sample("turnpike_store_connections", {}, static_cast<double>(sessions_.size()));
  w.Family("turnpike_store_jobs_total", "Store jobs run, by the lane that ran them.",
           MetricType::kCounter);
  for (const auto& queue : queues_) {
    w.Sample("turnpike_store_jobs_total", {{"lane", queue->name}}, static_cast<double>(queue->ran));
  }
  w.Family("turnpike_store_jobs_queued", "Store jobs waiting for their lane.", MetricType::kGauge);
  for (const auto& queue : queues_) {
    w.Sample("turnpike_store_jobs_queued", {{"lane", queue->name}},
             static_cast<double>(queue->jobs.size()));
  }
}

}  // namespace turnpike::store
