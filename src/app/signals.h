// Turns SIGINT/SIGTERM into a call, on a small thread of its own (sigtimedwait), so that no
// async-signal-safety concerns reach the rest of the program.
//
// Construct it before starting any other thread: it blocks the signals in the calling thread,
// and threads started later inherit the mask. The callback runs on the signal thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace turnpike::app {

class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void()> on_signal);
  // Blocks SIGINT and SIGTERM in the calling thread; call it before starting any thread so
  // that no thread (the store's, the access log's) receives them.
  static void BlockSignals();
  ~SignalWatcher();  // stops the thread
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Start-up waits (`serve --wait-for-deps`), before a SignalWatcher exists: waits up to `timeout`
// for SIGINT/SIGTERM (blocked by BlockSignals) and says whether one arrived (it is consumed).
bool TerminationRequested(std::chrono::milliseconds timeout);

}  // namespace turnpike::app
