#include "governance/refill_wait.h"

#include <utility>

namespace turnpike::governance {

void RefillWaiters::Add(std::weak_ptr<RefillWaiter> waiter) {
  std::lock_guard lock(mu_);
  // Waiters that timed out stay until the next refill; drop them here so a long refill (Redis
  // slow to answer) does not let the list grow with every request that gave up.
  std::erase_if(waiters_, [](const auto& w) { return w.expired(); });
  waiters_.push_back(std::move(waiter));
}

uint64_t RefillWaiters::WakeAll() {
  std::vector<std::weak_ptr<RefillWaiter>> taken;
  {
    std::lock_guard lock(mu_);
    if (waiters_.empty()) return 0;
    taken.swap(waiters_);
  }
  uint64_t woken = 0;
  for (const auto& weak : taken) {
    if (std::shared_ptr<RefillWaiter> waiter = weak.lock()) {
      waiter->Wake();
      ++woken;
    }
  }
  return woken;
}

}  // namespace turnpike::governance
