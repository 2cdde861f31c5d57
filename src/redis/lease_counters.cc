#include "redis/lease_counters.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <utility>

#include "governance/local_counters.h"
#include "observability/metrics.h"
#include "redis/lease_budget.h"
#include "redis/lease_rate.h"

namespace turnpike::redis {
namespace asio = boost::asio;
using governance::MonthId;

namespace {

// One scope's counters in one allocation (counters.h): the leased budget and rate limits.
struct LeaseScope {
  // `scope`: "t:<tenant id>", "k:<key id>" or "a:<agent id>".
  LeaseScope(LeaseCounters& engine, const std::string& prefix, const std::string& scope)
      : budget(engine, prefix + "budget:" + scope + ":"),
        requests(engine, prefix + "window:" + scope + ":rpm"),
        tokens(engine, prefix + "window:" + scope + ":tpm") {}
  LeaseBudgetCounter budget;
  LeaseRateCounter requests;
  LeaseRateCounter tokens;
  governance::ScopeCounters view{budget, requests, tokens};
};

}  // namespace

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
  std::string scope_name = kind == governance::ScopeKind::kTenant ? "t:"
                           : kind == governance::ScopeKind::kKey  ? "k:"
                                                                  : "a:";
  scope_name += id;
  auto scope = std::make_shared<LeaseScope>(*this, options_.key_prefix, scope_name);
  std::shared_ptr<LeaseBudgetCounter> budget(scope, &scope->budget);
  scope->budget.self = budget;
  std::shared_ptr<LeaseRateCounter> requests(scope, &scope->requests);
  scope->requests.self = requests;
  std::shared_ptr<LeaseRateCounter> tokens(scope, &scope->tokens);
  scope->tokens.self = tokens;
  {
    std::lock_guard lock(mu_);
    std::erase_if(scopes_, [](const auto& weak) { return weak.expired(); });
    std::erase_if(rates_, [](const auto& weak) { return weak.expired(); });
    scopes_.push_back(budget);
    rates_.push_back(requests);
    rates_.push_back(tokens);
  }
  governance::ScopeCounters* view = &scope->view;
  return std::shared_ptr<governance::ScopeCounters>(std::move(scope), view);
}

void LeaseCounters::Post(std::shared_ptr<LeaseBudgetCounter> counter) {
  asio::post(client_.context(), [this, counter = std::move(counter)] {
    Call(counter, /*refill=*/true, /*give_back=*/false, nullptr);
  });
}

void LeaseCounters::PostRate(std::shared_ptr<LeaseRateCounter> counter) {
  asio::post(client_.context(), [this, counter = std::move(counter)] {
    RateCall(counter, /*refill=*/true, /*give=*/0, nullptr);
  });
}

void LeaseCounters::RateCall(const std::shared_ptr<LeaseRateCounter>& counter, bool refill,
                             int64_t give, std::function<void()> done) {
  LeaseRateCounter& c = *counter;
  const int64_t limit = c.limit_.load();
  int64_t want = 0;
  if (refill) {
    c.refill_wanted_.store(false, std::memory_order_release);
    want = std::max(c.need_.exchange(0), std::max<int64_t>(limit / kRateSlices, 1));
  }
  std::vector<std::string> args = {"EVALSHA",
                                   client_.Sha(1),
                                   "1",
                                   c.key_,
                                   std::to_string(limit),
                                   std::to_string(want),
                                   std::to_string(give),
                                   std::to_string(c.recent_.Sum(NowNs())),
                                   c.window_gen_,
                                   std::to_string(options_.lease_ttl.count()),
                                   options_.replica_id};
  client_.Submit(
      refill ? Op::kRateRefill : Op::kRateReturn, std::move(args),
      [this, counter, give, want, done = std::move(done)](Result<Reply> r) {
        LeaseRateCounter& c = *counter;
        const bool ok = r.ok() && r->type == Reply::Type::kArray && r->items.size() == 4;
        if (!ok) {
          c.units_.fetch_add(give);
          c.state_.store(static_cast<int>(LedgerState::kUnavailable));
          refill_failures_.fetch_add(1, std::memory_order_relaxed);
        } else {
          const int64_t granted = r->items[0].integer;
          if (granted > 0) c.recent_.Add(NowNs(), granted);
          c.window_gen_ = r->items[3].text;
          c.units_.fetch_add(granted, std::memory_order_acq_rel);
          c.low_water_.store(std::max<int64_t>(granted, 1) / kSweepsPerTtl);
          const bool full = granted < want;
          c.retry_ns_.store(r->items[2].integer * 1000);
          c.state_.store(static_cast<int>(full ? LedgerState::kExhausted : LedgerState::kOk));
        }
        c.state_at_ns_.store(NowNs());
        c.inflight_.store(false, std::memory_order_release);
        if (ok && c.refill_wanted_.load() && !c.inflight_.exchange(true)) PostRate(counter);
        wakeups_.fetch_add(c.waiters_.WakeAll(), std::memory_order_relaxed);
        if (done) done();
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
        if (c.final_done_) {
          // Stop's give-back waited for this call: it goes now (inflight_ stays set), so
          // the spend settled meanwhile is reported and the lease freed, not left to the TTL.
          Call(counter, /*refill=*/false, /*give_back=*/true, std::exchange(c.final_done_, {}));
        } else {
          c.inflight_.store(false, std::memory_order_release);
          // A refill asked for while this call ran (or a failed one): once more, unless
          // Redis is down (then the next request asks again after kRetryNs).
          if (ok && c.refill_wanted_.load() && !c.inflight_.exchange(true)) Post(counter);
        }
        wakeups_.fetch_add(c.waiters_.WakeAll(), std::memory_order_relaxed);
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
  std::vector<std::shared_ptr<LeaseRateCounter>> rates;
  {
    std::lock_guard lock(mu_);
    std::erase_if(rates_, [](const auto& weak) { return weak.expired(); });
    for (const auto& weak : rates_) {
      if (auto strong = weak.lock()) rates.push_back(std::move(strong));
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
    if (c->inflight_.exchange(true)) {
      // A call in flight renews the lease too. Stop's give-back follows it instead (Call's
      // reply sends it), so what is settled or held meanwhile is not left behind.
      if (final_return) {
        ++*outstanding;
        c->final_done_ = finish;
      }
      continue;
    }
    bool idle = false;
    if (full) {
      const uint64_t uses = c->uses_.load();
      idle = uses == c->uses_seen_;
      c->uses_seen_ = uses;
    }
    ++*outstanding;
    Call(c, /*refill=*/false, /*give_back=*/final_return || idle, finish);
  }
  // Unused rate units of a scope idle since the last tick go back to the shared window.
  for (const auto& r : rates) {
    const uint64_t uses = r->uses_.load();
    const bool idle = uses == r->uses_seen_;
    r->uses_seen_ = uses;
    if (!(idle || final_return) || r->units_.load() <= 0) continue;
    if (r->inflight_.exchange(true)) continue;
    int64_t units = r->units_.load();
    while (units > 0 && !r->units_.compare_exchange_weak(units, 0)) {
    }
    if (units <= 0) {
      r->inflight_.store(false);
      continue;
    }
    ++*outstanding;
    RateCall(r, /*refill=*/false, units, finish);
  }
  finish();
}

void LeaseCounters::ReregisterRates() {
  std::vector<std::shared_ptr<LeaseRateCounter>> rates;
  {
    std::lock_guard lock(mu_);
    for (const auto& weak : rates_) {
      if (auto strong = weak.lock()) rates.push_back(std::move(strong));
    }
  }
  const int64_t now = NowNs();
  for (const auto& r : rates) {
    if (r->recent_.Sum(now) <= 0) continue;     // nothing in the window that could be lost
    if (r->inflight_.exchange(true)) continue;  // the call in flight re-registers too
    RateCall(r, /*refill=*/false, /*give=*/0, nullptr);
  }
}

void LeaseCounters::Start() {
  // After a reconnect (maybe to a restarted, empty Redis) every lease is re-registered at once,
  // inside the rebuilt ledger's settling time (lease_script.h).
  client_.OnConnected([this] {
    if (sweep_->stopped) return;
    SweepOnce(/*full=*/true, /*final_return=*/false, nullptr);
    ReregisterRates();
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
  w.Family("turnpike_budget_fail_open_admitted_total",
           "Budget reservations of fail-open plans made against this replica's own count while "
           "Redis was unreachable (no zero-overshoot guarantee)",
           observability::MetricType::kCounter);
  w.Sample("turnpike_budget_fail_open_admitted_total", {},
           static_cast<double>(fail_open_admitted_.load(std::memory_order_relaxed)));
  w.Family("turnpike_budget_lease_wakeups_total",
           "Requests waiting for a budget or rate lease refill that were woken when it completed "
           "or failed (redis.refill_wait)",
           observability::MetricType::kCounter);
  w.Sample("turnpike_budget_lease_wakeups_total", {},
           static_cast<double>(wakeups_.load(std::memory_order_relaxed)));
  w.Family("turnpike_budget_lease_wait_timeouts_total",
           "Requests that waited the whole redis.refill_wait for a lease refill",
           observability::MetricType::kCounter);
  w.Sample("turnpike_budget_lease_wait_timeouts_total", {},
           static_cast<double>(wait_timeouts_.load(std::memory_order_relaxed)));
  w.Family("turnpike_budget_lease_failures_total",
           "Lease calls to Redis that failed (unreachable, timed out or refused)",
           observability::MetricType::kCounter);
  w.Sample("turnpike_budget_lease_failures_total", {},
           static_cast<double>(refill_failures_.load(std::memory_order_relaxed)));
}

}  // namespace turnpike::redis
