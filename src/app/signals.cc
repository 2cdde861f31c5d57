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
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

bool TerminationRequested(std::chrono::milliseconds timeout) {
  const sigset_t set = TerminationSignals();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec wait{static_cast<time_t>(seconds.count()),
                      static_cast<long>((timeout - seconds).count() * 1'000'000)};
  return sigtimedwait(&set, nullptr, &wait) > 0;
}

void SignalWatcher::BlockSignals() {
  const sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalWatcher::SignalWatcher(std::function<void()> on_signal) {
  const sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set, on_signal = std::move(on_signal)] {
    SetThreadName("tp-signals");
    const timespec poll{0, kPollNanos};
    while (!stop_.load()) {
      if (sigtimedwait(&set, nullptr, &poll) > 0) on_signal();
    }
  });
}

SignalWatcher::~SignalWatcher() {
  stop_.store(true);
  thread_.join();
}

}  // namespace turnpike::app
