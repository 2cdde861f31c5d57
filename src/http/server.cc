#include "http/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/thread_name.h"
#include "http/worker.h"

namespace turnpike::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr std::chrono::milliseconds kDrainPoll{20};

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

Status Server::Bind() {
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

uint64_t Server::accept_errors() const {
  uint64_t sum = 0;
  for (const auto& worker : workers_) sum += worker->accept_errors();
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
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // One poll at least, so that the GOAWAYs posted to the workers (Worker::GoAway) are written
  // before an idle server stops.
  do {
    timer.expires_after(kDrainPoll);
    co_await timer.async_wait(net::use_awaitable);
  } while (server->in_flight() > 0 && std::chrono::steady_clock::now() < deadline);
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
