#include "governance/budget_alerts.h"

#include <algorithm>

#include "governance/snapshot.h"

namespace turnpike::governance {

namespace {

constexpr int kPercent = 100;
constexpr uint64_t kMonthMask = 0xFFFFF;
constexpr uint64_t kPercentMask = 0xFFF;
static_assert(kMaxBudgetAlertPercent <= static_cast<int>(kPercentMask));

// A slot: the tenant's hash (high 32 bits) | month (20 bits) | highest percent announced (12).
uint64_t Encode(uint64_t hash, MonthId month, int percent) {
  return (hash & 0xFFFFFFFF00000000ULL) | ((static_cast<uint64_t>(month) & kMonthMask) << 12) |
         (static_cast<uint64_t>(percent) & kPercentMask);
}

}  // namespace

BudgetAlerts::BudgetAlerts(std::vector<int> percents) : percents_(std::move(percents)) {
  std::sort(percents_.begin(), percents_.end());
  percents_.erase(std::unique(percents_.begin(), percents_.end()), percents_.end());
}

void BudgetAlerts::Check(const TenantEntry& tenant) const {
  if (!sink_ || tenant.plan == nullptr || tenant.counters == nullptr) return;
  const Plan& plan = *tenant.plan;
  const std::vector<int>& percents = plan.budget_alerts ? *plan.budget_alerts : percents_;
  const std::optional<int64_t>& cap = plan.monthly_budget_micros;
  if (percents.empty() || !cap || *cap <= 0) return;
  const BudgetUsage usage = tenant.counters->budget.Read(0);
  // Amounts are below 2^47 and percents at most 1000: no product overflows.
  if (usage.spent * kPercent < static_cast<int64_t>(percents.front()) * *cap) return;
  size_t level = 0;
  while (level < percents.size() &&
         usage.spent * kPercent >= static_cast<int64_t>(percents[level]) * *cap) {
    ++level;
  }
  const int highest = percents[level - 1];
  const uint64_t hash = std::hash<std::string_view>{}(tenant.tenant.id);
  std::atomic<uint64_t>& slot = slots_[hash % kSlots];
  uint64_t seen = slot.load(std::memory_order_relaxed);
  const bool same = (seen >> 32) == (hash >> 32) && ((seen >> 12) & kMonthMask) == usage.month;
  const int announced = same ? static_cast<int>(seen & kPercentMask) : 0;
  if (announced >= highest) return;
  // One worker announces each step; a loser sees the new percent on its next settle.
  if (!slot.compare_exchange_strong(seen, Encode(hash, usage.month, highest),
                                    std::memory_order_relaxed)) {
    return;
  }
  for (size_t i = 0; i < level; ++i) {
    if (percents[i] <= announced) continue;
    sink_(BudgetCrossing{tenant.tenant.id, usage.month, percents[i], usage.spent, *cap});
  }
}

}  // namespace turnpike::governance
