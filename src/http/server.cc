#include "http/server.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstring>

#include "common/thread_name.h"
#include "http/worker.h"

namespace turnpike::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr std::chrono::milliseconds kDrainPoll{20};
constexpr std::chrono::milliseconds kDrainLinger{500};

// A socket bound without SO_REUSEPORT collides with any listener on the address, including
// another process's SO_REUSEPORT group, which would otherwise silently share our port.
Result<uint16_t> ProbeAddress(net::io_context& context, const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  tcp::acceptor probe(context);
  probe.open(endpoint.protocol(), ec);
  if (!ec) probe.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) probe.bind(endpoint, ec);
  if (ec) {
    return Error{ErrorCode::kInternal,
                 "cannot listen on " + endpoint.address().to_string() + ":" +
                     std::to_string(endpoint.port()) + ": " + ec.message(),
                 ""};
  }
  uint16_t port = probe.local_endpoint().port();
  probe.close(ec);
  return port;
}
}  // namespace

Server::Server(ServerOptions options, HandlerFactory factory) : options_(std::move(options)) {
  const int n = std::max(1, options_.workers);
  for (int i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, options_, draining_));
  }
  for (auto& worker : workers_) worker->Start(factory);
}

Server::~Server() = default;

Status Server::BindInherited() {
  const std::vector<int>& fds = options_.inherited_listeners;
  for (size_t i = 0; i < fds.size(); ++i) {
    int listening = 0;
    socklen_t length = sizeof(listening);
    if (::getsockopt(fds[i], SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 ||
        listening == 0) {
      return Error{ErrorCode::kInternal,
                   "inherited descriptor " + std::to_string(fds[i]) + " is not a listening socket",
                   ""};
    }
    Status st = workers_[i % workers_.size()]->Adopt(fds[i]);
    if (!st.ok()) return st;
  }
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  ::getsockname(fds[0], reinterpret_cast<sockaddr*>(&address), &length);
  tcp::endpoint endpoint;
  std::memcpy(endpoint.data(), &address, std::min<size_t>(length, sizeof(address)));
  endpoint.resize(length);
  // A worker left without one accepts from a duplicate of one (a socket made without
  // SO_REUSEPORT, as systemd's are, admits no second listener on its address).
  for (size_t i = fds.size(); i < workers_.size(); ++i) {
    const int copy = ::fcntl(fds[i % fds.size()], F_DUPFD_CLOEXEC, 3);
    if (copy < 0) {
      return Error{ErrorCode::kInternal, "cannot duplicate an inherited listener", ""};
    }
    Status st = workers_[i]->Adopt(copy);
    if (!st.ok()) return st;
  }
  bound_port_ = endpoint.port();
  return Ok{};
}

Status Server::Bind() {
  if (!options_.inherited_listeners.empty()) {
    Status st = BindInherited();
    if (!st.ok()) return st;
    for (auto& worker : workers_) {
      for (int fd : worker->listener_fds()) listener_fds_.push_back(fd);
    }
    return Ok{};
  }
  boost::system::error_code ec;
  auto address = net::ip::make_address(options_.host, ec);
  if (ec) return Error{ErrorCode::kInternal, "invalid listen address: " + options_.host, ""};
  Result<uint16_t> port =
      ProbeAddress(workers_[0]->context(), tcp::endpoint(address, options_.port));
  if (!port.ok()) return port.error();
  tcp::endpoint endpoint(address, port.value());
  for (auto& worker : workers_) {
    Status st = worker->Listen(endpoint);
    if (!st.ok()) return st;
  }
  bound_port_ = port.value();
  for (auto& worker : workers_) {
    for (int fd : worker->listener_fds()) listener_fds_.push_back(fd);
  }
  return Ok{};
}

void Server::Run() {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers_.size(); ++i) {
    threads.emplace_back([w = workers_[i].get(), i] {
      SetThreadName("tp-worker-" + std::to_string(i));
      w->Run();
    });
  }
  SetThreadName("tp-worker-0");  // the calling (main) thread is worker 0
  workers_[0]->Run();
  for (auto& t : threads) t.join();
}

int64_t Server::in_flight() const {
  int64_t sum = 0;
  for (const auto& worker : workers_) sum += worker->in_flight();
  return sum;
}

uint64_t Server::exchanges_started() const {
  uint64_t sum = 0;
  for (const auto& worker : workers_) sum += worker->exchanges_started();
  return sum;
}

uint64_t Server::accept_errors(AcceptError cause) const {
  uint64_t sum = 0;
  for (const auto& worker : workers_) sum += worker->accept_errors(cause);
  return sum;
}

uint64_t Server::tls_handshake_failures() const {
  uint64_t sum = 0;
  for (const auto& worker : workers_) sum += worker->tls_handshake_failures();
  return sum;
}

Http2Totals Server::http2_totals() const {
  Http2Totals t;
  for (const auto& worker : workers_) {
    const Http2Counters& c = worker->http2();
    t.connections += c.connections.load(std::memory_order_relaxed);
    t.streams += c.streams_opened.load(std::memory_order_relaxed);
    t.client_resets += c.client_resets.load(std::memory_order_relaxed);
    t.goaways_sent += c.goaways_sent.load(std::memory_order_relaxed);
    t.stream_timeouts += c.stream_timeouts.load(std::memory_order_relaxed);
  }
  return t;
}

void Server::ReloadTls(std::shared_ptr<const TlsContext> tls) {
  if (!options_.tls || !tls) return;
  for (auto& worker : workers_) worker->SetTls(tls);
}

void Server::Stop() {
  for (auto& worker : workers_) worker->Stop();
}

namespace {
net::awaitable<void> DrainWatch(Server* server, std::chrono::milliseconds timeout) {
  net::steady_timer timer(co_await net::this_coro::executor);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  // An exchange begun before the drain answered `keep-alive`; its client may send the next
  // request just after it ends, and kept-alive connections idle when the drain began may carry
  // one already sent. Each is answered (with `Connection: close`) if it arrives within the
  // linger, which restarts whenever exchanges are seen in flight: the stop below resets only a
  // connection that stayed quiet that long. One poll at least, so that the GOAWAYs posted to
  // the workers (Worker::GoAway) are written before an idle server stops.
  auto quiet_since = start;
  for (;;) {
    timer.expires_after(kDrainPoll);
    co_await timer.async_wait(net::use_awaitable);
    const auto now = std::chrono::steady_clock::now();
    if (server->in_flight() > 0) quiet_since = now;
    if (now >= deadline || now - quiet_since >= kDrainLinger) break;
  }
  server->Stop();
}
}  // namespace

void Server::Drain() {
  if (draining_.exchange(true)) return;
  for (auto& worker : workers_) {
    worker->StopAccepting();
    worker->GoAway();
  }
  net::co_spawn(workers_[0]->context(), DrainWatch(this, options_.drain_timeout), net::detached);
}

}  // namespace turnpike::http
