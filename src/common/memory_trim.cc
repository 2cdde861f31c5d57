#include "common/memory_trim.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>

#include "common/thread_name.h"

namespace turnpike {

namespace {

// The process's resident set in bytes (/proc/self/statm's second field, in pages); 0 if it
// cannot be read.
uint64_t ResidentBytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128];
  const ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  unsigned long long size = 0;
  unsigned long long resident = 0;
  if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

bool TrimPolicy::Sample(int64_t load, Clock::time_point now) {
  if (load > peak_) peak_ = load;
  if (peak_ < kMinBurst) {
    // No burst pending: the follow-ups of the last one, while the load stays light.
    if (follow_ups_ == 0 || now - last_trim_ < 3 * after_) return false;
    --follow_ups_;
    last_trim_ = now;
    return true;
  }
  if (load * 4 > peak_) {
    calm_since_ = now;
    return false;
  }
  if (now - calm_since_ < after_) return false;
  peak_ = 0;
  follow_ups_ = kFollowUps;
  last_trim_ = now;
  return true;
}

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds after, std::function<int64_t()> load,
                             std::chrono::milliseconds tick, std::function<uint64_t()> trim)
    : policy_(after), tick_(tick), load_(std::move(load)), trim_(std::move(trim)) {
  thread_ = std::thread([this] { Run(); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

TrimTotals MemoryTrimmer::totals() const {
  return {trims_.load(std::memory_order_relaxed), released_bytes_.load(std::memory_order_relaxed),
          static_cast<double>(trim_nanos_.load(std::memory_order_relaxed)) / 1e9};
}

uint64_t MemoryTrimmer::TrimHeap() {
  const uint64_t before = ResidentBytes();
  ::malloc_trim(0);
  const uint64_t after = ResidentBytes();
  return before > after ? before - after : 0;
}

void MemoryTrimmer::Run() {
  SetThreadName("tp-trim");
  std::unique_lock lock(mu_);
  for (;;) {
    if (wake_.wait_for(lock, tick_, [this] { return stop_; })) return;
    lock.unlock();
    const auto now = TrimPolicy::Clock::now();
    if (policy_.Sample(load_(), now)) {
      const uint64_t released = trim_();
      const auto spent = TrimPolicy::Clock::now() - now;
      released_bytes_.fetch_add(released, std::memory_order_relaxed);
      trim_nanos_.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(spent).count()),
                            std::memory_order_relaxed);
      trims_.fetch_add(1, std::memory_order_relaxed);
    }
    lock.lock();
  }
}

}  // namespace turnpike
