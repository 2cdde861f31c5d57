#include "store/store_thread.h"

namespace turnpike::store {

StoreThread::StoreThread(Store& store, StoreThreadOptions options, WriteFn write, TickFn tick)
    : store_(store), options_(options), write_(std::move(write)), tick_(std::move(tick)) {}

StoreThread::~StoreThread() { Stop(); }

void StoreThread::Start() {
  thread_ = std::thread([this] { Loop(); });
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

SubmitResult StoreThread::SubmitRecords(std::vector<CallRecord>& records, bool force) {
  std::lock_guard lock(mu_);
  if (stopping_) return SubmitResult::kClosed;
  if (!force && records_.size() + records.size() > options_.max_records) {
    return SubmitResult::kFull;
  }
  if (records_.empty()) {
    records_.swap(records);
  } else {
    records_.insert(records_.end(), std::make_move_iterator(records.begin()),
                    std::make_move_iterator(records.end()));
  }
  records.clear();
  wake_.notify_one();
  return SubmitResult::kAccepted;
}

size_t StoreThread::queued_records() const {
  std::lock_guard lock(mu_);
  return records_.size();
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

void StoreThread::WriteAll(std::vector<CallRecord>& records) {
  if (records.size() <= options_.batch_rows) {
    write_(store_, records);
    return;
  }
  std::vector<CallRecord> batch;
  batch.reserve(options_.batch_rows);
  for (size_t i = 0; i < records.size(); i += options_.batch_rows) {
    const size_t end = std::min(records.size(), i + options_.batch_rows);
    batch.assign(std::make_move_iterator(records.begin() + static_cast<ptrdiff_t>(i)),
                 std::make_move_iterator(records.begin() + static_cast<ptrdiff_t>(end)));
    write_(store_, batch);
  }
}

void StoreThread::Loop() {
  auto next_tick = std::chrono::steady_clock::now() + options_.tick;
  std::vector<CallRecord> records;
  std::deque<std::unique_ptr<StoreJob>> jobs;
  for (;;) {
    bool stop = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_until(lock, next_tick,
                       [this] { return stopping_ || !jobs_.empty() || !records_.empty(); });
      jobs.swap(jobs_);
      records.swap(records_);
      stop = stopping_;
      busy_ = !jobs.empty();
    }
    for (auto& job : jobs) job->Run(store_);
    if (!jobs.empty()) {
      jobs.clear();
      std::lock_guard lock(mu_);
      busy_ = false;
      jobs_done_.notify_all();
    }
    if (!records.empty()) {
      WriteAll(records);
      records.clear();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_tick) {
      if (tick_) tick_(store_);
      next_tick = now + options_.tick;
    }
    if (stop) {
      std::lock_guard lock(mu_);
      if (jobs_.empty() && records_.empty()) break;
    }
  }
  std::lock_guard lock(mu_);
  jobs_done_.notify_all();
}

}  // namespace turnpike::store
