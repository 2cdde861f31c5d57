#include "redis/lease_counters.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>

#include "governance/local_counters.h"
#include "observability/metrics.h"

namespace turnpike::redis {
namespace asio = boost::asio;
using governance::BudgetUsage;
using governance::MonthId;
using governance::ReserveResult;
using governance::ReserveStatus;

namespace {

// After a refill found the ledger exhausted or Redis unreachable, a short shortage is answered
// at once (refused / unavailable) and a new refill is tried at most this often.
constexpr int64_t kRetryNs = 100'000'000;
// A lease is used locally until sent + ttl - ttl / kMarginDivisor: Redis keeps it until at
// least sent + ttl (its clock starts later), so the replica stops first.
constexpr int64_t kMarginDivisor = 5;
constexpr int kSweepsPerTtl = 4;
constexpr int64_t kLedgerTtlSeconds = 40LL * 24 * 3600;  // a month's ledger outlives the month

enum class LedgerState : int { kOk, kExhausted, kUnavailable, kSettling };

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t Clamp(int64_t v) { return std::clamp<int64_t>(v, 0, governance::kMaxBudgetMicros); }

void AtomicMax(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

class LeaseBudgetCounter final : public governance::BudgetCounter {
 public:
  LeaseBudgetCounter(LeaseCounters& engine, std::string key_base)
      : engine_(engine), key_base_(std::move(key_base)) {}

  ReserveResult Reserve(MonthId month, int64_t estimate, int64_t cap) override;
  BudgetUsage Read(MonthId month) const override;
  void Restore(MonthId month, int64_t spent) override;
  void Correct(MonthId month, int64_t delta) override;

  std::weak_ptr<LeaseBudgetCounter> self;

 private:
  friend class LeaseCounters;
  void Settle(MonthId month, int64_t estimate, int64_t actual) override;
  void Release(MonthId month, int64_t estimate) override;
  void RequestRefill(int64_t need);

  LeaseCounters& engine_;
  const std::string key_base_;
  // Any thread. Invariant: headroom = lease - reserved - spend not yet reported to Redis.
  std::atomic<int64_t> headroom_{0};
  std::atomic<int64_t> reserved_{0};
  std::atomic<int64_t> unreported_{0};
  std::atomic<int64_t> spent_local_{0};  // restored + settled here: Read()
  std::atomic<uint32_t> month_{0};       // the ledger month admitted against (0: none yet)
  std::atomic<uint32_t> want_month_{0};  // a newer month a request asked for
  std::atomic<int64_t> cap_{0};
  std::atomic<int64_t> need_{0};
  std::atomic<int64_t> deadline_ns_{0};
  std::atomic<int64_t> low_water_{0};
  std::atomic<int> state_{static_cast<int>(LedgerState::kOk)};
  std::atomic<int64_t> state_at_ns_{0};
  std::atomic<bool> inflight_{false};
  std::atomic<bool> refill_wanted_{false};
  std::atomic<uint64_t> uses_{0};
  std::atomic<uint32_t> base_month_{0};
  std::atomic<int64_t> base_spent_{0};
  // Client thread only.
  int64_t lease_ = 0;
  int64_t ledger_spent_ = 0;
  std::string ledger_gen_;  // the generation ledger_spent_ was read from ("": none yet)
  MonthId ledger_month_ = 0;
  uint64_t uses_seen_ = 0;
};

namespace {

// One scope's counters in one allocation (counters.h): the leased budget, local rate limiters.
struct LeaseScope {
  LeaseScope(LeaseCounters& engine, std::string key_base) : budget(engine, std::move(key_base)) {}
  LeaseBudgetCounter budget;
  governance::GcraLimiter requests;
  governance::GcraLimiter tokens;
  governance::ScopeCounters view{budget, requests, tokens};
};

}  // namespace

ReserveResult LeaseBudgetCounter::Reserve(MonthId month, int64_t estimate, int64_t cap) {
  estimate = Clamp(estimate);
  cap = Clamp(cap);
  cap_.store(cap, std::memory_order_relaxed);
  const MonthId current = month_.load(std::memory_order_acquire);
  if (cap >= governance::kUnlimitedBudget) {
    // No cap: nothing to lease; spend is still reported when a cap appears.
    headroom_.fetch_sub(estimate, std::memory_order_relaxed);
    reserved_.fetch_add(estimate, std::memory_order_relaxed);
    return Hold(std::max(month, current), estimate);
  }
  const int64_t now = NowNs();
  if (month > current || now >= deadline_ns_.load(std::memory_order_acquire)) {
    if (month > current) {
      uint32_t want = want_month_.load(std::memory_order_relaxed);
      while (month > want && !want_month_.compare_exchange_weak(want, month)) {
      }
    }
    RequestRefill(estimate);
    return state_.load() == static_cast<int>(LedgerState::kUnavailable)
               ? ReserveStatus::kUnavailable
               : ReserveStatus::kPending;
  }
  int64_t h = headroom_.load(std::memory_order_relaxed);
  while (h >= estimate) {
    if (headroom_.compare_exchange_weak(h, h - estimate, std::memory_order_acq_rel,
                                        std::memory_order_relaxed)) {
      reserved_.fetch_add(estimate, std::memory_order_relaxed);
      uses_.fetch_add(1, std::memory_order_relaxed);
      if (h - estimate < std::max(low_water_.load(std::memory_order_relaxed), estimate)) {
        RequestRefill(0);
      }
      return Hold(current, estimate);
    }
  }
  const auto state = static_cast<LedgerState>(state_.load(std::memory_order_acquire));
  const bool recent = now - state_at_ns_.load(std::memory_order_relaxed) < kRetryNs;
  if (state != LedgerState::kOk && recent) {
    switch (state) {
      case LedgerState::kExhausted:
        return ReserveStatus::kRefused;
      case LedgerState::kUnavailable:
        return ReserveStatus::kUnavailable;
      default:
        return ReserveStatus::kPending;  // settling after a Redis restart: retried shortly
    }
  }
  RequestRefill(estimate - h);
  return ReserveStatus::kPending;
}

void LeaseBudgetCounter::RequestRefill(int64_t need) {
  AtomicMax(need_, need);
  refill_wanted_.store(true, std::memory_order_release);
  if (inflight_.exchange(true, std::memory_order_acq_rel)) return;
  std::shared_ptr<LeaseBudgetCounter> strong = self.lock();
  if (!strong) {
    inflight_.store(false);
    return;
  }
  engine_.Post(std::move(strong));
}

BudgetUsage LeaseBudgetCounter::Read(MonthId month) const {
  BudgetUsage usage;
  usage.month = std::max(month, month_.load(std::memory_order_acquire));
  usage.spent = spent_local_.load(std::memory_order_relaxed);
  usage.committed = usage.spent + std::max<int64_t>(reserved_.load(std::memory_order_relaxed), 0);
  return usage;
}

void LeaseBudgetCounter::Restore(MonthId month, int64_t spent) {
  base_month_.store(month);
  base_spent_.store(Clamp(spent));
  spent_local_.store(Clamp(spent));
}

void LeaseBudgetCounter::Correct(MonthId month, int64_t delta) {
  if (month != month_.load(std::memory_order_acquire)) return;
  spent_local_.fetch_add(delta, std::memory_order_relaxed);
  if (delta <= 0) return;  // the ledger only learns more spend: never frees budget on a guess
  unreported_.fetch_add(delta, std::memory_order_relaxed);
  headroom_.fetch_sub(delta, std::memory_order_relaxed);
}

void LeaseBudgetCounter::Settle(MonthId month, int64_t estimate, int64_t actual) {
  actual = Clamp(actual);
  reserved_.fetch_sub(estimate, std::memory_order_relaxed);
  if (month != month_.load(std::memory_order_acquire) &&
      cap_.load(std::memory_order_relaxed) < governance::kUnlimitedBudget) {
    return;  // a closed month: the call log has it (budget.h)
  }
  if (actual > estimate) engine_.over_reservation_.fetch_add(1, std::memory_order_relaxed);
  spent_local_.fetch_add(actual, std::memory_order_relaxed);
  unreported_.fetch_add(actual, std::memory_order_relaxed);
  headroom_.fetch_add(estimate - actual, std::memory_order_acq_rel);
}

void LeaseBudgetCounter::Release(MonthId month, int64_t estimate) {
  reserved_.fetch_sub(estimate, std::memory_order_relaxed);
  if (month != month_.load(std::memory_order_acquire) &&
      cap_.load(std::memory_order_relaxed) < governance::kUnlimitedBudget) {
    return;
  }
  headroom_.fetch_add(estimate, std::memory_order_acq_rel);
}

struct LeaseCounters::Sweep {
  explicit Sweep(asio::io_context& context) : timer(context) {}
  asio::steady_timer timer;
  bool stopped = false;
};

LeaseCounters::LeaseCounters(Client& client, LeaseOptions options)
    : client_(client),
      options_(std::move(options)),
      sweep_(std::make_unique<Sweep>(client.context())) {}

LeaseCounters::~LeaseCounters() = default;

std::shared_ptr<governance::ScopeCounters> LeaseCounters::MakeScope(governance::ScopeKind kind,
                                                                    std::string_view id) {
  std::string base = options_.key_prefix;
  base += kind == governance::ScopeKind::kTenant ? "t:" : "k:";
  base += id;
  base += ':';
  auto scope = std::make_shared<LeaseScope>(*this, std::move(base));
  std::shared_ptr<LeaseBudgetCounter> budget(scope, &scope->budget);
  scope->budget.self = budget;
  {
    std::lock_guard lock(mu_);
    std::erase_if(scopes_, [](const auto& weak) { return weak.expired(); });
    scopes_.push_back(budget);
  }
  governance::ScopeCounters* view = &scope->view;
  return std::shared_ptr<governance::ScopeCounters>(std::move(scope), view);
}

void LeaseCounters::Post(std::shared_ptr<LeaseBudgetCounter> counter) {
  asio::post(client_.context(), [this, counter = std::move(counter)] {
    Call(counter, /*refill=*/true, /*give_back=*/false, nullptr);
  });
}

void LeaseCounters::Call(const std::shared_ptr<LeaseBudgetCounter>& counter, bool refill,
                         bool give_back, std::function<void()> done) {
  LeaseBudgetCounter& c = *counter;
  const MonthId target = std::max(c.want_month_.load(), c.month_.load());
  if (target != c.ledger_month_) {
    // A new month (or the first call): a fresh ledger; the old month's unreported spend stays
    // in the call log only.
    c.ledger_month_ = target;
    c.lease_ = 0;
    c.ledger_spent_ = 0;
    c.ledger_gen_.clear();
    c.month_.store(target, std::memory_order_release);
    c.headroom_.store(0);
    c.unreported_.store(0);
  }
  if (refill) c.refill_wanted_.store(false, std::memory_order_release);
  const int64_t report = c.unreported_.exchange(0);
  int64_t give = 0;
  if (give_back) {
    int64_t h = c.headroom_.load();
    while (h > 0 && !c.headroom_.compare_exchange_weak(h, 0)) {
    }
    give = std::max<int64_t>(h, 0);
  }
  const int64_t need = refill ? c.need_.exchange(0) : 0;
  // This replica used the ledger before: finding it gone means Redis lost it (lease_script.h).
  const bool history = c.lease_ > 0 || c.ledger_spent_ > 0 || report > 0;
  // Before any reply: the store's spend at start (seeds a missing ledger only).
  const int64_t base = !c.ledger_gen_.empty()           ? c.ledger_spent_
                       : target == c.base_month_.load() ? c.base_spent_.load()
                                                        : 0;
  std::vector<std::string> args = {"EVALSHA",
                                   client_.Sha(0),
                                   "1",
                                   c.key_base_ + governance::FormatMonth(target),
                                   options_.replica_id,
                                   std::to_string(c.cap_.load()),
                                   std::to_string(report),
                                   std::to_string(give),
                                   std::to_string(need),
                                   std::to_string(c.lease_),
                                   std::to_string(base),
                                   std::to_string(options_.lease_ttl.count()),
                                   refill ? "refill" : "keep",
                                   std::to_string(kLedgerTtlSeconds),
                                   history ? "1" : "0",
                                   c.ledger_gen_};
  const int64_t sent_ns = NowNs();
  const Op op = refill ? Op::kRefill : give_back ? Op::kReturn : Op::kRenew;
  client_.Submit(
      op, std::move(args),
      [this, counter, report, give, sent_ns, done = std::move(done)](Result<Reply> r) {
        LeaseBudgetCounter& c = *counter;
        const bool ok = r.ok() && r->type == Reply::Type::kArray && r->items.size() == 6;
        if (!ok) {
          c.unreported_.fetch_add(report);
          c.headroom_.fetch_add(give);
          c.state_.store(static_cast<int>(LedgerState::kUnavailable));
          c.state_at_ns_.store(NowNs());
          refill_failures_.fetch_add(1, std::memory_order_relaxed);
        } else {
          const int64_t mine = r->items[0].integer;
          const int64_t expected = c.lease_ - report - give;
          c.headroom_.fetch_add(mine - expected, std::memory_order_acq_rel);
          c.low_water_.store(std::max<int64_t>(mine - expected, 0) / kSweepsPerTtl);
          c.lease_ = mine;
          c.ledger_spent_ = r->items[1].integer;
          c.ledger_gen_ = r->items[5].text;
          const int64_t free = r->items[2].integer;
          const LedgerState state = free < 0    ? LedgerState::kSettling
                                    : free == 0 ? LedgerState::kExhausted
                                                : LedgerState::kOk;
          c.state_.store(static_cast<int>(state));
          c.state_at_ns_.store(NowNs());
          const int64_t ttl_ns =
              std::chrono::duration_cast<std::chrono::nanoseconds>(options_.lease_ttl).count();
          c.deadline_ns_.store(sent_ns + ttl_ns - ttl_ns / kMarginDivisor,
                               std::memory_order_release);
        }
        c.inflight_.store(false, std::memory_order_release);
        // A refill asked for while this call ran (or a failed one): once more, unless
        // Redis is down (then the next request asks again after kRetryNs).
        if (ok && c.refill_wanted_.load() && !c.inflight_.exchange(true)) Post(counter);
        if (done) done();
      });
}

void LeaseCounters::SweepOnce(bool full, bool final_return, std::function<void()> done) {
  std::vector<std::shared_ptr<LeaseBudgetCounter>> live;
  {
    std::lock_guard lock(mu_);
    std::erase_if(scopes_, [](const auto& weak) { return weak.expired(); });
    for (const auto& weak : scopes_) {
      if (auto strong = weak.lock()) live.push_back(std::move(strong));
    }
  }
  auto outstanding = std::make_shared<size_t>(1);
  auto finish = [outstanding, done] {
    if (--*outstanding == 0 && done) done();
  };
  for (const auto& c : live) {
    if (c->cap_.load() >= governance::kUnlimitedBudget) continue;  // no cap: no ledger
    if (c->lease_ == 0 && c->unreported_.load() == 0) continue;
    if (!full && c->unreported_.load() == 0) continue;
    if (c->inflight_.exchange(true)) continue;  // a refill in flight renews it too
    bool idle = false;
    if (full) {
      const uint64_t uses = c->uses_.load();
      idle = uses == c->uses_seen_;
      c->uses_seen_ = uses;
    }
    ++*outstanding;
    Call(c, /*refill=*/false, /*give_back=*/final_return || idle, finish);
  }
  finish();
}

void LeaseCounters::Start() {
  // After a reconnect (maybe to a restarted, empty Redis) every lease is re-registered at once,
  // inside the rebuilt ledger's settling time (lease_script.h).
  client_.OnConnected([this] {
    if (!sweep_->stopped) SweepOnce(/*full=*/true, /*final_return=*/false, nullptr);
  });
  Sweep* sweep = sweep_.get();
  const std::chrono::milliseconds period = options_.report_interval;
  const int64_t full_every =
      std::max<int64_t>(1, (options_.lease_ttl / kSweepsPerTtl) / options_.report_interval);
  // Re-arms itself on the client's thread until Stop.
  struct Tick {
    LeaseCounters* self;
    std::chrono::milliseconds period;
    int64_t full_every;
    int64_t n = 0;
    void operator()(boost::system::error_code ec) {
      if (ec || self->sweep_->stopped) return;
      self->SweepOnce(++n % full_every == 0, false, nullptr);
      self->sweep_->timer.expires_after(period);
      self->sweep_->timer.async_wait(*this);
    }
  };
  asio::post(client_.context(), [sweep, tick = Tick{this, period, full_every}]() mutable {
    sweep->timer.expires_after(tick.period);
    sweep->timer.async_wait(tick);
  });
}

void LeaseCounters::Stop(std::chrono::milliseconds timeout) {
  auto returned = std::make_shared<std::promise<void>>();
  std::future<void> done = returned->get_future();
  asio::post(client_.context(), [this, returned] {
    sweep_->stopped = true;
    sweep_->timer.cancel();
    SweepOnce(true, true, [returned] { returned->set_value(); });
  });
  done.wait_for(timeout);
}

void LeaseCounters::RenderMetrics(observability::PrometheusWriter& w) const {
  client_.RenderMetrics(w);
  w.Family("turnpike_budget_settled_over_reservation_total",
           "Requests whose settled cost exceeded what admission reserved",
           observability::MetricType::kCounter);
  w.Sample("turnpike_budget_settled_over_reservation_total", {},
           static_cast<double>(over_reservation_.load(std::memory_order_relaxed)));
  w.Family("turnpike_budget_lease_failures_total",
           "Lease calls to Redis that failed (unreachable, timed out or refused)",
           observability::MetricType::kCounter);
  w.Sample("turnpike_budget_lease_failures_total", {},
           static_cast<double>(refill_failures_.load(std::memory_order_relaxed)));
}

}  // namespace turnpike::redis
