// Waiting for a leased counter's refill (counters.h), event-driven: a request whose admission
// answered pending parks until the refill of the counter that pended lands, instead of polling.
//
//   waiting side   (core/governance_filter.cc) implements RefillWaiter: Wake posts to the
//                  request's own worker, where a timer bounded by redis.refill_wait is cancelled,
//                  and the request re-tries its reservation (reserve before admit: a wake only
//                  says "look again"; if the new slice is still too small it waits again).
//   engine side    (redis/lease_counters.h) keeps one RefillWaiters per counter, hands it out
//                  as the counter's RefillSource, and calls WakeAll on its own thread when a
//                  refill of that counter completes, or fails (the waiters then get their
//                  429/503 at once, not at the end of the bound).
//
// Lost wake-ups: a refill may land between the admission that pended and Watch (its WakeAll
// found nobody). So a waiter re-runs admission once after Watch, and parks only if that is
// still pending: either the refill landed before Watch (the re-run sees it) or after (Watch had
// put the waiter in the list, so WakeAll wakes it).
//
// Ownership: the list holds weak references; a waiter that is gone is skipped and dropped. A
// counter's RefillSource lives as long as the counter.
// Threads: every method from any thread. One mutex guards the list, held only
// to add or take it, never across a call into a waiter. Not on the warm path: only a request
// that got pending, and a refill, touch it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace turnpike::governance {

class RefillWaiter {
 public:
  virtual ~RefillWaiter() = default;
  // The engine's thread: a refill of a counter this waiter watched completed or failed. Must
  // not block and must not call back into the source: post to the waiter's own thread.
  virtual void Wake() = 0;
};

// Where a request that got pending from one counter waits (AdmitResult::pending_on).
class RefillSource {
 public:
  virtual ~RefillSource() = default;
  // Wakes `waiter` once, when the next refill of this counter completes or fails.
  virtual void Watch(std::weak_ptr<RefillWaiter> waiter) = 0;
  // A waiter gave up: its bound passed with no refill that admitted it (metrics only).
  virtual void WaitTimedOut() = 0;
};

// The waiters of one counter (the engine keeps one per counter).
class RefillWaiters {
 public:
  void Add(std::weak_ptr<RefillWaiter> waiter);
  // Wakes and forgets every waiter added so far; returns how many were still there to wake.
  uint64_t WakeAll();

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<RefillWaiter>> waiters_;  // guarded by mu_
};

}  // namespace turnpike::governance
