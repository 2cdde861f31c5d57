#include "upstream/call.h"

#include <openssl/ssl.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <limits>

namespace turnpike::upstream {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

namespace {
constexpr auto kTuple = net::as_tuple(net::use_awaitable);

template <typename Stream>
net::awaitable<boost::system::error_code> WriteAndReadHead(
    Stream& stream, beast::flat_buffer& buffer, bhttp::response_parser<bhttp::buffer_body>& parser,
    const std::string& head, std::string_view body, std::chrono::milliseconds first_byte,
    Clock::time_point& sent_at) {
  std::array<net::const_buffer, 2> buffers{net::buffer(head), net::buffer(body)};
  beast::get_lowest_layer(stream).expires_after(first_byte);
  auto [wec, wn] = co_await net::async_write(stream, buffers, kTuple);
  if (wec) co_return wec;
  sent_at = Clock::now();
  auto [rec, rn] = co_await bhttp::async_read_header(stream, buffer, parser, kTuple);
  co_return rec;
}

template <typename Stream>
net::awaitable<std::pair<boost::system::error_code, size_t>> ReadBodyPiece(
    Stream& stream, beast::flat_buffer& buffer, bhttp::response_parser<bhttp::buffer_body>& parser,
    std::vector<char>& out, std::chrono::milliseconds idle) {
  size_t got = 0;
  while (got == 0 && !parser.is_done()) {
    parser.get().body().data = out.data();
    parser.get().body().size = out.size();
    beast::get_lowest_layer(stream).expires_after(idle);
    auto [ec, n] = co_await bhttp::async_read_some(stream, buffer, parser, kTuple);
    got = out.size() - parser.get().body().size;
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) co_return std::pair{ec, got};
  }
  co_return std::pair{boost::system::error_code{}, got};
}

bool IsStaleConnectionError(boost::system::error_code ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == bhttp::error::partial_message;
}

}  // namespace

Call::Call(Pool& pool, const Origin& origin, const CallOptions& options)
    : pool_(pool), origin_(origin), options_(options) {}

Call::~Call() {
  if (connection_) connection_->Close();
}

Error Call::Failure(boost::system::error_code ec, std::string_view during) const {
  const std::string where = " (" + origin_.key + ", " + std::string(during) + ")";
  if (cancelled_)
    return Error{ErrorCode::kUpstreamUnavailable, "upstream call cancelled" + where, ""};
  if (ec == beast::error::timeout) {
    return Error{ErrorCode::kUpstreamTimeout, "upstream timed out" + where, ""};
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category() &&
      !IsStaleConnectionError(ec)) {
    return Error{ErrorCode::kUpstreamBadResponse,
                 "upstream sent a malformed response: " + ec.message() + where, ""};
  }
  return Error{ErrorCode::kUpstreamUnavailable,
               "upstream connection failed: " + ec.message() + where, ""};
}

net::awaitable<Status> Call::Connect() {
  auto conn = std::make_unique<UpstreamConnection>();
  auto& context = pool_.context();
  if (origin_.tls) {
    const auto& ssl = origin_.tls_verify ? pool_.tls().verify : pool_.tls().no_verify;
    conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(
        context, const_cast<net::ssl::context&>(ssl));
  } else {
    conn->tcp = std::make_unique<beast::tcp_stream>(context);
  }
  const std::string resolve_key = origin_.host + ":" + std::to_string(origin_.port);
  const auto* cached = pool_.CachedEndpoints(resolve_key);
  net::ip::tcp::resolver::results_type endpoints;
  if (cached) {
    endpoints = *cached;
  } else {
    auto [ec, results] =
        co_await pool_.resolver().async_resolve(origin_.host, std::to_string(origin_.port), kTuple);
    if (ec) {
      pool_.probe().connect_errors.Add();
      co_return Failure(ec, "resolve");
    }
    pool_.CacheEndpoints(resolve_key, results);
    endpoints = results;
  }
  beast::tcp_stream& tcp = conn->lowest();
  tcp.expires_after(options_.connect_timeout);
  auto [cec, ep] = co_await tcp.async_connect(endpoints, kTuple);
  if (cec || cancelled_) {
    pool_.probe().connect_errors.Add();
    co_return Failure(cec ? cec : net::error::operation_aborted, "connect");
  }
  boost::system::error_code opt_ec;
  tcp.socket().set_option(net::ip::tcp::no_delay(true), opt_ec);
  if (conn->tls) {
    if (!SSL_set_tlsext_host_name(conn->tls->native_handle(), origin_.host.c_str())) {
      pool_.probe().connect_errors.Add();
      co_return Error{ErrorCode::kUpstreamUnavailable, "cannot set TLS server name", ""};
    }
    if (origin_.tls_verify) {
      conn->tls->set_verify_callback(net::ssl::host_name_verification(origin_.host));
    }
    auto [hec] = co_await conn->tls->async_handshake(net::ssl::stream_base::client, kTuple);
    if (hec) {
      pool_.probe().connect_errors.Add();
      co_return Failure(hec, "TLS handshake");
    }
  }
  pool_.probe().connects.Add();
  connection_ = std::move(conn);
  connected_at_ = Clock::now();
  co_return Ok{};
}

net::awaitable<boost::system::error_code> Call::SendAndReadHead(const std::string& head,
                                                                std::string_view body) {
  parser_.emplace();
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  UpstreamConnection& c = *connection_;
  if (c.tls) {
    co_return co_await WriteAndReadHead(*c.tls, c.buffer, *parser_, head, body,
                                        options_.first_byte_timeout, request_sent_at_);
  }
  co_return co_await WriteAndReadHead(*c.tcp, c.buffer, *parser_, head, body,
                                      options_.first_byte_timeout, request_sent_at_);
}

net::awaitable<Status> Call::Start(const OutgoingRequest& request) {
  std::string head;
  head.reserve(256 + request.target.size());
  head.append(request.method).append(" ").append(request.target).append(" HTTP/1.1\r\nHost: ");
  head.append(origin_.host_header).append("\r\nContent-Length: ");
  head.append(std::to_string(request.body.size())).append("\r\n");
  for (const auto& [name, value] : request.headers) {
    head.append(name).append(": ").append(value).append("\r\n");
  }
  head.append("\r\n");

  connection_ = pool_.Acquire(origin_);
  reused_ = connection_ != nullptr;
  if (reused_) {
    boost::system::error_code ec = co_await SendAndReadHead(head, request.body);
    if (!ec) {
      head_received_at_ = Clock::now();
      co_return Ok{};
    }
    // A pooled connection the origin closed while idle: try once more on a fresh one.
    if (cancelled_ || !IsStaleConnectionError(ec)) co_return Failure(ec, "request");
    pool_.probe().stale_retries.Add();
    connection_->Close();
    connection_.reset();
    reused_ = false;
  }
  Status connected = co_await Connect();
  if (!connected.ok()) co_return connected;
  boost::system::error_code ec = co_await SendAndReadHead(head, request.body);
  if (ec) co_return Failure(ec, "request");
  head_received_at_ = Clock::now();
  co_return Ok{};
}

unsigned Call::status() const { return parser_ ? parser_->get().result_int() : 0; }

std::string_view Call::header(std::string_view name) const {
  if (!parser_) return {};
  auto it = parser_->get().find(name);
  if (it == parser_->get().end()) return {};
  return std::string_view(it->value().data(), it->value().size());
}

net::awaitable<Result<std::string_view>> Call::ReadSome() {
  if (done_ || !connection_) co_return std::string_view{};
  if (read_buffer_.empty()) read_buffer_.resize(options_.read_buffer_bytes);
  UpstreamConnection& c = *connection_;
  auto [ec, got] =
      c.tls
          ? co_await ReadBodyPiece(*c.tls, c.buffer, *parser_, read_buffer_, options_.idle_timeout)
          : co_await ReadBodyPiece(*c.tcp, c.buffer, *parser_, read_buffer_, options_.idle_timeout);
  if (ec) co_return Failure(ec, "reading the body");
  if (got == 0) Finish();
  co_return std::string_view(read_buffer_.data(), got);
}

net::awaitable<Result<std::string>> Call::ReadAll(size_t max_bytes) {
  std::string body;
  if (auto length = parser_->content_length()) body.reserve(std::min<uint64_t>(*length, max_bytes));
  for (;;) {
    Result<std::string_view> piece = co_await ReadSome();
    if (!piece.ok()) co_return piece.error();
    if (piece.value().empty()) break;
    if (body.size() + piece.value().size() > max_bytes) {
      co_return Error{ErrorCode::kUpstreamBadResponse,
                      "upstream response larger than " + std::to_string(max_bytes) + " bytes", ""};
    }
    body.append(piece.value());
  }
  co_return body;
}

void Call::Finish() {
  done_ = true;
  if (!connection_) return;
  if (parser_->is_done() && parser_->get().keep_alive() && !cancelled_) {
    ++connection_->uses;
    pool_.Release(origin_, std::move(connection_));
  }
}

void Call::Cancel() {
  cancelled_ = true;
  if (connection_) connection_->Close();
}

}  // namespace turnpike::upstream
