#include "governance/budget_alerts.h"

#include <algorithm>

#include "governance/snapshot.h"

namespace turnpike::governance {

namespace {

constexpr int kPercent = 100;
constexpr uint64_t kMonthMask = 0xFFFFFF;
constexpr uint64_t kLevelMask = 0xFF;

uint64_t Encode(uint64_t hash, MonthId month, size_t level) {
  return (hash & 0xFFFFFFFF00000000ULL) | ((static_cast<uint64_t>(month) & kMonthMask) << 8) |
         (static_cast<uint64_t>(level) & kLevelMask);
}

}  // namespace

BudgetAlerts::BudgetAlerts(std::vector<int> percents) : percents_(std::move(percents)) {
  std::sort(percents_.begin(), percents_.end());
  percents_.erase(std::unique(percents_.begin(), percents_.end()), percents_.end());
  if (percents_.size() > kLevelMask) percents_.resize(kLevelMask);
}

void BudgetAlerts::Check(const TenantEntry& tenant) const {
  if (!sink_ || percents_.empty() || tenant.plan == nullptr || tenant.counters == nullptr) return;
  const std::optional<int64_t>& cap = tenant.plan->monthly_budget_micros;
  if (!cap || *cap <= 0) return;
  const BudgetUsage usage = tenant.counters->budget.Read(0);
  // Amounts are below 2^47 and percents at most 1000: no product overflows.
  if (usage.spent * kPercent < static_cast<int64_t>(percents_.front()) * *cap) return;
  size_t level = 0;
  while (level < percents_.size() &&
         usage.spent * kPercent >= static_cast<int64_t>(percents_[level]) * *cap) {
    ++level;
  }
  const uint64_t hash = std::hash<std::string_view>{}(tenant.tenant.id);
  std::atomic<uint64_t>& slot = slots_[hash % kSlots];
  uint64_t seen = slot.load(std::memory_order_relaxed);
  const bool same = (seen >> 32) == (hash >> 32) && ((seen >> 8) & kMonthMask) == usage.month;
  const size_t announced = same ? static_cast<size_t>(seen & kLevelMask) : 0;
  if (announced >= level) return;
  // One worker announces each step; a loser sees the new level on its next settle.
  if (!slot.compare_exchange_strong(seen, Encode(hash, usage.month, level),
                                    std::memory_order_relaxed)) {
    return;
  }
  for (size_t i = announced; i < level; ++i) {
    sink_(BudgetCrossing{tenant.tenant.id, usage.month, percents_[i], usage.spent, *cap});
  }
}

}  // namespace turnpike::governance
