#include "governance/budget.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

namespace turnpike::governance {
namespace {

constexpr int kAmountBits = 48;
constexpr uint64_t kAmountMask = (uint64_t{1} << kAmountBits) - 1;
constexpr int kEpochYear = 1970;
constexpr int kMonthsPerYear = 12;
constexpr size_t kMonthTextSize = 16;  // "YYYY-MM" and room for any unsigned year

static_assert(kMaxBudgetMicros <= static_cast<int64_t>(kAmountMask),
              "budget amounts must fit the counter word");

uint64_t Pack(MonthId month, int64_t amount) {
  return (uint64_t{month} << kAmountBits) | static_cast<uint64_t>(amount);
}
MonthId MonthPart(uint64_t word) { return static_cast<MonthId>(word >> kAmountBits); }
int64_t AmountPart(uint64_t word) { return static_cast<int64_t>(word & kAmountMask); }

int64_t ClampAmount(int64_t amount) { return std::clamp<int64_t>(amount, 0, kMaxBudgetMicros); }

// Adds `delta` to the amount of `word` if it is still in `month`; a word of another month is
// left alone (see budget.h: a closed month's settlement is not counted here).
void AddInMonth(std::atomic<uint64_t>& word, MonthId month, int64_t delta) {
  uint64_t current = word.load(std::memory_order_relaxed);
  while (MonthPart(current) == month) {
    uint64_t next = Pack(month, ClampAmount(AmountPart(current) + delta));
    if (word.compare_exchange_weak(current, next, std::memory_order_acq_rel,
                                   std::memory_order_relaxed)) {
      return;
    }
  }
}

// Adds `amount` to `word` in `month`, starting the month at zero if the word is older.
void AddOrStartMonth(std::atomic<uint64_t>& word, MonthId month, int64_t amount) {
  uint64_t current = word.load(std::memory_order_relaxed);
  while (MonthPart(current) <= month) {
    int64_t base = MonthPart(current) == month ? AmountPart(current) : 0;
    if (word.compare_exchange_weak(current, Pack(month, ClampAmount(base + amount)),
                                   std::memory_order_acq_rel, std::memory_order_relaxed)) {
      return;
    }
  }
}

}  // namespace

MonthId MonthOf(int64_t unix_seconds) {
  using namespace std::chrono;
  year_month_day date{floor<days>(sys_seconds{seconds{unix_seconds}})};
  int year = static_cast<int>(date.year());
  unsigned month = static_cast<unsigned>(date.month());
  if (year < kEpochYear) return 0;
  return static_cast<MonthId>((year - kEpochYear) * kMonthsPerYear + (month - 1));
}

std::string FormatMonth(MonthId month) {
  char text[kMonthTextSize];
  std::snprintf(text, sizeof(text), "%04u-%02u", kEpochYear + month / kMonthsPerYear,
                month % kMonthsPerYear + 1);
  return text;
}

std::optional<Reservation> BudgetCounter::Reserve(MonthId month, int64_t estimate, int64_t cap) {
  estimate = ClampAmount(estimate);
  cap = ClampAmount(cap);
  uint64_t current = committed_word_.load(std::memory_order_relaxed);
  while (true) {
    // A reservation is charged to the newest month the counter has seen (budget.h).
    MonthId charged = std::max(month, MonthPart(current));
    int64_t committed = MonthPart(current) == charged ? AmountPart(current) : 0;
    if (estimate > cap - committed) return std::nullopt;
    if (committed_word_.compare_exchange_weak(current, Pack(charged, committed + estimate),
                                              std::memory_order_acq_rel,
                                              std::memory_order_relaxed)) {
      return Reservation(this, charged, estimate);
    }
  }
}

BudgetUsage BudgetCounter::Read(MonthId month) const {
  uint64_t committed = committed_word_.load(std::memory_order_acquire);
  uint64_t spent = spent_word_.load(std::memory_order_acquire);
  BudgetUsage usage;
  usage.month = std::max(month, MonthPart(committed));
  if (MonthPart(committed) == usage.month) usage.committed = AmountPart(committed);
  if (MonthPart(spent) == usage.month) usage.spent = AmountPart(spent);
  return usage;
}

void BudgetCounter::Restore(MonthId month, int64_t spent) {
  spent = ClampAmount(spent);
  committed_word_.store(Pack(month, spent), std::memory_order_release);
  spent_word_.store(Pack(month, spent), std::memory_order_release);
}

void BudgetCounter::Correct(MonthId month, int64_t delta) {
  AddInMonth(committed_word_, month, delta);
  AddInMonth(spent_word_, month, delta);
}

void BudgetCounter::Settle(MonthId month, int64_t estimate, int64_t actual) {
  actual = ClampAmount(actual);
  AddInMonth(committed_word_, month, actual - estimate);
  AddOrStartMonth(spent_word_, month, actual);
}

void BudgetCounter::Release(MonthId month, int64_t estimate) {
  AddInMonth(committed_word_, month, -estimate);
}

Reservation::Reservation(Reservation&& other) noexcept
    : counter_(std::exchange(other.counter_, nullptr)),
      month_(other.month_),
      estimate_(other.estimate_) {}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    counter_ = std::exchange(other.counter_, nullptr);
    month_ = other.month_;
    estimate_ = other.estimate_;
  }
  return *this;
}

void Reservation::Settle(int64_t actual_micros) {
  if (counter_ == nullptr) return;
  std::exchange(counter_, nullptr)->Settle(month_, estimate_, actual_micros);
}

void Reservation::Release() {
  if (counter_ == nullptr) return;
  std::exchange(counter_, nullptr)->Release(month_, estimate_);
}

}  // namespace turnpike::governance
