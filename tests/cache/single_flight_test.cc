#include "cache/single_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>
#include <vector>

namespace turnpike::cache {
namespace {

namespace net = boost::asio;
using std::chrono::milliseconds;

constexpr milliseconds kLongBound{60'000};  // never reached in these tests

std::shared_ptr<const Envelope> Answer(std::string body) {
  auto e = std::make_shared<Envelope>();
  e->body = std::move(body);
  return e;
}

// Polls (on this coroutine's loop) until `key` has `count` waiters.
net::awaitable<void> UntilWaiters(SingleFlight* flights, std::string key, size_t count) {
  net::steady_timer timer(co_await net::this_coro::executor);
  while (flights->Waiters(key) < count) {
    timer.expires_after(milliseconds(1));
    auto wait = timer.async_wait(net::use_awaitable);
    co_await std::move(wait);
  }
}

struct Outcome {
  bool led = false;
  std::shared_ptr<const Envelope> result;
  bool timed_out = false;
  bool overflow = false;
};

// A request: joins; a leader "computes" once every other request waits, then completes with
// `answer` (null: fails).
net::awaitable<void> Request(SingleFlight* flights, std::string key, size_t expect_waiters,
                             std::shared_ptr<const Envelope> answer, milliseconds bound,
                             std::atomic<int>* computations, Outcome* out) {
  auto join = flights->Join(key, bound);
  SingleFlight::Joined joined = co_await std::move(join);
  out->led = joined.leader.has_value();
  out->result = joined.result;
  out->timed_out = joined.timed_out;
  out->overflow = joined.overflow;
  if (!joined.leader) co_return;
  ++*computations;
  auto wait = UntilWaiters(flights, key, expect_waiters);
  co_await std::move(wait);
  joined.leader->Complete(answer);
}

TEST(SingleFlight, ConcurrentMissesOnOneWorkerComputeOnce) {
  SingleFlight flights;
  net::io_context io;
  std::atomic<int> computations{0};
  std::vector<Outcome> outcomes(6);
  auto answer = Answer("42");
  for (auto& out : outcomes) {
    net::co_spawn(io, Request(&flights, "k", 5, answer, kLongBound, &computations, &out),
                  net::detached);
  }
  io.run();
  EXPECT_EQ(computations, 1);
  EXPECT_TRUE(outcomes[0].led);
  for (size_t i = 1; i < outcomes.size(); ++i) {
    EXPECT_FALSE(outcomes[i].led);
    EXPECT_EQ(outcomes[i].result, answer) << i;
  }
  EXPECT_EQ(flights.InFlight(), 0u);
}

TEST(SingleFlight, DistinctKeysDoNotWaitForEachOther) {
  SingleFlight flights;
  net::io_context io;
  std::atomic<int> computations{0};
  Outcome a, b;
  net::co_spawn(io, Request(&flights, "a", 0, Answer("a"), kLongBound, &computations, &a),
                net::detached);
  net::co_spawn(io, Request(&flights, "b", 0, Answer("b"), kLongBound, &computations, &b),
                net::detached);
  io.run();
  EXPECT_EQ(computations, 2);
  EXPECT_TRUE(a.led);
  EXPECT_TRUE(b.led);
}

TEST(SingleFlight, WaitersOnAnotherWorkerGetTheResult) {
  SingleFlight flights;
  net::io_context leader_loop, waiter_loop;
  std::atomic<int> computations{0};
  Outcome leader, waiter;
  auto answer = Answer("shared");
  net::co_spawn(leader_loop, Request(&flights, "k", 1, answer, kLongBound, &computations, &leader),
                net::detached);
  while (flights.InFlight() == 0) leader_loop.run_one();  // until the leader has joined
  net::co_spawn(waiter_loop, Request(&flights, "k", 0, nullptr, kLongBound, &computations, &waiter),
                net::detached);
  std::thread other([&] { waiter_loop.run(); });
  leader_loop.run();
  other.join();
  EXPECT_EQ(computations, 1);
  EXPECT_TRUE(leader.led);
  EXPECT_EQ(waiter.result, answer);
  EXPECT_EQ(flights.InFlight(), 0u);
}

TEST(SingleFlight, ALeaderFailureLetsWaitersComputeThemselves) {
  SingleFlight flights;
  net::io_context io;
  std::atomic<int> computations{0};
  std::vector<Outcome> outcomes(3);
  for (auto& out : outcomes) {
    net::co_spawn(io, Request(&flights, "k", 2, nullptr, kLongBound, &computations, &out),
                  net::detached);
  }
  io.run();
  EXPECT_EQ(computations, 1);
  for (size_t i = 1; i < outcomes.size(); ++i) {
    EXPECT_FALSE(outcomes[i].led);
    EXPECT_EQ(outcomes[i].result, nullptr);
    EXPECT_FALSE(outcomes[i].timed_out);
  }
  EXPECT_EQ(flights.InFlight(), 0u);
}

TEST(SingleFlight, ALeaderDroppedWithoutCompletingReleasesItsWaiters) {
  SingleFlight flights;
  net::io_context io;
  Outcome waiter;
  net::co_spawn(
      io,
      [](SingleFlight* flights) -> net::awaitable<void> {
        auto join = flights->Join("k", kLongBound);
        SingleFlight::Joined joined = co_await std::move(join);
        auto wait = UntilWaiters(flights, "k", 1);
        co_await std::move(wait);
        // joined.leader goes out of scope here without Complete.
      }(&flights),
      net::detached);
  std::atomic<int> computations{0};
  net::co_spawn(io, Request(&flights, "k", 0, nullptr, kLongBound, &computations, &waiter),
                net::detached);
  io.run();
  EXPECT_FALSE(waiter.led);
  EXPECT_EQ(waiter.result, nullptr);
  EXPECT_FALSE(waiter.timed_out);
  EXPECT_EQ(flights.InFlight(), 0u);
}

TEST(SingleFlight, AWaiterGivesUpAtItsBound) {
  SingleFlight flights;
  net::io_context io;
  Outcome waiter;
  std::atomic<bool> waiter_done{false};
  net::co_spawn(
      io,
      [](SingleFlight* flights, std::atomic<bool>* waiter_done) -> net::awaitable<void> {
        auto join = flights->Join("k", kLongBound);
        SingleFlight::Joined joined = co_await std::move(join);
        net::steady_timer timer(co_await net::this_coro::executor);
        while (!*waiter_done) {  // the leader outlasts the waiter's bound
          timer.expires_after(milliseconds(1));
          auto wait = timer.async_wait(net::use_awaitable);
          co_await std::move(wait);
        }
        EXPECT_EQ(flights->Waiters("k"), 0u);  // the waiter left the flight
        joined.leader->Complete(Answer("late"));
      }(&flights, &waiter_done),
      net::detached);
  net::co_spawn(
      io,
      [](SingleFlight* flights, Outcome* out, std::atomic<bool>* done) -> net::awaitable<void> {
        auto join = flights->Join("k", milliseconds(5));
        SingleFlight::Joined joined = co_await std::move(join);
        out->led = joined.leader.has_value();
        out->result = joined.result;
        out->timed_out = joined.timed_out;
        *done = true;
      }(&flights, &waiter, &waiter_done),
      net::detached);
  io.run();
  EXPECT_FALSE(waiter.led);
  EXPECT_TRUE(waiter.timed_out);
  EXPECT_EQ(waiter.result, nullptr);
  EXPECT_EQ(flights.InFlight(), 0u);
}

TEST(SingleFlight, TooManyWaitersComputeAtOnce) {
  SingleFlight flights(/*max_waiters=*/1);
  net::io_context io;
  std::atomic<int> computations{0};
  std::vector<Outcome> outcomes(3);
  auto answer = Answer("x");
  for (auto& out : outcomes) {
    net::co_spawn(io, Request(&flights, "k", 1, answer, kLongBound, &computations, &out),
                  net::detached);
  }
  io.run();
  EXPECT_TRUE(outcomes[0].led);
  EXPECT_EQ(outcomes[1].result, answer);
  EXPECT_TRUE(outcomes[2].overflow);
  EXPECT_EQ(outcomes[2].result, nullptr);
  EXPECT_EQ(computations, 1);
}

}  // namespace
}  // namespace turnpike::cache
