// Waiting for a dependency at start-up (`turnpike serve --wait-for-deps`): a server the gateway
// needs (PostgreSQL; Redis) may come up after it, as in a Kubernetes pod starting beside its
// database. Without the flag an unreachable dependency ends start-up with a clear message;
// with it, the attempt is repeated every kRetryInterval, saying so once, until it succeeds or
// SIGINT/SIGTERM arrives (then the last error is returned). Only kUnavailable is retried: any
// other error (a bad password, a schema newer than the binary) ends start-up at once.
//
// Threads: the main thread at start-up, with SIGINT and SIGTERM blocked (app/signals.h): the
// wait is a sigtimedwait on them, so a stop request ends it at once.
#pragma once

#include <chrono>
#include <functional>
#include <string_view>

#include "common/result.h"

namespace turnpike::app {

inline constexpr std::chrono::milliseconds kRetryInterval{1'000};

// Runs `attempt` until it does not fail with kUnavailable, or once when !wait. `name` names
// the dependency in the waiting message ("PostgreSQL").
template <typename T>
Result<T> WaitForDependency(std::string_view name, bool wait,
                            const std::function<Result<T>()>& attempt);

// Sleeps up to `interval`; false if SIGINT or SIGTERM arrived (consumed).
bool SleepUnlessStopped(std::chrono::milliseconds interval);
// Prints "waiting for <name>: <message>" to stderr (once per wait).
void SayWaiting(std::string_view name, const Error& error);

template <typename T>
Result<T> WaitForDependency(std::string_view name, bool wait,
                            const std::function<Result<T>()>& attempt) {
  bool said = false;
  while (true) {
    Result<T> result = attempt();
    if (result.ok() || !wait || result.error().code != ErrorCode::kUnavailable) return result;
    if (!said) SayWaiting(name, result.error());
    said = true;
    if (!SleepUnlessStopped(kRetryInterval)) return result;
  }
}

}  // namespace turnpike::app
