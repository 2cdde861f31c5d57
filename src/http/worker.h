// Internal to http/: one worker thread's event loop, listener, handler and connections.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <optional>
#include <vector>

#include "common/result.h"
#include "http/handler.h"
#include "http/http2_connection.h"
#include "http/server.h"
#include "http/session.h"

namespace turnpike::http {

class TlsContext;

class Worker {
 public:
  Worker(int index, const ServerOptions& options, const std::atomic<bool>& draining);
  ~Worker();

  boost::asio::io_context& context() { return *context_; }
  int index() const { return index_; }

  // Binds a SO_REUSEPORT listener for this worker. Called before Run, on the starting thread.
  Status Listen(const boost::asio::ip::tcp::endpoint& endpoint);
  // Takes `fd`, a listening TCP socket inherited from another process (a restart's
  // predecessor, or systemd), as one more listener of this worker. Before Run.
  Status Adopt(int fd);
  // The descriptors of this worker's listeners (constant once Run starts).
  std::vector<int> listener_fds() const;
  // Makes the handler and starts the accept loops (on this worker's thread once it runs).
  void Start(const HandlerFactory& factory);
  // Thread-safe: stop accepting new connections. Each listener is taken off this process's
  // event loop before its descriptor closes, so a listener another process still holds (a
  // restart's successor) keeps its queue and is never reported here again.
  void StopAccepting();
  // Thread-safe: every HTTP/2 connection of this worker gets a GOAWAY (NO_ERROR); open streams
  // finish, an idle connection closes once it is sent.
  void GoAway();
  // Thread-safe: stops the event loop.
  void Stop();
  void Run();

  int64_t in_flight() const { return exchanges_.in_flight.load(std::memory_order_relaxed); }
  uint64_t exchanges_started() const { return exchanges_.started.load(std::memory_order_relaxed); }
  // Accepts that failed with `cause` (out of descriptors, most often), since start.
  uint64_t accept_errors(AcceptError cause) const {
    return accept_errors_[static_cast<size_t>(cause)].load(std::memory_order_relaxed);
  }
  uint64_t tls_handshake_failures() const {
    return tls_handshake_failures_.load(std::memory_order_relaxed);
  }
  const Http2Counters& http2() const { return http2_; }
  // Thread-safe: later accepted connections use `tls` (posted to this worker's thread).
  void SetTls(std::shared_ptr<const TlsContext> tls);

 private:
  boost::asio::awaitable<void> AcceptAll();
  boost::asio::awaitable<void> AcceptLoop(boost::asio::ip::tcp::acceptor* acceptor);
  boost::asio::awaitable<void> Session(boost::asio::ip::tcp::socket socket);
  boost::asio::awaitable<void> TlsSession(boost::asio::ip::tcp::socket socket,
                                          std::shared_ptr<const TlsContext> tls);

  const int index_;
  const ServerOptions& options_;
  const std::atomic<bool>& draining_;
  ExchangeCounts exchanges_;  // written by this worker only
  // By AcceptError; written by this worker only.
  std::array<std::atomic<uint64_t>, kAcceptErrorCauses> accept_errors_{};
  std::atomic<uint64_t> tls_handshake_failures_{0};  // written by this worker only
  Http2Counters http2_;                              // written by this worker only
  std::shared_ptr<const TlsContext> tls_;            // this worker's thread only
  std::unique_ptr<Handler> handler_;
  // Destroyed first (see ~Worker): coroutine frames it holds may still use handler_.
  std::unique_ptr<boost::asio::io_context> context_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
};

}  // namespace turnpike::http
