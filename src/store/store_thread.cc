#include "store/store_thread.h"

#include "common/thread_name.h"

namespace turnpike::store {

StoreThread::StoreThread(Engine& engine, StoreThreadOptions options)
    : engine_(engine), options_(options) {}

StoreThread::~StoreThread() { Stop(); }

void StoreThread::Start(WriteFn write, TickFn tick) {
  write_ = std::move(write);
  tick_ = std::move(tick);
  thread_ = std::thread([this] {
    SetThreadName("tp-store");
    Loop();
  });
}

void StoreThread::Post(std::unique_ptr<StoreJob> job) {
  {
    std::lock_guard lock(mu_);
    if (!jobs_closed_ && jobs_.size() < options_.max_jobs) {
      jobs_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  }
  const Error error{ErrorCode::kUnavailable, "The store is busy or shutting down; try again.", ""};
  job->Refuse(error);
}

namespace {

// Spare batches kept for reuse: enough for a flush of every worker between two writes.
constexpr size_t kMaxSpares = 64;

}  // namespace

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

void StoreThread::CloseJobs() {
  std::unique_lock lock(mu_);
  jobs_closed_ = true;
  if (!thread_.joinable()) return;
  jobs_done_.wait(lock, [this] { return jobs_.empty() && !busy_; });
}

void StoreThread::Stop() {
  {
    std::lock_guard lock(mu_);
    jobs_closed_ = true;
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  // Never started (tests, or start-up failed): refuse what is queued.
  std::deque<std::unique_ptr<StoreJob>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(jobs_);
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
  auto next_tick = std::chrono::steady_clock::now() + options_.tick;
  std::vector<CallBatch> batches;
  std::deque<std::unique_ptr<StoreJob>> jobs;
  for (;;) {
    bool stop = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_until(lock, next_tick,
                       [this] { return stopping_ || !jobs_.empty() || !queued_.empty(); });
      jobs.swap(jobs_);
      batches.swap(queued_);
      queued_rows_ = 0;
      stop = stopping_;
      busy_ = !jobs.empty();
    }
    for (auto& job : jobs) job->Run(engine_);
    if (!jobs.empty()) {
      jobs.clear();
      std::lock_guard lock(mu_);
      busy_ = false;
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
      next_tick = now + options_.tick;
    }
    if (stop) {
      std::lock_guard lock(mu_);
      if (jobs_.empty() && queued_.empty()) break;
    }
  }
  std::lock_guard lock(mu_);
  jobs_done_.notify_all();
}

}  // namespace turnpike::store
