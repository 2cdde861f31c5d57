#include "http/worker.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "http/connection.h"
#include "http/session.h"
#include "http/tls_context.h"

namespace turnpike::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr auto kTuple = net::as_tuple(net::use_awaitable);
constexpr int kListenBacklog = 4096;
// A failed accept is retried after kAcceptPauseMin, doubling up to kAcceptPauseMax while the
// failures go on.
constexpr std::chrono::milliseconds kAcceptPauseMin{10};
constexpr std::chrono::milliseconds kAcceptPauseMax{1'000};
constexpr std::chrono::seconds kAcceptLogEvery{10};
// Connections accepted per wake-up of a listener before the loop yields to other work.
constexpr int kAcceptBatch = 64;
using ReusePort = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
}  // namespace

Worker::Worker(int index, const ServerOptions& options, const std::atomic<bool>& draining)
    : index_(index),
      options_(options),
      draining_(draining),
      tls_(options.tls),
      // One thread runs the context and alone starts I/O on its sockets (other threads only
      // post to it), so the reactor's per-socket lock guards nothing: it is off. The
      // scheduler's lock (posts from other threads) and the timer queue's stay on.
      context_(std::make_unique<net::io_context>(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO)) {
  guard_.emplace(context_->get_executor());
}

Worker::~Worker() {
  context_->stop();
  acceptors_.clear();
  if (handler_) handler_->Shutdown();
  // Destroying the context destroys suspended sessions; they may still touch handler_.
  guard_.reset();
  context_.reset();
  handler_.reset();
}

Status Worker::Listen(const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  auto acceptor = std::make_unique<tcp::acceptor>(*context_);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->set_option(ReusePort(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(kListenBacklog, ec);
  if (ec) {
    return Error{ErrorCode::kInternal,
                 "cannot listen on " + endpoint.address().to_string() + ":" +
                     std::to_string(endpoint.port()) + ": " + ec.message(),
                 ""};
  }
  acceptors_.push_back(std::move(acceptor));
  return Ok{};
}

Status Worker::Adopt(int fd) {
  boost::system::error_code ec;
  auto acceptor = std::make_unique<tcp::acceptor>(*context_);
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return Error{ErrorCode::kInternal,
                 "inherited descriptor " + std::to_string(fd) + " is not a socket", ""};
  }
  const tcp protocol = address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4();
  acceptor->assign(protocol, fd, ec);
  if (ec) {
    return Error{ErrorCode::kInternal,
                 "inherited descriptor " + std::to_string(fd) + ": " + ec.message(), ""};
  }
  acceptors_.push_back(std::move(acceptor));
  return Ok{};
}

std::vector<int> Worker::listener_fds() const {
  std::vector<int> fds;
  for (const auto& acceptor : acceptors_) {
    if (acceptor->is_open()) fds.push_back(acceptor->native_handle());
  }
  return fds;
}

void Worker::Start(const HandlerFactory& factory) {
  handler_ = factory(index_, *context_);
  net::co_spawn(*context_, AcceptAll(), net::detached);
}

void Worker::StopAccepting() {
  net::post(*context_, [this] {
    for (auto& acceptor : acceptors_) {
      if (!acceptor->is_open()) continue;
      // release(), not close(): asio skips EPOLL_CTL_DEL on close() of a socket it opened,
      // trusting close() to drop the registration; but while a successor holds the same
      // socket the registration would outlive the descriptor and fire into freed state.
      boost::system::error_code ec;
      const int fd = acceptor->release(ec);
      if (!ec && fd >= 0) ::close(fd);
    }
  });
}

void Worker::GoAway() {
  net::post(*context_, [this] {
    const std::vector<Http2Connection*> live(http2_.live.begin(), http2_.live.end());
    for (Http2Connection* connection : live) connection->Shutdown();
  });
}

void Worker::SetTls(std::shared_ptr<const TlsContext> tls) {
  net::post(*context_, [this, tls = std::move(tls)]() mutable { tls_ = std::move(tls); });
}

void Worker::Stop() { context_->stop(); }

void Worker::Run() { context_->run(); }

net::awaitable<void> Worker::AcceptAll() {
  for (auto& acceptor : acceptors_) {
    net::co_spawn(*context_, AcceptLoop(acceptor.get()), net::detached);
  }
  co_return;
}

namespace {
AcceptError ClassifyAcceptError(const boost::system::error_code& ec) {
  switch (ec.value()) {
    case EMFILE:
      return AcceptError::kProcessDescriptors;
    case ENFILE:
      return AcceptError::kSystemDescriptors;
    case ENOBUFS:
    case ENOMEM:
      return AcceptError::kMemory;
    default:
      return AcceptError::kOther;
  }
}
}  // namespace

// Accepts in batches: each wake-up of the listener takes every connection waiting in its queue
// (up to kAcceptBatch before letting the sessions just spawned run), then waits for readiness
// again. The first pass runs before any wait, so a queue filled before Run is served.
net::awaitable<void> Worker::AcceptLoop(tcp::acceptor* acceptor) {
  boost::system::error_code nb_ec;
  acceptor->non_blocking(true, nb_ec);
  std::chrono::milliseconds pause = kAcceptPauseMin;
  uint64_t streak = 0;  // failed accepts in a row
  bool streak_logged = false;
  auto last_log = std::chrono::steady_clock::now() - kAcceptLogEvery;  // the first may log
  for (;;) {
    bool wait_for_readiness = false;
    bool failed = false;
    for (int i = 0; i < kAcceptBatch; ++i) {
      boost::system::error_code ec;
      tcp::socket socket(*context_);
      acceptor->accept(socket, ec);
      if (ec == net::error::would_block || ec == net::error::try_again) {
        wait_for_readiness = true;
        break;
      }
      // A connection accepted just before StopAccepting released the listener is served (its
      // client may have sent its request already); the next accept then ends the loop.
      if (ec && (ec == net::error::operation_aborted || !acceptor->is_open())) co_return;
      if (ec) {
        // EMFILE and friends: keep serving the connections we have, and retry accepting after
        // a pause that doubles up to a second, instead of spinning on an error the next accept
        // would repeat at once. Counted by cause (turnpike_accept_errors_total{reason}).
        std::atomic<uint64_t>& counter =
            accept_errors_[static_cast<size_t>(ClassifyAcceptError(ec))];
        counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        if (streak++ == 0) {
          const auto now = std::chrono::steady_clock::now();
          // One line per streak, and at most one every kAcceptLogEvery however often the
          // streaks come and go under descriptor pressure.
          streak_logged = now - last_log >= kAcceptLogEvery;
          if (streak_logged) {
            last_log = now;
            // The errno's text (strerrordesc_np: thread-safe, and allocates nothing).
            const char* what = strerrordesc_np(ec.value());
            std::fprintf(stderr,
                         "turnpike: worker %d cannot accept connections: %s (errno %d); retrying "
                         "after %lld ms, backing off up to %lld ms\n",
                         index_, what != nullptr ? what : "unknown error", ec.value(),
                         static_cast<long long>(pause.count()),
                         static_cast<long long>(kAcceptPauseMax.count()));
          }
        }
        failed = true;
        break;
      }
      if (streak > 0) {
        if (streak_logged) {
          std::fprintf(stderr, "turnpike: worker %d accepts connections again, after %llu failed\n",
                       index_, static_cast<unsigned long long>(streak));
        }
        streak = 0;
        pause = kAcceptPauseMin;
      }
      boost::system::error_code opt_ec;
      socket.set_option(tcp::no_delay(true), opt_ec);
      if (tls_) {
        net::co_spawn(*context_, TlsSession(std::move(socket), tls_), net::detached);
      } else {
        net::co_spawn(*context_, Session(std::move(socket)), net::detached);
      }
    }
    if (failed) {
      net::steady_timer timer(*context_);
      timer.expires_after(pause);
      const auto [timer_ec] = co_await timer.async_wait(kTuple);
      (void)timer_ec;  // cancelled only when the loop stops; the accept below then says so
      pause = std::min(pause * 2, kAcceptPauseMax);
      continue;
    }
    if (!wait_for_readiness) {
      // A full batch: let the sessions just spawned (and other work) run, then accept more.
      co_await net::post(*context_, net::use_awaitable);
      continue;
    }
    const auto [wait_ec] = co_await acceptor->async_wait(tcp::acceptor::wait_read, kTuple);
    if (wait_ec == net::error::operation_aborted || !acceptor->is_open()) co_return;
  }
}

net::awaitable<void> Worker::Session(tcp::socket socket) {
  auto connection = std::make_shared<Connection>(std::move(socket));
  connection->write_timeout = options_.idle_timeout;
  SessionContext ctx{options_, *handler_, draining_, exchanges_, http2_};
  co_await RunSession(ctx, std::move(connection));
}

net::awaitable<void> Worker::TlsSession(tcp::socket socket, std::shared_ptr<const TlsContext> tls) {
  auto connection = std::make_shared<TlsConnection>(std::move(socket), tls->initial());
  connection->write_timeout = options_.idle_timeout;
  const std::chrono::milliseconds handshake_timeout = tls->handshake_timeout();
  connection->tls_context = std::move(tls);
  SessionContext ctx{options_, *handler_, draining_, exchanges_, http2_};
  co_await RunTlsSession(ctx, std::move(connection), handshake_timeout, tls_handshake_failures_);
}

}  // namespace turnpike::http
