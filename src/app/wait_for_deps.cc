#include "app/wait_for_deps.h"

#include <signal.h>
#include <time.h>

#include <iostream>

namespace turnpike::app {

bool SleepUnlessStopped(std::chrono::milliseconds interval) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(interval);
  const timespec timeout{static_cast<time_t>(seconds.count()),
                         static_cast<long>((interval - seconds).count() * 1'000'000)};
  return ::sigtimedwait(&stop, nullptr, &timeout) < 0;
}

void SayWaiting(std::string_view name, const Error& error) {
  std::cerr << "turnpike: waiting for " << name << " (--wait-for-deps): " << error.message << "\n";
}

}  // namespace turnpike::app
