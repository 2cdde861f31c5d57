// Internal to http/: the coroutine that serves one client connection, request after request,
// compiled once per transport (connection.h); and the TLS handshake in front of it.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <memory>

#include "http/connection.h"
#include "http/handler.h"
#include "http/server.h"

namespace turnpike::http {

struct Http2Counters;

// A worker's exchanges: open now, and begun since start. Single writer (the worker), so each
// change is a relaxed load and store; read by other threads with relaxed loads.
struct ExchangeCounts {
  std::atomic<int64_t> in_flight{0};
  std::atomic<uint64_t> started{0};
};

// Counts one exchange (an HTTP/1.1 request or an HTTP/2 stream) from construction to
// destruction.
class InFlight {
 public:
  explicit InFlight(ExchangeCounts& counts) : counts_(counts) {
    Bump(counts_.in_flight, 1);
    counts_.started.store(counts_.started.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
  }
  ~InFlight() { Bump(counts_.in_flight, -1); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  static void Bump(std::atomic<int64_t>& word, int64_t by) {
    word.store(word.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  ExchangeCounts& counts_;
};

struct SessionContext {
  const ServerOptions& options;
  Handler& handler;
  const std::atomic<bool>& draining;
  ExchangeCounts& exchanges;  // single writer: this worker
  Http2Counters& http2;       // single writer: this worker
};

// Reads requests with the configured limits and timeouts, hands each to the handler, answers
// protocol errors itself (in the handler's error shape), and closes the connection at the end
// (over TLS with close_notify, waiting at most kTlsCloseTime for the client's). In cleartext
// with `options.http2`, a connection that opens with the HTTP/2 preface is served by
// RunHttp2Session instead (the first bytes are read, then looked at).
template <typename Stream>
boost::asio::awaitable<void> RunSession(SessionContext ctx,
                                        std::shared_ptr<BasicConnection<Stream>> connection);

// The TLS handshake under `handshake_timeout` (a client that stalls it is cut when it passes),
// then the protocol ALPN agreed on: HTTP/2 for "h2" (offered only with `options.http2`),
// else HTTP/1.1 (also when the client sent no ALPN). A failed
// handshake closes the connection; it counts in `failed_handshakes` (single writer: this
// worker).
boost::asio::awaitable<void> RunTlsSession(SessionContext ctx,
                                           std::shared_ptr<TlsConnection> connection,
                                           std::chrono::milliseconds handshake_timeout,
                                           std::atomic<uint64_t>& failed_handshakes);

}  // namespace turnpike::http
