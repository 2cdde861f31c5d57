// The wall clock in the units governance and the store keep: unix seconds (key expiry, budget
// months, created_at). Durations and rate limits use steady clocks instead.
#pragma once

#include <chrono>
#include <cstdint>

namespace turnpike {

inline int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace turnpike
