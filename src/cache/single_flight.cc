#include "cache/single_flight.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cache/string_map.h"

namespace turnpike::cache {

namespace net = boost::asio;

// Shared by the waiting coroutine and the flight: whoever is last frees it, and the timer is
// touched only on the waiter's own executor.
struct SingleFlight::Waiter {
  explicit Waiter(const net::any_io_executor& executor) : timer(executor) {}
  net::steady_timer timer;
  // Guarded by the shard's mutex.
  bool done = false;
  std::shared_ptr<const Envelope> result;
};

struct SingleFlight::Shard {
  mutable std::mutex mu;
  // Guarded by mu: the waiters of every key in flight.
  std::unordered_map<std::string, std::vector<std::shared_ptr<Waiter>>, StringHash, std::equal_to<>>
      flights;
};

SingleFlight::SingleFlight(size_t max_waiters) : max_waiters_(max_waiters) {
  for (auto& shard : shards_) shard = std::make_unique<Shard>();
}

SingleFlight::~SingleFlight() = default;

SingleFlight::Shard& SingleFlight::ShardFor(std::string_view id) const {
  return *shards_[(std::hash<std::string_view>{}(id) >> 56) % kShards];
}

size_t SingleFlight::InFlight() const {
  size_t count = 0;
  for (const auto& shard : shards_) {
    std::lock_guard lock(shard->mu);
    count += shard->flights.size();
  }
  return count;
}

size_t SingleFlight::Waiters(std::string_view id) const {
  Shard& shard = ShardFor(id);
  std::lock_guard lock(shard.mu);
  auto it = shard.flights.find(id);
  return it == shard.flights.end() ? 0 : it->second.size();
}

void SingleFlight::Flight::Complete(std::shared_ptr<const Envelope> result) {
  if (owner_ == nullptr) return;
  std::exchange(owner_, nullptr)->Finish(id_, std::move(result));
}

void SingleFlight::Finish(std::string_view id, std::shared_ptr<const Envelope> result) {
  std::vector<std::shared_ptr<Waiter>> waiters;
  {
    Shard& shard = ShardFor(id);
    std::lock_guard lock(shard.mu);
    auto it = shard.flights.find(id);
    if (it == shard.flights.end()) return;
    waiters = std::move(it->second);
    shard.flights.erase(it);
    for (auto& waiter : waiters) {
      waiter->done = true;
      waiter->result = result;
    }
  }
  for (auto& waiter : waiters) {
    // expires_at(min) cancels a pending wait and makes a wait not yet started finish at once.
    net::post(waiter->timer.get_executor(),
              [waiter] { waiter->timer.expires_at(net::steady_timer::time_point::min()); });
  }
}

net::awaitable<SingleFlight::Joined> SingleFlight::Join(std::string id,
                                                        std::chrono::milliseconds wait_bound) {
  net::any_io_executor executor = co_await net::this_coro::executor;  // never suspends
  Shard& shard = ShardFor(id);
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard lock(shard.mu);
    auto it = shard.flights.find(id);
    if (it == shard.flights.end()) {
      shard.flights.emplace(id, std::vector<std::shared_ptr<Waiter>>{});
      Joined joined;
      joined.leader.emplace(this, std::move(id));
      co_return joined;
    }
    if (it->second.size() >= max_waiters_) {
      Joined joined;
      joined.overflow = true;
      co_return joined;
    }
    waiter = std::make_shared<Waiter>(executor);
    waiter->timer.expires_after(wait_bound);
    it->second.push_back(waiter);
  }
  boost::system::error_code ec;
  auto wait = waiter->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
  co_await std::move(wait);

  Joined joined;
  std::lock_guard lock(shard.mu);
  if (waiter->done) {
    joined.result = std::move(waiter->result);
    co_return joined;
  }
  auto it = shard.flights.find(id);
  if (it != shard.flights.end()) {
    auto& waiters = it->second;
    waiters.erase(std::remove(waiters.begin(), waiters.end(), waiter), waiters.end());
  }
  joined.timed_out = true;
  co_return joined;
}

}  // namespace turnpike::cache
