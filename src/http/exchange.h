// One request and its response on a client connection.
//
// Ownership: made by the connection's session coroutine for each request and destroyed when
// the handler returns; the handler borrows it. Thread safety: used only on the connection's
// worker thread. Several coroutines of one request may call Write(): writes are serialized
// here, in call order.
//
// Writes go out without suspending when the socket takes all the bytes at once (the usual
// case; the socket is put in non-blocking mode for that), else asynchronously under the
// connection's write timeout.
//
// A response is either one Respond(), or StartStream() + Write()* + EndStream() (chunked
// transfer encoding), or Abort() (connection reset; the mock provider uses it to inject
// faults). Write()/StartStream()/EndStream() return false once the client is gone; the
// handler then stops and releases what it holds.
#pragma once

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/response_headers.h"
#include "net/header_arena.h"

namespace turnpike::http {

// Header fields live in the connection's HeaderArena (net/header_arena.h).
using Request =
    boost::beast::http::request<boost::beast::http::string_body,
                                boost::beast::http::basic_fields<net::ArenaAllocator<char>>>;
using Fields = boost::beast::http::fields;
using Clock = std::chrono::steady_clock;

struct Connection;

class Exchange {
 public:
  Exchange(std::shared_ptr<Connection> connection, Request& request, Clock::time_point started,
           bool draining);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  const Request& request() const { return request_; }
  std::string_view target() const;
  // From `x-request-id` when the client sent a sane one, else generated. Echoed on the response.
  std::string_view request_id() const { return request_id_; }
  // When the first byte of the request was read.
  Clock::time_point started() const { return started_; }
  // "ip:port" of the client.
  std::string client_address() const;
  // The server is draining: the handler should answer readiness checks with 503.
  bool draining() const { return draining_; }

  // Headers to send with the response; add them before Respond()/StartStream().
  ResponseHeaders& response_headers() { return response_headers_; }

  // Sends a complete response with Content-Length.
  boost::asio::awaitable<bool> Respond(unsigned status, std::string_view content_type,
                                       std::string body);

  // Sends the response head with chunked transfer encoding.
  boost::asio::awaitable<bool> StartStream(unsigned status, std::string_view content_type);
  // Sends `data` as one chunk (empty data is a no-op).
  boost::asio::awaitable<bool> Write(std::string_view data);
  // Sends the last chunk.
  boost::asio::awaitable<bool> EndStream();

  // Resets the connection (RST). The exchange counts as answered.
  void Abort();

  bool answered() const { return state_ != State::kNew; }
  bool streaming() const { return state_ == State::kStreaming; }
  bool client_gone() const;
  // Whether the connection may serve another request after this one.
  bool keep_alive() const;
  // Body bytes sent so far (without chunk framing).
  uint64_t bytes_sent() const { return bytes_sent_; }
  // The status of the response head serialized so far (0: none yet).
  unsigned response_status() const { return response_status_; }
  // When the response head was written (default-constructed before).
  Clock::time_point head_sent_at() const { return head_sent_at_; }

  // Calls `on_gone` once if the client closes its connection while this exchange waits on
  // something else (the upstream), so that work can be cancelled at once, also before the
  // response started. Only one watch at a time; StopWatching() or the destructor ends it. If
  // the client is already known to be gone, `on_gone` runs before WatchClient returns.
  void WatchClient(std::function<void()> on_gone);
  void StopWatching();

 private:
  enum class State { kNew, kStreaming, kDone };
  enum class Sent { kDone, kFailed, kLater };
  // Writes what the socket takes now, without waiting; kLater leaves the rest in `buffers`.
  Sent TryWrite(std::array<boost::asio::const_buffer, 3>& buffers);
  // TryWrite, then WriteBuffers for what is left.
  boost::asio::awaitable<bool> Send(std::array<boost::asio::const_buffer, 3> buffers);
  // Waits for earlier writes, then writes all of `buffers` asynchronously.
  boost::asio::awaitable<bool> WriteBuffers(std::array<boost::asio::const_buffer, 3> buffers);
  std::string SerializeHead(unsigned status, std::string_view content_type, bool chunked,
                            size_t content_length);

  std::shared_ptr<Connection> connection_;
  Request& request_;
  const Clock::time_point started_;
  const bool draining_;
  std::string request_id_;
  ResponseHeaders response_headers_;
  State state_ = State::kNew;
  uint64_t bytes_sent_ = 0;
  unsigned response_status_ = 0;
  Clock::time_point head_sent_at_{};
  bool writing_ = false;
  int queued_writes_ = 0;  // WriteBuffers calls waiting for `writing_` to clear
  std::unique_ptr<boost::asio::steady_timer> write_done_;  // wakes a Write() queued behind another
};

}  // namespace turnpike::http
