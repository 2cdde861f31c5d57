// Gives the heap's free pages back to the OS once a burst of work is over.
//
// main() keeps glibc from returning an arena's free top until it passes 64 MiB, for the CPU
// that saves under load (app/main_command.cc), so the pages a burst of requests allocated and
// freed stay with the process: an idle gateway would hold its busiest minute's memory for
// good. A MemoryTrimmer samples the load once a tick: the exchanges seen in it (begun during
// it, or still open at its end), so that a burst shorter than a tick counts whole. When that
// has stayed at or under a quarter of the highest tick since the last trim for `after`, it calls
// malloc_trim(0), which hands every arena's free pages back (madvise) while keeping the
// chunks, so the next burst reuses the address space and only faults pages in again.
//
// It trims once per fall, then follows up kFollowUps times, 3 x `after` apart, while the load
// stays light (what a burst left in caches with a time to live, such as the upstream pool's idle
// connections, is freed later than the burst ends); then not again until a new peak has come
// and gone. A peak under kMinBurst exchanges a tick is no burst (a light load, a scraper's
// polls: too little to have grown the heap). The trim runs on the trimmer's own thread; glibc
// takes each arena's lock while it walks it, so a worker allocating at that moment waits for
// that arena's walk (a quiet process: few do).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace turnpike {

// When to trim, from samples of the load (no clock or thread: testable alone).
class TrimPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int64_t kMinBurst = 32;
  static constexpr int kFollowUps = 4;
  explicit TrimPolicy(std::chrono::milliseconds after) : after_(after) {}

  // One sample of the load. True when a trim is due (a burst's, or one of its follow-ups).
  bool Sample(int64_t load, Clock::time_point now);

 private:
  const std::chrono::milliseconds after_;
  int64_t peak_ = 0;  // the highest sample since the last trim; under kMinBurst: no burst
  Clock::time_point calm_since_{};
  int follow_ups_ = 0;  // trims still due after the last burst's, while the load stays light
  Clock::time_point last_trim_{};
};

// Counts since start, each a relaxed load (read by /metrics on a worker).
struct TrimTotals {
  uint64_t trims = 0;
  uint64_t released_bytes = 0;  // resident memory before a trim minus after, summed
  double seconds = 0;           // time spent in malloc_trim, summed
};

class MemoryTrimmer {
 public:
  // `load` is called on the trimmer's thread once per `tick` (the exchanges seen since the last
  // call); `trim` returns the bytes it gave back (the default: malloc_trim(0), measured by the
  // process's resident set).
  MemoryTrimmer(std::chrono::milliseconds after, std::function<int64_t()> load,
                std::chrono::milliseconds tick = std::chrono::seconds(1),
                std::function<uint64_t()> trim = TrimHeap);
  ~MemoryTrimmer();  // stops the thread and joins it
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  TrimTotals totals() const;

  // malloc_trim(0); returns the fall of the resident set across it (0 if it grew).
  static uint64_t TrimHeap();

 private:
  void Run();

  TrimPolicy policy_;
  const std::chrono::milliseconds tick_;
  const std::function<int64_t()> load_;
  const std::function<uint64_t()> trim_;
  std::atomic<uint64_t> trims_{0};
  std::atomic<uint64_t> released_bytes_{0};
  std::atomic<uint64_t> trim_nanos_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace turnpike
