// A worker's keep-alive connections to upstream origins, and the probe that counts them.
//
// Ownership: one Pool per worker thread, owned by that worker's handler; it owns its idle
// connections. Thread safety: none needed; only the owning worker touches it.
//
// An exchange holds a slot of its origin from TryEnter() (or a granted SlotWaiter) to Leave().
// Within it, a connection is taken out with Acquire() and either given back with Release()
// (only after a complete response on a keep-alive connection) or dropped (closed).
//
// The pool follows the load: per origin it remembers the peak number of exchanges in flight
// over the last one to two `peak_window`s, and keeps idle at most that many connections, never
// more than `max_idle_per_origin`. So a burst of
// 1,000 exchanges that ends and comes back finds its 1,000 connections, and a load that fell
// gives its connections back within two windows.
//
// A reaper (a timer on the worker, every `reap_interval`) closes idle connections past
// `idle_ttl`, the ones the origin closed or wrote to while idle, and those above the recent
// peak; Acquire() still checks the TTL and is_open() between two passes.
//
// With `max_active_per_origin` > 0 an origin has at most that many slots; an exchange that
// finds none waits in a FIFO queue (SlotWaiter) and Leave() hands its slot to the first waiter.
//
// Origins spoken to over HTTP/2 (`Origin::http2`) take slots the same way, but their streams
// share a few connections: h2() (h2_connection.h).
//
// Shutdown() closes every idle connection (and every HTTP/2 one), stops the reaper, wakes every
// waiter (ungranted) and refuses later releases; the worker calls it before its event loop is
// destroyed.
#pragma once

#include <poll.h>

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/deadline.h"
#include "net/tls_socket.h"
#include "observability/metrics.h"
#include "upstream/origin.h"

namespace turnpike::upstream {

using Clock = std::chrono::steady_clock;

struct PoolOptions {
  size_t max_idle_per_origin = 1024;  // the hard cap on idle connections per origin
  std::chrono::milliseconds idle_ttl{60'000};
  size_t max_active_per_origin = 0;  // slots per origin; 0 = no cap
  std::chrono::milliseconds peak_window{10'000};
  std::chrono::milliseconds reap_interval{1'000};  // 0 = no reaper (tests call Reap())
  // HTTP/2 origins: streams per connection, below the server's own limit; 0 = the server's.
  uint32_t h2_max_streams_per_connection = 0;
};

// TLS settings shared by every worker (an SSL_CTX is safe to share once configured).
// Loading the system trust store costs ~0.1 s of CPU (callgrind: 235M instructions), so it is
// loaded only when some origin uses TLS (`load_trust_store`); `ca_file` adds to it. Throws on
// a bad file (start-up only).
class TlsContexts {
 public:
  TlsContexts(const std::string& ca_file, bool load_trust_store);
  const boost::asio::ssl::context& verify() const { return verify_; }
  const boost::asio::ssl::context& no_verify() const { return no_verify_; }

 private:
  boost::asio::ssl::context verify_{boost::asio::ssl::context::tls_client};
  boost::asio::ssl::context no_verify_{boost::asio::ssl::context::tls_client};
};

// One open connection to an origin (plain TCP, or TLS over TCP). Held by shared_ptr because
// its deadline's pending wait holds a reference (net/deadline.h).
struct UpstreamConnection : std::enable_shared_from_this<UpstreamConnection> {
  UpstreamConnection(boost::asio::io_context& context, boost::asio::ssl::context* tls_context);

  boost::asio::ip::tcp::socket& lowest() { return tls ? tls->next_layer() : plain; }
  void Arm(std::chrono::milliseconds timeout) { net::ArmDeadline(shared_from_this(), timeout); }
  void CancelIo() {
    boost::system::error_code ignored;
    lowest().cancel(ignored);
  }
  void Close();
  // Whether a connect to `remote` reached this very socket: a loopback connect to a free port
  // in the ephemeral range can be given that port as its own source and open onto itself (TCP
  // simultaneous open), then wait forever for an answer. The caller treats it as refused.
  // Loopback targets only (one getsockname per new connection to them); never true elsewhere.
  bool ConnectedToItself(const boost::asio::ip::tcp::endpoint& remote);

  boost::asio::ip::tcp::socket plain;  // unused (closed) when tls is set
  std::unique_ptr<net::TlsSocket> tls;
  net::Deadline deadline;
  boost::beast::flat_buffer buffer;
  Clock::time_point idle_since{};
};

// Per-worker counters, summed over workers by /metrics.
struct PoolProbe {
  observability::Counter connects;        // new connections established
  observability::Counter connect_errors;  // failed connects (incl. TLS handshakes)
  observability::Counter reuses;          // exchanges on a pooled connection
  observability::Counter stale_retries;   // pooled connection found dead, retried on a new one
  observability::Counter reaped;          // idle connections the reaper closed
  observability::Counter queued;          // exchanges that waited for a slot (the active cap)
  observability::Counter queue_timeouts;  // ... and gave up waiting
  observability::Gauge idle;              // connections waiting in the pool
};

class Pool;
class H2Pool;

// An exchange waiting for a slot of an origin at its active cap. Lives in the waiting
// coroutine's frame; queued by the constructor, dequeued by the destructor if still queued.
class SlotWaiter {
 public:
  SlotWaiter(Pool& pool, const Origin& origin);
  ~SlotWaiter();
  SlotWaiter(const SlotWaiter&) = delete;
  SlotWaiter& operator=(const SlotWaiter&) = delete;

  // True when a slot was handed over (the caller now holds it and must Leave()); false on
  // timeout, Cancel() or the pool's shutdown.
  boost::asio::awaitable<bool> Wait(std::chrono::milliseconds timeout);
  void Cancel() { timer_.cancel(); }

 private:
  friend class Pool;
  Pool& pool_;
  const std::string key_;
  boost::asio::steady_timer timer_;
  bool queued_ = true;
  bool granted_ = false;
};

class Pool {
 public:
  Pool(boost::asio::io_context& context, const TlsContexts& tls, PoolOptions options);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Takes a slot for one exchange with `origin`: false when the origin is at its active cap
  // (the caller then waits with a SlotWaiter). Every slot taken is given back with Leave().
  bool TryEnter(const Origin& origin);
  // Gives a slot back, or hands it to the first waiter.
  void Leave(const Origin& origin);

  // A pooled connection to `origin`, or nullptr if none is idle (the caller connects).
  std::shared_ptr<UpstreamConnection> Acquire(const Origin& origin);
  // Keeps `connection` for reuse (or closes it when the recent peak's worth is idle already,
  // the hard cap is reached or the pool is shut down). Called before the exchange's Leave().
  void Release(const Origin& origin, std::shared_ptr<UpstreamConnection> connection);
  // One reaper pass as of `now` (the timer calls it with Clock::now()).
  void Reap(Clock::time_point now);
  void Shutdown();

  // The peak of exchanges in flight to `origin` over the last one to two windows.
  size_t RecentPeak(const Origin& origin) const;
  size_t IdleCount(const Origin& origin) const;
  size_t ActiveCount(const Origin& origin) const;

  boost::asio::io_context& context() { return context_; }
  const TlsContexts& tls() const { return tls_; }
  const PoolOptions& options() const { return options_; }
  // The worker's HTTP/2 connections (created on first use).
  H2Pool& h2();
  PoolProbe& probe() { return probe_; }
  const PoolProbe& probe() const { return probe_; }

  // Resolved addresses per "host:port", cached for a short while.
  boost::asio::ip::tcp::resolver& resolver() { return *resolver_; }
  const boost::asio::ip::tcp::resolver::results_type* CachedEndpoints(const std::string& key);
  void CacheEndpoints(const std::string& key, boost::asio::ip::tcp::resolver::results_type r);

 private:
  friend class SlotWaiter;
  struct Resolved {
    boost::asio::ip::tcp::resolver::results_type results;
    Clock::time_point at;
  };
  struct OriginState {
    std::vector<std::shared_ptr<UpstreamConnection>> idle;  // oldest first
    size_t active = 0;                                      // slots held
    size_t window_peak = 0;    // the most slots held in the current window
    size_t previous_peak = 0;  // ... in the window before
    Clock::time_point window_start{};
    std::deque<SlotWaiter*> waiters;
    size_t Peak() const { return std::max(window_peak, previous_peak); }
  };
  // The reaper's timer, shared with its pending wait so that a late completion after
  // Shutdown() finds `pool` null instead of a destroyed Pool.
  struct Reaper {
    Pool* pool;
    boost::asio::steady_timer timer;
  };
  static void ScheduleReap(const std::shared_ptr<Reaper>& reaper, std::chrono::milliseconds every);
  // Closes idle connections of `state` that are stale, closed by the peer, or above the peak.
  void ReapOrigin(OriginState& state, Clock::time_point now);
  void Dequeue(SlotWaiter& waiter);

  boost::asio::io_context& context_;
  const TlsContexts& tls_;
  const PoolOptions options_;
  std::unique_ptr<boost::asio::ip::tcp::resolver> resolver_;
  std::unordered_map<std::string, OriginState> origins_;
  std::shared_ptr<Reaper> reaper_;
  std::vector<pollfd> poll_scratch_;  // the reaper's poll() set, reused
  std::unordered_map<std::string, Resolved> resolved_;
  PoolProbe probe_;
  std::unique_ptr<H2Pool> h2_;
  bool shut_down_ = false;
};

}  // namespace turnpike::upstream
