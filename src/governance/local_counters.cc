#include "governance/local_counters.h"

#include <algorithm>
#include <utility>

namespace turnpike::governance {
namespace {

constexpr int kAmountBits = 48;
constexpr uint64_t kAmountMask = (uint64_t{1} << kAmountBits) - 1;

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

constexpr int64_t kWindowNs = Nanos(kRateWindow).count();
// Corrections move TAT by at most this much, so absurd usage cannot overflow it.
constexpr int64_t kMaxShiftNs = Nanos(std::chrono::hours(24)).count();

int64_t IntervalNs(int64_t limit) {
  return kWindowNs / std::clamp<int64_t>(limit, 1, kMaxRateLimit);
}

int64_t ShiftNs(int64_t units, int64_t interval_ns) {
  __int128 shift = static_cast<__int128>(std::max<int64_t>(units, 0)) * interval_ns;
  return static_cast<int64_t>(std::min<__int128>(shift, kMaxShiftNs));
}

// The decision's remaining/reset when the limiter's backlog ends at `tat_ns`.
void Describe(int64_t now_ns, int64_t tat_ns, int64_t interval_ns, RateDecision& decision) {
  int64_t backlog_ns = std::max<int64_t>(tat_ns - now_ns, 0);
  decision.reset = Nanos(backlog_ns);
  decision.remaining = std::max<int64_t>(kWindowNs - backlog_ns, 0) / interval_ns;
}

// One scope's counters in one allocation; the ScopeCounters handed out refers into it.
struct LocalScope {
  LocalBudgetCounter budget;
  GcraLimiter requests;
  GcraLimiter tokens;
  ScopeCounters view{budget, requests, tokens};
};

// The same, counting in a CounterTable's slot, held while it lives: once no process holds
// it, the table may give the slot to another scope.
struct SharedScope {
  SharedScope(CounterSlot& slot, bool adopted)
      : slot(slot),
        budget(slot.committed, slot.spent, adopted),
        requests(slot.requests_tat),
        tokens(slot.tokens_tat) {}
  ~SharedScope() { CounterTable::Release(slot); }
  SharedScope(const SharedScope&) = delete;
  SharedScope& operator=(const SharedScope&) = delete;
  CounterSlot& slot;
  LocalBudgetCounter budget;
  GcraLimiter requests;
  GcraLimiter tokens;
  ScopeCounters view{budget, requests, tokens};
};

}  // namespace

ReserveResult LocalBudgetCounter::Reserve(MonthId month, int64_t estimate, int64_t cap) {
  estimate = ClampAmount(estimate);
  cap = ClampAmount(cap);
  uint64_t current = committed_word_->load(std::memory_order_relaxed);
  while (true) {
    // A reservation is charged to the newest month the counter has seen (budget.h).
    MonthId charged = std::max(month, MonthPart(current));
    int64_t committed = MonthPart(current) == charged ? AmountPart(current) : 0;
    if (estimate > cap - committed) return ReserveStatus::kRefused;
    if (committed_word_->compare_exchange_weak(current, Pack(charged, committed + estimate),
                                               std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
      return Hold(charged, estimate);
    }
  }
}

BudgetUsage LocalBudgetCounter::Read(MonthId month) const {
  uint64_t committed = committed_word_->load(std::memory_order_acquire);
  uint64_t spent = spent_word_->load(std::memory_order_acquire);
  BudgetUsage usage;
  usage.month = std::max(month, MonthPart(committed));
  if (MonthPart(committed) == usage.month) usage.committed = AmountPart(committed);
  if (MonthPart(spent) == usage.month) usage.spent = AmountPart(spent);
  return usage;
}

void LocalBudgetCounter::Restore(MonthId month, int64_t spent) {
  if (adopted_) return;  // another process's live words: they hold more than the store
  spent = ClampAmount(spent);
  committed_word_->store(Pack(month, spent), std::memory_order_release);
  spent_word_->store(Pack(month, spent), std::memory_order_release);
}

void LocalBudgetCounter::Correct(MonthId month, int64_t delta) {
  AddInMonth(*committed_word_, month, delta);
  AddInMonth(*spent_word_, month, delta);
}

void LocalBudgetCounter::Settle(MonthId month, int64_t estimate, int64_t actual) {
  actual = ClampAmount(actual);
  AddInMonth(*committed_word_, month, actual - estimate);
  AddOrStartMonth(*spent_word_, month, actual);
}

void LocalBudgetCounter::Release(MonthId month, int64_t estimate) {
  AddInMonth(*committed_word_, month, -estimate);
}

RateDecision GcraLimiter::Check(Nanos now, int64_t cost, int64_t limit) {
  RateDecision decision;
  decision.limit = limit;
  int64_t now_ns = now.count();
  int64_t interval_ns = IntervalNs(limit);
  int64_t current = tat_ns_->load(std::memory_order_relaxed);
  if (limit <= 0 || cost > std::min(limit, kMaxRateLimit)) {
    decision.exceeds_limit = true;
    Describe(now_ns, current, interval_ns, decision);
    return decision;
  }
  int64_t shift_ns = ShiftNs(cost, interval_ns);
  while (true) {
    int64_t base = std::max(current, now_ns);
    int64_t next = base + shift_ns;
    if (next - now_ns > kWindowNs) {
      decision.retry_after = Nanos(next - kWindowNs - now_ns);
      Describe(now_ns, base, interval_ns, decision);
      return decision;
    }
    if (tat_ns_->compare_exchange_weak(current, next, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
      decision.allowed = true;
      Describe(now_ns, next, interval_ns, decision);
      return decision;
    }
  }
}

void GcraLimiter::Correct(int64_t charged, int64_t actual, int64_t limit) {
  int64_t interval_ns = IntervalNs(limit);
  int64_t delta = ShiftNs(actual, interval_ns) - ShiftNs(charged, interval_ns);
  if (delta != 0) tat_ns_->fetch_add(delta, std::memory_order_acq_rel);
}

std::shared_ptr<ScopeCounters> LocalCounters::MakeScope(ScopeKind kind, std::string_view id) {
  if (table_ != nullptr) {
    const CounterTable::Found found = table_->Find(kind, id);
    if (found.slot != nullptr) {
      auto shared = std::make_shared<SharedScope>(*found.slot, found.existed);
      ScopeCounters* view = &shared->view;
      return std::shared_ptr<ScopeCounters>(std::move(shared), view);
    }
  }
  auto scope = std::make_shared<LocalScope>();
  ScopeCounters* view = &scope->view;
  return std::shared_ptr<ScopeCounters>(std::move(scope), view);
}

}  // namespace turnpike::governance
