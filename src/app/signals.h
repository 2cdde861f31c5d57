// Turns SIGINT/SIGTERM (stop), SIGHUP (reload) and SIGUSR2 (restart: app/restart.h) into calls, on
// a small thread of its own (sigtimedwait), so that no async-signal-safety concerns reach the rest
// of the program.
//
// Construct it before starting any other thread: it blocks the signals in the calling thread,
// and threads started later inherit the mask. The callbacks run on the signal thread, one at a
// time; a reload may block there (it reads files) without delaying any connection. Without a
// reload callback SIGHUP is ignored (it no longer ends the process); so is SIGUSR2 without a
// restart callback.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace turnpike::app {

class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void()> on_stop, std::function<void()> on_reload = {},
                         std::function<void()> on_restart = {});
  // Blocks SIGINT, SIGTERM, SIGHUP and SIGUSR2 in the calling thread; call it before starting any
  // thread so that no thread (the store's, the access log's) receives them.
  static void BlockSignals();
  ~SignalWatcher();  // stops the thread
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace turnpike::app
