#include "upstream/h2_connection.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

namespace turnpike::upstream {
namespace asio = boost::asio;

namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReadBytes = 16 * 1024;
// ALPN: h2 first, HTTP/1.1 as the fallback a server may select.
constexpr unsigned char kAlpn[] = "\x02h2\x08http/1.1";
}  // namespace

H2Connection::H2Connection(Pool& pool, const Origin& origin, uint32_t max_streams)
    : pool_(pool), origin_(origin), session_(pool.context().get_executor(), max_streams) {
  asio::ssl::context* ssl = nullptr;
  if (origin_.tls) {
    ssl = const_cast<asio::ssl::context*>(origin_.tls_verify ? &pool_.tls().verify()
                                                             : &pool_.tls().no_verify());
  }
  socket_ = std::make_shared<UpstreamConnection>(pool.context(), ssl);
}

void H2Connection::Start(std::shared_ptr<H2Connection> self,
                         std::chrono::milliseconds connect_timeout,
                         std::chrono::milliseconds idle_ttl) {
  asio::any_io_executor executor = self->pool_.context().get_executor();
  asio::co_spawn(executor, Run(std::move(self), connect_timeout, idle_ttl), asio::detached);
}

void H2Connection::Busy() { turnpike::net::DisarmDeadline(socket_->deadline); }

void H2Connection::Close() {
  if (!ended_) End("closed by the pool");
  socket_->Close();
}

void H2Connection::End(std::string why) {
  if (ended_) return;
  ended_ = true;
  if (failure_.empty()) failure_ = std::move(why);
  session_.ConnectionLost();
}

asio::awaitable<bool> H2Connection::Connect(std::chrono::milliseconds timeout) {
  const std::string resolve_key = origin_.host + ":" + std::to_string(origin_.port);
  const auto* cached = pool_.CachedEndpoints(resolve_key);
  asio::ip::tcp::resolver::results_type endpoints;
  if (cached) {
    endpoints = *cached;
  } else {
    auto [ec, results] =
        co_await pool_.resolver().async_resolve(origin_.host, std::to_string(origin_.port), kTuple);
    if (ec || ended_) {
      failure_ = "resolve: " + ec.message();
      co_return false;
    }
    pool_.CacheEndpoints(resolve_key, results);
    endpoints = results;
  }
  UpstreamConnection& c = *socket_;
  c.Arm(timeout);
  auto [cec, ep] = co_await asio::async_connect(c.lowest(), endpoints, kTuple);
  if (cec || ended_) {
    failure_ = c.deadline.hit ? "connect timed out" : "connect: " + cec.message();
    co_return false;
  }
  if (c.ConnectedToItself(ep)) {
    failure_ = "connect: connection refused (the socket connected to itself)";
    co_return false;
  }
  boost::system::error_code opt_ec;
  c.lowest().set_option(asio::ip::tcp::no_delay(true), opt_ec);
  if (c.tls) {
    SSL* ssl = c.tls->native_handle();
    if (!SSL_set_tlsext_host_name(ssl, origin_.host.c_str()) ||
        (origin_.tls_verify && !c.tls->SetVerifyHost(origin_.host))) {
      failure_ = "cannot set the TLS server name";
      co_return false;
    }
    SSL_set_alpn_protos(ssl, kAlpn, sizeof(kAlpn) - 1);
    auto [hec] = co_await c.tls->async_handshake(asio::ssl::stream_base::client, kTuple);
    if (hec || ended_) {
      failure_ = c.deadline.hit ? "TLS handshake timed out" : "TLS handshake: " + hec.message();
      co_return false;
    }
    const unsigned char* alpn = nullptr;
    unsigned alpn_size = 0;
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_size);
    if (std::string_view(reinterpret_cast<const char*>(alpn), alpn_size) != "h2") {
      h1_selected_ = true;
      failure_ = "the origin did not select h2 (ALPN)";
      co_return false;
    }
  }
  turnpike::net::DisarmDeadline(c.deadline);
  co_return true;
}

asio::awaitable<void> H2Connection::Run(std::shared_ptr<H2Connection> self,
                                        std::chrono::milliseconds connect_timeout,
                                        std::chrono::milliseconds idle_ttl) {
  H2Connection& h = *self;
  const bool connected = co_await h.Connect(connect_timeout);
  if (!connected) {
    if (!h.ended_) h.pool_.probe().connect_errors.Add();
    h.End(h.failure_);
    h.socket_->Close();
    co_return;
  }
  h.connected_ = true;
  h.connected_at_ = Clock::now();
  h.pool_.probe().connects.Add();
  asio::co_spawn(h.pool_.context().get_executor(), WriteLoop(self), asio::detached);
  UpstreamConnection& c = *h.socket_;
  std::string buffer(kReadBytes, '\0');
  std::string why = "the origin closed the connection";
  for (;;) {
    if (h.session_.open_streams() == 0) c.Arm(idle_ttl);
    size_t n = 0;
    boost::system::error_code ec;
    if (c.tls) {
      auto [read_ec, got] = co_await c.tls->async_read_some(asio::buffer(buffer), kTuple);
      ec = read_ec;
      n = got;
    } else {
      auto [read_ec, got] = co_await c.plain.async_read_some(asio::buffer(buffer), kTuple);
      ec = read_ec;
      n = got;
    }
    if (ec) {
      // The idle deadline passed just as a stream arrived: keep the connection.
      if (ec == asio::error::operation_aborted && c.deadline.hit && !h.ended_ &&
          h.session_.open_streams() > 0) {
        c.deadline.hit = false;
        continue;
      }
      why = c.deadline.hit ? "idle" : "read: " + ec.message();
      break;
    }
    if (!h.session_.Receive(std::string_view(buffer.data(), n))) {
      why = "the origin sent invalid HTTP/2";
      h.session_.Wake();  // the writer sends the GOAWAY the session queued
      break;
    }
    h.session_.Wake();
    if (!h.session_.Alive()) {
      why = "the session ended (GOAWAY)";
      break;
    }
  }
  h.reader_done_ = true;
  h.session_.Wake();
  // Open streams cannot finish without the reader: they end now.
  h.End(why);
}

asio::awaitable<void> H2Connection::WriteLoop(std::shared_ptr<H2Connection> self) {
  H2Connection& h = *self;
  UpstreamConnection& c = *h.socket_;
  std::string out;
  for (;;) {
    out.clear();
    const bool sound = h.session_.TakeOutput(out);
    if (!out.empty()) {
      boost::system::error_code ec;
      if (c.tls) {
        auto [write_ec, n] = co_await asio::async_write(*c.tls, asio::buffer(out), kTuple);
        ec = write_ec;
      } else {
        auto [write_ec, n] = co_await asio::async_write(c.plain, asio::buffer(out), kTuple);
        ec = write_ec;
      }
      if (ec) break;
      continue;
    }
    if (!sound || h.reader_done_ || h.ended_ || !h.session_.Alive()) break;
    asio::steady_timer& signal = h.session_.work_signal();
    signal.expires_at(asio::steady_timer::time_point::max());
    auto [ec] = co_await signal.async_wait(kTuple);
    (void)ec;  // Wake() cancels the wait
  }
  h.End("write failed");
  h.socket_->Close();
}

std::shared_ptr<H2Connection> H2Pool::Pick(const Origin& origin,
                                           std::chrono::milliseconds connect_timeout) {
  auto& list = origins_[origin.key];
  std::erase_if(list, [](const std::shared_ptr<H2Connection>& c) {
    return c->ended() || c->session().going_away();
  });
  for (const auto& connection : list) {
    if (connection->session().HasRoom()) {
      connection->Busy();
      return connection;
    }
  }
  const uint32_t cap = static_cast<uint32_t>(pool_.options().h2_max_streams_per_connection);
  auto connection = std::make_shared<H2Connection>(pool_, origin, cap);
  if (shut_down_) {
    connection->Close();
    return connection;
  }
  list.push_back(connection);
  H2Connection::Start(connection, connect_timeout, pool_.options().idle_ttl);
  return connection;
}

size_t H2Pool::ConnectionCount(const Origin& origin) const {
  auto it = origins_.find(origin.key);
  return it == origins_.end() ? 0 : it->second.size();
}

void H2Pool::Shutdown() {
  shut_down_ = true;
  for (auto& [key, list] : origins_) {
    for (auto& connection : list) connection->Close();
  }
  origins_.clear();
}

}  // namespace turnpike::upstream
