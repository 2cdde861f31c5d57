// The HTTP/1.1 Exchange: one request and its response on a client connection.
//
// Ownership: made by the connection's session coroutine (session.cc) for each request and
// destroyed when the handler returns. Writes are serialized here, in call order. A streamed
// body uses chunked transfer encoding; Abort resets the connection (RST).
//
// One class per transport (connection.h), compiled for both in http1_exchange.cc:
// `Http1Exchange` (cleartext) and `TlsHttp1Exchange` write without suspending when the socket
// takes all the bytes at once (the usual case; the socket is in non-blocking mode for that),
// else asynchronously under the connection's write timeout. Over TLS a write's buffers become
// one record (net::TlsSocket gathers them), not one per buffer.
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/connection.h"
#include "http/exchange.h"

namespace turnpike::http {

// What does not depend on the stream, compiled once: the response head.
class Http1ExchangeBase : public Exchange {
 protected:
  Http1ExchangeBase(Request& request, Clock::time_point started, bool draining)
      : Exchange(request, started, draining), request_keep_alive_(request.keep_alive()) {}

  // Writes the response head into `head` (the connection's buffer, cleared first).
  void SerializeHead(std::string& head, unsigned status, std::string_view content_type,
                     bool chunked, size_t content_length);

  // The request's own keep-alive (its version and Connection field), read once: Beast parses
  // the Connection field's tokens again at each keep_alive().
  const bool request_keep_alive_;
};

template <typename Stream>
class BasicHttp1Exchange final : public Http1ExchangeBase {
 public:
  BasicHttp1Exchange(std::shared_ptr<BasicConnection<Stream>> connection, Request& request,
                     Clock::time_point started, bool draining);
  ~BasicHttp1Exchange() override;

  boost::asio::awaitable<bool> Respond(unsigned status, std::string_view content_type,
                                       std::string body) override;
  boost::asio::awaitable<bool> StartStream(unsigned status, std::string_view content_type) override;
  boost::asio::awaitable<bool> Write(std::string_view data) override;
  // One chunk, the pieces gathered into one write (no join).
  boost::asio::awaitable<bool> WritePieces(std::span<const std::string_view> pieces) override;
  boost::asio::awaitable<bool> EndStream() override;
  void Abort() override;

  bool client_gone() const override;
  bool keep_alive() const override;
  std::string client_address() const override;
  void WatchClient(std::function<void()> on_gone) override;
  void StopWatching() override;

 private:
  enum class Sent { kDone, kFailed, kLater };
  // Writes what the socket takes now, without waiting; kLater leaves the rest in `buffers`.
  template <size_t N>
  Sent TryWrite(std::array<boost::asio::const_buffer, N>& buffers);
  // TryWrite, then WriteBuffers for what is left.
  boost::asio::awaitable<bool> Send(std::array<boost::asio::const_buffer, 3> buffers);
  // Waits for earlier writes, then writes all of `buffers` asynchronously.
  template <size_t N>
  boost::asio::awaitable<bool> WriteBuffers(std::array<boost::asio::const_buffer, N> buffers);
  std::shared_ptr<BasicConnection<Stream>> connection_;
  bool writing_ = false;
  int queued_writes_ = 0;  // WriteBuffers calls waiting for `writing_` to clear
  std::unique_ptr<boost::asio::steady_timer> write_done_;  // wakes a Write() queued behind another
};

using Http1Exchange = BasicHttp1Exchange<PlainStream>;
using TlsHttp1Exchange = BasicHttp1Exchange<TlsStream>;

}  // namespace turnpike::http
