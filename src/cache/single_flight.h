// Single flight per key: of the concurrent misses for one key, the first computes (the
// leader) and the others wait for its result instead of computing it again, whether they run
// on the leader's worker or on another worker of this process.
//
//   SingleFlight::Joined joined = co_await flights.Join(key.id, wait_bound);
//   if (joined.leader) { ...compute...; joined.leader->Complete(envelope_or_null); }
//   else if (joined.result) { ...answer from *joined.result... }
//   else { ...the leader failed, or the wait hit its bound: compute yourself... }
//
// Bounds: a waiter waits at most `wait_bound`, and a key has at most `max_waiters` waiters
// (later arrivals compute themselves at once); both count in the cache's metrics.
// Failure: a leader that fails completes with null (or is destroyed without completing, which
// does the same): its waiters wake at once and compute themselves. Nothing is cached for them.
// Scope: one process. Replicas of a fleet do not coordinate (each may compute a key once).
//
// Ownership and threads: SingleFlight is thread-safe and must outlive every Join and Flight.
// Join must be awaited on a single-threaded executor (a worker's event loop): a waiter is
// woken by a handler posted to it. Flight is move-only and belongs to the leader's coroutine;
// Complete may be called from any thread, once (later calls do nothing).
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/envelope.h"

namespace turnpike::cache {

class SingleFlight {
 public:
  static constexpr size_t kShards = 16;

  explicit SingleFlight(size_t max_waiters = 1024);
  ~SingleFlight();
  SingleFlight(const SingleFlight&) = delete;
  SingleFlight& operator=(const SingleFlight&) = delete;

  // The leader's obligation to complete the flight it started.
  class Flight {
   public:
    Flight(SingleFlight* owner, std::string id) : owner_(owner), id_(std::move(id)) {}
    Flight(Flight&& other) noexcept
        : owner_(std::exchange(other.owner_, nullptr)), id_(std::move(other.id_)) {}
    Flight& operator=(Flight&&) = delete;
    ~Flight() { Complete(nullptr); }

    // Wakes the waiters with `result` (null: the leader failed) and ends the flight: a later
    // Join for the key starts a new one.
    void Complete(std::shared_ptr<const Envelope> result);

   private:
    SingleFlight* owner_;
    std::string id_;
  };

  struct Joined {
    std::optional<Flight> leader;            // set: this caller computes
    std::shared_ptr<const Envelope> result;  // set: the leader's answer
    bool timed_out = false;                  // waited the whole bound
    bool overflow = false;                   // too many waiters already
  };

  boost::asio::awaitable<Joined> Join(std::string id, std::chrono::milliseconds wait_bound);

  // Flights in progress, and the waiters of one (tests).
  size_t InFlight() const;
  size_t Waiters(std::string_view id) const;

  struct Shard;   // single_flight.cc
  struct Waiter;  // single_flight.cc

 private:
  Shard& ShardFor(std::string_view id) const;
  void Finish(std::string_view id, std::shared_ptr<const Envelope> result);

  const size_t max_waiters_;
  std::array<std::unique_ptr<Shard>, kShards> shards_;
};

}  // namespace turnpike::cache
