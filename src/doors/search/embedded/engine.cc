#include "doors/search/embedded/engine.h"

#include "common/thread_name.h"

namespace turnpike::search::embedded {

Result<std::unique_ptr<Engine>> Engine::Open(const std::string& path, size_t max_jobs) {
  Result<std::unique_ptr<Store>> store = Store::Open(path);
  if (!store.ok()) return store.error();
  return std::unique_ptr<Engine>(new Engine(std::move(*store), max_jobs));
}

Engine::Engine(std::unique_ptr<Store> store, size_t max_jobs)
    : store_(std::move(store)), max_jobs_(max_jobs), thread_([this] { Loop(); }) {}

Engine::~Engine() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Engine::Drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return jobs_.empty() && !busy_; });
}

uint64_t Engine::jobs_run() const {
  std::lock_guard lock(mu_);
  return jobs_run_;
}

void Engine::Post(std::unique_ptr<Job> job, Deadline deadline) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_ && jobs_.size() < max_jobs_) {
      jobs_.emplace_back(std::move(job), deadline);
      job = nullptr;
    }
  }
  if (job != nullptr) {
    job->Run(nullptr, false);
    return;
  }
  wake_.notify_one();
}

void Engine::Loop() {
  SetThreadName("tp-search");
  std::deque<std::pair<std::unique_ptr<Job>, Deadline>> batch;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      batch.swap(jobs_);
      jobs_run_ += batch.size();  // before they complete: a caller that resumed sees its job
      busy_ = true;
    }
    for (auto& [job, deadline] : batch) job->Run(store_.get(), Clock::now() > deadline);
    batch.clear();
    {
      std::lock_guard lock(mu_);
      busy_ = false;
    }
    idle_.notify_all();
  }
}

}  // namespace turnpike::search::embedded
