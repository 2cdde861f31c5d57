// The HTTP/1.1 and HTTP/2 server: N worker threads, each with its own event loop, SO_REUSEPORT
// listener, connections and handler. No lock is taken on the request path. With
// `ServerOptions::tls` every connection is TLS (handshake first, then HTTP/2 or HTTP/1.1 by ALPN);
// without it, cleartext (HTTP/2 by prior knowledge when `http2` is on).
//
// Life cycle (all calls from the thread that owns the Server):
//   Server s(options, factory);
//   Status st = s.Bind();   // a port already in use is an error here, never a half-bind
//   s.Run();                // blocks until Drain() has finished or Stop() was called
// Drain() may be called from any thread (a signal handler coroutine does): it stops
// accepting, makes /readyz-style checks see draining(), answers every further request with
// `Connection: close`, waits for in-flight exchanges to finish and then for 500 ms without
// any (so that a request sent on a kept-alive connection just as the last exchange ended is
// answered rather than reset), up to the drain timeout, then closes whatever is left and
// makes Run() return.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "http/handler.h"

namespace turnpike::http {

class TlsContext;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 = pick a free port; port() tells which after Bind()
  int workers = 1;
  size_t max_header_bytes = 16 * 1024;  // the request head, start line and fields together
  size_t max_header_fields = 100;       // more: 431
  size_t max_body_bytes = 4 * 1024 * 1024;
  std::chrono::milliseconds read_headers_timeout{10'000};
  std::chrono::milliseconds read_body_timeout{30'000};
  std::chrono::milliseconds idle_timeout{60'000};  // keep-alive wait; also a stalled write
  std::chrono::milliseconds drain_timeout{30'000};
  std::shared_ptr<const TlsContext> tls;  // null = cleartext; see ReloadTls
  // Listening TCP sockets inherited from another process (a restart's predecessor or systemd
  // socket activation): Bind takes these instead of binding host:port. They are shared among
  // the workers (worker i takes every n-th); a worker left without one accepts from a
  // duplicate of one.
  std::vector<int> inherited_listeners;
  // HTTP/2 as well as HTTP/1.1 (http2_session.h): by ALPN over TLS (the TlsContext must offer
  // "h2"), by the connection preface in cleartext. Off: a preface is refused as HTTP/1.1.
  bool http2 = false;
  uint32_t http2_max_concurrent_streams = 128;
};

// HTTP/2 totals over all workers (relaxed sums of per-worker counters).
struct Http2Totals {
  uint64_t connections = 0;
  uint64_t streams = 0;        // request streams opened
  uint64_t client_resets = 0;  // RST_STREAM frames from clients
  uint64_t goaways_sent = 0;
  uint64_t stream_timeouts = 0;  // streams reset because the client stopped taking the response
};

// Why an accept failed: a bounded set, the label of turnpike_accept_errors_total{reason}.
enum class AcceptError : uint8_t {
  kProcessDescriptors,  // EMFILE: this process's RLIMIT_NOFILE   reason="emfile"
  kSystemDescriptors,   // ENFILE: the system's file table         reason="enfile"
  kMemory,              // ENOBUFS, ENOMEM                          reason="nomem"
  kOther,               // anything else                            reason="other"
};
inline constexpr size_t kAcceptErrorCauses = 4;
// The metric label of each cause, indexed by AcceptError.
inline constexpr const char* kAcceptErrorLabels[kAcceptErrorCauses] = {"emfile", "enfile", "nomem",
                                                                       "other"};

class Worker;

class Server {
 public:
  Server(ServerOptions options, HandlerFactory factory);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds one listener per worker to the same address. Fails if the address is in use
  // (including by another SO_REUSEPORT group) or invalid. With inherited listeners, takes
  // them instead (ServerOptions::inherited_listeners); fails if one is not a listening socket.
  Status Bind();
  uint16_t port() const { return bound_port_; }
  // The listening descriptors, for a restart to hand over (constant after Bind; any thread).
  const std::vector<int>& listener_fds() const { return listener_fds_; }

  // Runs the workers; returns after a drain or Stop(). Worker 0 runs on the calling thread.
  void Run();

  // Thread-safe. Starts a graceful drain (idempotent).
  void Drain();
  bool draining() const { return draining_.load(std::memory_order_relaxed); }

  // Thread-safe. Stops at once, cutting open exchanges.
  void Stop();

  // Thread-safe. Handshakes that begin after each worker has taken `tls` (a message to each)
  // use it; open connections keep the snapshot they started with. Only for a server started
  // with TLS (a cleartext server stays cleartext).
  void ReloadTls(std::shared_ptr<const TlsContext> tls);
  // TLS handshakes that failed or timed out, over all workers (a relaxed sum).
  uint64_t tls_handshake_failures() const;

  Http2Totals http2_totals() const;

  // Exchanges being handled right now, and begun since start, over all workers (relaxed sums).
  int64_t in_flight() const;
  uint64_t exchanges_started() const;
  // Failed accepts with `cause` since start, over all workers (a relaxed sum). An accept that
  // fails (out of file descriptors) is retried after a pause that doubles from 10 ms up to 1 s
  // while the failures go on, never in a spin; one log line says so (at most one per 10 s).
  uint64_t accept_errors(AcceptError cause) const;

 private:
  Status BindInherited();

  const ServerOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> draining_{false};
  uint16_t bound_port_ = 0;
  std::vector<int> listener_fds_;  // written by Bind only
};

}  // namespace turnpike::http
