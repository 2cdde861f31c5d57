// The leased counters engine (fleet mode): monthly budgets enforced fleet-wide from leases of a
// shared Redis ledger, admitted locally (governance/counters.h; README "Fleet: Redis leases").
//
// Each budget scope (a tenant or a key, with a cap) has a ledger in Redis per month
// (lease_script.h). A replica leases a slice of what remains with one EVALSHA and admits
// requests against its slice exactly as the in-process engine admits against the cap: one CAS on
// an atomic `headroom` (lease - reserved - settled but not yet reported), reserving the
// request's maximum cost. Nothing on the request path talks to Redis: when a reserve leaves
// headroom under the low-water mark (a quarter of the last slice, or one more request like this
// one) a background refill is posted to the Redis thread; it reports the spend settled since the
// last call and leases more. So the sum of the leases never exceeds what remains (zero overshoot
// by construction), unless a provider reports more than was reserved, which is counted
// (turnpike_budget_settled_over_reservation_total) and taken out of the next slices.
//
// A reserve that finds too little headroom answers:
//   kPending      a refill is posted (or under way): the governance filter parks the request,
//                 bounded by redis.refill_wait, and every completed or failed call of this
//                 counter wakes it (governance/refill_wait.h) to reserve again: admitted, 429/503
//                 at once, or parked again (counted: turnpike_budget_lease_wakeups_total,
//                 turnpike_budget_lease_wait_timeouts_total). While a rebuilt ledger settles
//                 (after a Redis restart) no refill is posted for kRetryNs after the last one,
//                 so a request pending then is woken only by another call of its counter (a
//                 report, the sweep, another request's refill) or answers at its bound
//   kRefused      the last refill found the fleet's ledger exhausted (429 insufficient_quota);
//                 a new refill is tried at most every kExhaustedRetry
//   kUnavailable  the last refill could not reach Redis (503)
// A lease is only used until its local deadline (the time the refill was sent + lease_ttl, less
// a safety margin): Redis frees it at the TTL, so a replica cut off from Redis stops admitting
// on it before anyone else can lease it again. Every report_interval, settled spend not yet
// reported is reported (op "renew": it renews the lease too), so a replica killed with a lease
// takes at most report_interval of unreported spend with it: after the TTL its lease frees and
// that spend is missing from the live ledger (the call log has it; reconcile reports the drift).
// Every lease_ttl / 4 a sweep renews the leases of busy scopes and gives back the unused
// headroom of idle ones (op "return"); Stop() gives back every lease.
//
// Scopes without a cap (kUnlimitedBudget) never touch Redis. Rate limits (RPM/TPM) are leased
// the same way from a fleet-wide GCRA (lease_rate.h, kRateScript): units are charged to the
// shared window when leased, admitted locally, and the unused ones of an idle scope are given
// back every report_interval. After a Redis restart the windows are rebuilt the way the budget
// ledger is: on reconnect each replica re-registers the units it leased in the last minute
// (recent_grants.h), and a rebuilt window grants nothing for one lease_ttl while they do, so the
// fleet does not admit a second window's worth (lease_script.h).
//
// Ownership: the composition root owns the Client and this object, stops this (Stop) before the
// client, and destroys both after every snapshot (and so every ScopeCounters) is gone.
// Threads: counters from any thread (lock-free, no allocation on a warm request; a refill post
// allocates; a request that waits for a refill takes its counter's waiter lock); refills, sweeps
// and their replies run on the client's thread. MakeScope takes a mutex (snapshot builds only).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "governance/counters.h"
#include "redis/client.h"

namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::redis {

struct LeaseOptions {
  std::string replica_id;  // unique per process: "<hostname>-<pid>-<random>"
  std::chrono::milliseconds lease_ttl{10'000};
  std::chrono::milliseconds report_interval{100};
  std::string key_prefix = "turnpike:";  // + "budget:..." and "window:..."
};

class LeaseBudgetCounter;
class LeaseRateCounter;

class LeaseCounters final : public governance::Counters {
 public:
  // `client` must have kLeaseScript as its script 0 and kRateScript as its script 1.
  LeaseCounters(Client& client, LeaseOptions options);
  ~LeaseCounters() override;

  std::shared_ptr<governance::ScopeCounters> MakeScope(governance::ScopeKind kind,
                                                       std::string_view id) override;

  // Starts the renew/give-back sweep on the client's thread.
  void Start();
  // Gives back every lease and reports settled spend, waiting at most `timeout` (graceful
  // stop, after the server drained), then stops the sweep. A counter whose call is in flight
  // gives back right after that call's reply.
  void Stop(std::chrono::milliseconds timeout);

  void RenderMetrics(observability::PrometheusWriter& w) const;

 private:
  friend class LeaseBudgetCounter;
  friend class LeaseRateCounter;
  struct Sweep;

  // Client thread: one EVALSHA for `counter`; `refill` may lease more, else keep/give back.
  void Call(const std::shared_ptr<LeaseBudgetCounter>& counter, bool refill, bool give_back,
            std::function<void()> done);
  void Post(std::shared_ptr<LeaseBudgetCounter> counter);
  // Client thread: one EVALSHA of kRateScript leasing more units (`refill`) and/or giving
  // `give` back.
  void RateCall(const std::shared_ptr<LeaseRateCounter>& counter, bool refill, int64_t give,
                std::function<void()> done);
  void PostRate(std::shared_ptr<LeaseRateCounter> counter);
  // Client thread. `full`: renew or give back every lease; else only report unreported spend.
  void SweepOnce(bool full, bool final_return, std::function<void()> done);
  // Client thread, after a (re)connect: one rate call for every window this replica leased
  // from in the last minute, so a window lost with a Redis restart is rebuilt with its units.
  void ReregisterRates();

  Client& client_;
  const LeaseOptions options_;
  std::unique_ptr<Sweep> sweep_;
  std::atomic<uint64_t> over_reservation_{0};
  std::atomic<uint64_t> fail_open_admitted_{0};  // fail-open plans' reservations (lease_budget.cc)
  std::atomic<uint64_t> refill_failures_{0};
  std::atomic<uint64_t> wakeups_{0};        // waiters woken by a completed or failed call
  std::atomic<uint64_t> wait_timeouts_{0};  // waiters whose refill_wait passed
  std::mutex mu_;                           // guards scopes_ and rates_
  std::vector<std::weak_ptr<LeaseBudgetCounter>> scopes_;
  std::vector<std::weak_ptr<LeaseRateCounter>> rates_;
};

}  // namespace turnpike::redis
