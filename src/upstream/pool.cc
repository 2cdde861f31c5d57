#include "upstream/pool.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "upstream/h2_connection.h"

namespace turnpike::upstream {
namespace net = boost::asio;

namespace {
constexpr std::chrono::seconds kResolveTtl{30};
}

TlsContexts::TlsContexts(const std::string& ca_file, bool load_trust_store) {
  if (load_trust_store) verify_.set_default_verify_paths();
  if (!ca_file.empty()) verify_.load_verify_file(ca_file);
  verify_.set_verify_mode(net::ssl::verify_peer);
  no_verify_.set_verify_mode(net::ssl::verify_none);
}

UpstreamConnection::UpstreamConnection(net::io_context& context, net::ssl::context* tls_context)
    : plain(context), deadline(context.get_executor()) {
  if (tls_context != nullptr) {
    tls = std::make_unique<turnpike::net::TlsSocket>(context.get_executor(), *tls_context);
  }
}

bool UpstreamConnection::ConnectedToItself(const net::ip::tcp::endpoint& remote) {
  if (!remote.address().is_loopback()) return false;
  boost::system::error_code ec;
  const net::ip::tcp::endpoint local = lowest().local_endpoint(ec);
  return !ec && local == remote;
}

void UpstreamConnection::Close() {
  turnpike::net::CloseDeadline(deadline);
  boost::system::error_code ec;
  lowest().close(ec);
}

Pool::Pool(net::io_context& context, const TlsContexts& tls, PoolOptions options)
    : context_(context),
      tls_(tls),
      options_(options),
      resolver_(std::make_unique<net::ip::tcp::resolver>(context)) {
  if (options_.reap_interval.count() > 0) {
    reaper_ = std::make_shared<Reaper>(Reaper{this, net::steady_timer(context)});
    ScheduleReap(reaper_, options_.reap_interval);
  }
}

Pool::~Pool() { Shutdown(); }

H2Pool& Pool::h2() {
  if (!h2_) h2_ = std::make_unique<H2Pool>(*this);
  if (shut_down_) h2_->Shutdown();
  return *h2_;
}

void Pool::ScheduleReap(const std::shared_ptr<Reaper>& reaper, std::chrono::milliseconds every) {
  reaper->timer.expires_after(every);
  reaper->timer.async_wait([reaper, every](boost::system::error_code ec) {
    if (ec || reaper->pool == nullptr) return;
    reaper->pool->Reap(Clock::now());
    ScheduleReap(reaper, every);
  });
}

bool Pool::TryEnter(const Origin& origin) {
  OriginState& state = origins_[origin.key];
  const size_t cap = options_.max_active_per_origin;
  if (cap > 0 && (state.active >= cap || !state.waiters.empty())) return false;
  ++state.active;
  state.window_peak = std::max(state.window_peak, state.active);
  return true;
}

void Pool::Leave(const Origin& origin) {
  auto it = origins_.find(origin.key);
  if (it == origins_.end() || it->second.active == 0) return;
  OriginState& state = it->second;
  if (!state.waiters.empty()) {
    // The slot passes to the first waiter: `active` stays as it is.
    SlotWaiter* next = state.waiters.front();
    state.waiters.pop_front();
    next->queued_ = false;
    next->granted_ = true;
    next->timer_.cancel();
    return;
  }
  --state.active;
}

std::shared_ptr<UpstreamConnection> Pool::Acquire(const Origin& origin) {
  auto it = origins_.find(origin.key);
  if (it == origins_.end()) return nullptr;
  auto& list = it->second.idle;
  const auto now = Clock::now();
  while (!list.empty()) {
    std::shared_ptr<UpstreamConnection> conn = std::move(list.back());
    list.pop_back();
    probe_.idle.Add(-1);
    if (now - conn->idle_since < options_.idle_ttl && conn->lowest().is_open()) {
      probe_.reuses.Add();
      return conn;
    }
    conn->Close();
  }
  return nullptr;
}

void Pool::Release(const Origin& origin, std::shared_ptr<UpstreamConnection> connection) {
  OriginState& state = origins_[origin.key];
  // Idle is bounded by the recent peak, not by the peak minus the exchanges in flight: an
  // exchange handed a slot by Leave() holds it before it takes its connection, and counting it
  // would close the very connection it is about to take. Connections are only opened when no
  // idle one is left, so idle + in flight still stays near the peak.
  if (shut_down_ || state.idle.size() >= options_.max_idle_per_origin ||
      state.idle.size() >= state.Peak()) {
    connection->Close();
    return;
  }
  connection->idle_since = Clock::now();
  state.idle.push_back(std::move(connection));
  probe_.idle.Add(1);
}

void Pool::Reap(Clock::time_point now) {
  for (auto& [key, state] : origins_) {
    if (now - state.window_start >= options_.peak_window) {
      state.previous_peak = state.window_peak;
      state.window_peak = state.active;
      state.window_start = now;
    }
    ReapOrigin(state, now);
  }
}

void Pool::ReapOrigin(OriginState& state, Clock::time_point now) {
  if (state.idle.empty()) return;
  // One poll() over the origin's idle sockets: an idle HTTP/1.1 connection has nothing to
  // say, so a hang-up, an error or (plain TCP) any byte means it cannot carry a request. TLS
  // may legitimately deliver a session ticket late, so there only a hang-up counts.
  poll_scratch_.clear();
  for (const auto& conn : state.idle) {
    const short events = conn->tls ? POLLRDHUP : (POLLIN | POLLRDHUP);
    poll_scratch_.push_back(pollfd{conn->lowest().native_handle(), events, 0});
  }
  const int ready = ::poll(poll_scratch_.data(), poll_scratch_.size(), 0);
  // Above the recent peak, the oldest idle connections go first.
  const size_t keep = state.Peak();
  size_t excess = state.idle.size() > keep ? state.idle.size() - keep : 0;
  size_t kept = 0;
  for (size_t i = 0; i < state.idle.size(); ++i) {
    auto& conn = state.idle[i];
    const bool dead = ready > 0 && poll_scratch_[i].revents != 0;
    const bool expired = now - conn->idle_since >= options_.idle_ttl;
    const bool surplus = excess > 0;
    if (dead || expired || surplus || !conn->lowest().is_open()) {
      if (excess > 0) --excess;
      conn->Close();
      probe_.reaped.Add();
      probe_.idle.Add(-1);
      continue;
    }
    state.idle[kept++] = std::move(conn);
  }
  state.idle.resize(kept);
}

size_t Pool::RecentPeak(const Origin& origin) const {
  auto it = origins_.find(origin.key);
  return it == origins_.end() ? 0 : it->second.Peak();
}

size_t Pool::IdleCount(const Origin& origin) const {
  auto it = origins_.find(origin.key);
  return it == origins_.end() ? 0 : it->second.idle.size();
}

size_t Pool::ActiveCount(const Origin& origin) const {
  auto it = origins_.find(origin.key);
  return it == origins_.end() ? 0 : it->second.active;
}

void Pool::Dequeue(SlotWaiter& waiter) {
  if (!waiter.queued_) return;
  waiter.queued_ = false;
  auto it = origins_.find(waiter.key_);
  if (it == origins_.end()) return;
  auto& waiters = it->second.waiters;
  waiters.erase(std::remove(waiters.begin(), waiters.end(), &waiter), waiters.end());
}

void Pool::Shutdown() {
  shut_down_ = true;
  if (reaper_) {
    reaper_->pool = nullptr;
    reaper_->timer.cancel();
    reaper_.reset();
  }
  for (auto& [key, state] : origins_) {
    for (auto& conn : state.idle) conn->Close();
    probe_.idle.Add(-static_cast<int64_t>(state.idle.size()));
    state.idle.clear();
    for (SlotWaiter* waiter : state.waiters) {
      waiter->queued_ = false;
      waiter->timer_.cancel();
    }
    state.waiters.clear();
  }
  if (h2_) h2_->Shutdown();
  resolver_.reset();
}

SlotWaiter::SlotWaiter(Pool& pool, const Origin& origin)
    : pool_(pool), key_(origin.key), timer_(pool.context()) {
  if (pool.shut_down_) {
    queued_ = false;
    return;
  }
  pool.origins_[key_].waiters.push_back(this);
  pool.probe_.queued.Add();
}

SlotWaiter::~SlotWaiter() { pool_.Dequeue(*this); }

net::awaitable<bool> SlotWaiter::Wait(std::chrono::milliseconds timeout) {
  if (!queued_) co_return granted_;
  timer_.expires_after(timeout);
  auto [ec] = co_await timer_.async_wait(net::as_tuple(net::use_awaitable));
  if (granted_) co_return true;
  const bool timed_out = !ec && queued_;
  pool_.Dequeue(*this);
  if (timed_out) pool_.probe_.queue_timeouts.Add();
  co_return false;
}

const net::ip::tcp::resolver::results_type* Pool::CachedEndpoints(const std::string& key) {
  auto it = resolved_.find(key);
  if (it == resolved_.end() || Clock::now() - it->second.at > kResolveTtl) return nullptr;
  return &it->second.results;
}

void Pool::CacheEndpoints(const std::string& key, net::ip::tcp::resolver::results_type r) {
  resolved_[key] = Resolved{std::move(r), Clock::now()};
}

}  // namespace turnpike::upstream
