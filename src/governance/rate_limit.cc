#include "governance/rate_limit.h"

#include <algorithm>

namespace turnpike::governance {

int64_t RateDecision::RetryAfterSeconds() const {
  constexpr int64_t kSecondNs = Nanos(std::chrono::seconds(1)).count();
  int64_t seconds = (retry_after.count() + kSecondNs - 1) / kSecondNs;
  return std::max<int64_t>(seconds, 1);
}

}  // namespace turnpike::governance
