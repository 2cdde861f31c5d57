// A worker's keep-alive connections to upstream origins, and the probe that counts them.
//
// Ownership: one Pool per worker thread, owned by that worker's handler; it owns its idle
// connections. Thread safety: none needed; only the owning worker touches it.
// A connection is taken out with Acquire() for one exchange and either given back with
// Release() (only after a complete response on a keep-alive connection) or dropped (closed).
// Shutdown() closes every idle connection and refuses later releases; the worker calls it
// before its event loop is destroyed.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/deadline.h"
#include "observability/metrics.h"
#include "upstream/origin.h"

namespace turnpike::upstream {

using Clock = std::chrono::steady_clock;

struct PoolOptions {
  size_t max_idle_per_origin = 64;
  std::chrono::milliseconds idle_ttl{60'000};
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

  boost::asio::ip::tcp::socket plain;  // unused (closed) when tls is set
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls;
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
  observability::Gauge idle;              // connections waiting in the pool
};

class Pool {
 public:
  Pool(boost::asio::io_context& context, const TlsContexts& tls, PoolOptions options);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // A pooled connection to `origin`, or nullptr if none is idle (the caller connects).
  std::shared_ptr<UpstreamConnection> Acquire(const Origin& origin);
  // Keeps `connection` for reuse (or closes it when the pool is full or shut down).
  void Release(const Origin& origin, std::shared_ptr<UpstreamConnection> connection);
  void Shutdown();

  boost::asio::io_context& context() { return context_; }
  const TlsContexts& tls() const { return tls_; }
  PoolProbe& probe() { return probe_; }
  const PoolProbe& probe() const { return probe_; }

  // Resolved addresses per "host:port", cached for a short while.
  boost::asio::ip::tcp::resolver& resolver() { return *resolver_; }
  const boost::asio::ip::tcp::resolver::results_type* CachedEndpoints(const std::string& key);
  void CacheEndpoints(const std::string& key, boost::asio::ip::tcp::resolver::results_type r);

 private:
  struct Resolved {
    boost::asio::ip::tcp::resolver::results_type results;
    Clock::time_point at;
  };
  boost::asio::io_context& context_;
  const TlsContexts& tls_;
  const PoolOptions options_;
  std::unique_ptr<boost::asio::ip::tcp::resolver> resolver_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<UpstreamConnection>>> idle_;
  std::unordered_map<std::string, Resolved> resolved_;
  PoolProbe probe_;
  bool shut_down_ = false;
};

}  // namespace turnpike::upstream
