#include "store/store_thread.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "common/thread_name.h"

namespace turnpike::store {
namespace {

// Spare batches kept for reuse: enough for a flush of every worker between two writes.
constexpr size_t kMaxSpares = 64;

constexpr size_t kLogQueue = 0;
constexpr size_t kControlQueue = 1;
constexpr size_t kReadQueue = 2;
constexpr std::string_view kQueueNames[] = {"log", "control", "read"};

// The earliest a change descriptor may tick the control lane again after it did.
constexpr auto kEarlyTickGap = std::chrono::milliseconds(1);

}  // namespace

StoreThread::Waker::Waker() : event_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

StoreThread::Waker::~Waker() {
  if (event_fd_ >= 0) ::close(event_fd_);
}

void StoreThread::Waker::NotifyOne() {
  cv_.notify_one();
  if (polling_.load(std::memory_order_acquire)) (void)::eventfd_write(event_fd_, 1);
}

void StoreThread::Waker::NotifyAll() {
  cv_.notify_all();
  if (polling_.load(std::memory_order_acquire)) (void)::eventfd_write(event_fd_, 1);
}

template <typename Ready>
bool StoreThread::Waker::Wait(std::unique_lock<std::mutex>& lock,
                              std::chrono::steady_clock::time_point deadline, Ready ready, int fd) {
  if (fd < 0 || event_fd_ < 0) {
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock, ready);
    } else {
      cv_.wait_until(lock, deadline, ready);
    }
    return false;
  }
  // A notification after this check writes the eventfd, which poll() sees.
  if (ready()) return false;
  return Poll(lock, deadline, fd);
}

bool StoreThread::Waker::Poll(std::unique_lock<std::mutex>& lock,
                              std::chrono::steady_clock::time_point deadline, int fd) {
  // Set before the unlock: whoever changes what `ready` reads after it (under the lock, then
  // notifying) sees it and writes the eventfd; a lane waiting on the condition variable costs
  // its notifiers no write.
  polling_.store(true, std::memory_order_release);
  lock.unlock();
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  pollfd fds[2] = {{event_fd_, POLLIN, 0}, {fd, POLLIN, 0}};
  const int ready = ::poll(fds, 2, static_cast<int>(std::max<int64_t>(0, left.count())));
  if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
    eventfd_t drained = 0;
    (void)::eventfd_read(event_fd_, &drained);
  }
  lock.lock();
  polling_.store(false, std::memory_order_release);
  return ready > 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

int StoreThread::ControlClock::Fd(Engine& session,
                                  std::chrono::steady_clock::time_point now) const {
  return now >= early_after ? session.records().ChangeFd() : -1;
}

std::chrono::steady_clock::time_point StoreThread::ControlClock::Until(
    std::chrono::steady_clock::time_point now) const {
  return now >= early_after ? next_tick : std::min(next_tick, early_after);
}

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

// Post and SubmitRecords notify after unlocking: a lane woken while the notifier still held
// the lock would wake only to block on it (a futex wait and wake more per hand-over). Safe: a
// lane checks what it waits for under the lock before it sleeps.
void StoreThread::Post(std::unique_ptr<StoreJob> job, JobLane lane) {
  Waker* wake = nullptr;
  {
    std::lock_guard lock(mu_);
    if (!jobs_closed_ && queued_jobs_ < options_.max_jobs) {
      Queue& queue = QueueOf(lane);
      queue.jobs.push_back(std::move(job));
      ++queued_jobs_;
      wake = &queue == queues_[kLogQueue].get() ? &wake_ : &queue.wake;
    }
  }
  if (wake != nullptr) {
    wake->NotifyOne();
    return;
  }
  const Error error{ErrorCode::kUnavailable, "The store is busy or shutting down; try again.", ""};
  job->Refuse(error);
}

SubmitResult StoreThread::SubmitRecords(CallBatch& batch, bool force) {
  {
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
  }
  wake_.NotifyOne();
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
    wake_.NotifyOne();
    for (auto& queue : queues_) queue->wake.NotifyAll();
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
  ControlClock clock{std::chrono::steady_clock::now() + options_.tick};
  std::vector<CallBatch> batches;
  std::deque<std::unique_ptr<StoreJob>> jobs;
  for (;;) {
    bool stop = false;
    bool changed = false;
    {
      std::unique_lock lock(mu_);
      const auto now = std::chrono::steady_clock::now();
      const int fd = control ? clock.Fd(engine_, now) : -1;
      changed = wake_.Wait(
          lock, control ? clock.Until(now) : clock.next_tick,
          [&] { return stopping_ || !own.jobs.empty() || !queued_.empty(); }, fd);
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
    if (now >= clock.next_tick) {
      if (tick_) tick_(engine_);
      if (control && control_tick_) control_tick_(engine_);
      clock.next_tick = now + options_.tick;
    } else if (changed && control_tick_) {
      control_tick_(engine_);
      clock.early_after = now + kEarlyTickGap;
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
  ControlClock clock{std::chrono::steady_clock::now() + options_.tick};
  for (;;) {
    std::unique_ptr<StoreJob> job;
    bool changed = false;
    {
      std::unique_lock lock(mu_);
      const auto ready = [&] { return stopping_ || !queue.jobs.empty(); };
      if (control) {
        const auto now = std::chrono::steady_clock::now();
        changed = queue.wake.Wait(lock, clock.Until(now), ready, clock.Fd(engine, now));
      } else {
        queue.wake.Wait(lock, std::chrono::steady_clock::time_point::max(), ready, -1);
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
    if (control && now >= clock.next_tick) {
      if (control_tick_) control_tick_(engine);
      clock.next_tick = now + options_.tick;
    } else if (control && changed && control_tick_) {
      control_tick_(engine);
      clock.early_after = now + kEarlyTickGap;
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
