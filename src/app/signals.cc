#include "app/signals.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>

#include "common/thread_name.h"

namespace turnpike::app {
namespace {
constexpr long kPollNanos = 100'000'000;  // how often the thread checks for stop
}

namespace {
sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR2);
  return set;
}
}  // namespace

void SignalWatcher::BlockSignals() {
  const sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalWatcher::SignalWatcher(std::function<void()> on_stop, std::function<void()> on_reload,
                             std::function<void()> on_restart) {
  const sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set, on_stop = std::move(on_stop), on_reload = std::move(on_reload),
                         on_restart = std::move(on_restart)] {
    SetThreadName("tp-signals");
    const timespec poll{0, kPollNanos};
    while (!stop_.load()) {
      const int signal = sigtimedwait(&set, nullptr, &poll);
      if (signal == SIGHUP) {
        if (on_reload) on_reload();
      } else if (signal == SIGUSR2) {
        if (on_restart) on_restart();
      } else if (signal > 0) {
        on_stop();
      }
    }
  });
}

SignalWatcher::~SignalWatcher() {
  stop_.store(true);
  thread_.join();
}

}  // namespace turnpike::app
