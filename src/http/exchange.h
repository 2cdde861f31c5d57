// One request and its response, as every door sees it: the request/response abstraction a
// transport implements (http1_exchange.h: HTTP/1.1 over one connection; http2_exchange.h: one
// HTTP/2 stream), so that no door depends on a transport.
//
// Ownership: made by the transport for each request and destroyed when the handler returns; the
// handler borrows it. Thread safety: used only on the connection's worker thread. Several
// coroutines of one request may call Write(): a transport serializes writes, in call order.
//
// A response is either one Respond(), or StartStream() + Write()* + EndStream() (a streamed
// body: chunked transfer encoding in HTTP/1.1), or Abort() (reset; the mock provider uses it to
// inject faults). Write()/StartStream()/EndStream() return false once the client is gone; the
// handler then stops and releases what it holds. Writes complete without suspending when the
// transport takes all the bytes at once (the usual case), else asynchronously under the
// connection's write timeout.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "http/response_headers.h"
#include "net/header_arena.h"
#include "net/request_parser.h"

namespace turnpike::http {

// Header fields live in the connection's HeaderArena (net/header_arena.h); HTTP/1.1 requests
// are read by net::RequestParser.
using Request = net::ArenaRequest;
using Fields = boost::beast::http::fields;
using Clock = std::chrono::steady_clock;

// The value of the request's first field of that name (empty when absent), by a walk of its
// fields in arrival order. A request has a handful of fields, and Beast's find() searches its
// ordered set with a case-insensitive comparison at every node: about 250 instructions a
// lookup against a few dozen (callgrind, docs/BENCHMARKS.md). The enum form compares the name
// Beast classified when it parsed the field; the text form compares names case-insensitively.
std::string_view FieldValue(const Request& request, boost::beast::http::field name);
std::string_view FieldValue(const Request& request, std::string_view name);

// A request target without its query ("/v1/models?x=1" -> "/v1/models").
inline std::string_view PathOf(std::string_view target) {
  return target.substr(0, target.find('?'));
}

class Exchange {
 public:
  virtual ~Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  const Request& request() const { return request_; }
  std::string_view target() const { return request_.target(); }
  std::string_view path() const { return PathOf(target()); }
  // From `x-request-id` when the client sent a sane one, else generated. Echoed on the response.
  std::string_view request_id() const { return request_id_; }
  // When the first byte of the request was read.
  Clock::time_point started() const { return started_; }
  // The server is draining: the handler should answer readiness checks with 503.
  bool draining() const { return draining_; }

  // Headers to send with the response; add them before Respond()/StartStream().
  ResponseHeaders& response_headers() { return response_headers_; }

  // Sends a complete response with its length.
  virtual boost::asio::awaitable<bool> Respond(unsigned status, std::string_view content_type,
                                               std::string body) = 0;
  // Sends the response head of a streamed body.
  virtual boost::asio::awaitable<bool> StartStream(unsigned status,
                                                   std::string_view content_type) = 0;
  // Sends `data` as the next piece of the body (empty data is a no-op).
  virtual boost::asio::awaitable<bool> Write(std::string_view data) = 0;
  // Sends `pieces` (at most kMaxPieces), in order, as the next piece of the body: views that do
  // not lie one after the other go out without being joined first, where the transport can
  // gather them into one write (HTTP/1.1 does); this default joins them and Writes.
  static constexpr size_t kMaxPieces = 4;
  virtual boost::asio::awaitable<bool> WritePieces(std::span<const std::string_view> pieces);
  // Ends the streamed body.
  virtual boost::asio::awaitable<bool> EndStream() = 0;
  // Resets the exchange (HTTP/1.1: the connection, RST). The exchange counts as answered.
  virtual void Abort() = 0;

  bool answered() const { return state_ != State::kNew; }
  bool streaming() const { return state_ == State::kStreaming; }
  virtual bool client_gone() const = 0;
  // Whether the connection may serve another request after this one.
  virtual bool keep_alive() const = 0;
  // "ip:port" of the client.
  virtual std::string client_address() const = 0;
  // Body bytes sent so far (without transport framing).
  uint64_t bytes_sent() const { return bytes_sent_; }
  // The status of the response head serialized so far (0: none yet).
  unsigned response_status() const { return response_status_; }
  // When the response head was written (default-constructed before).
  Clock::time_point head_sent_at() const { return head_sent_at_; }

  // Calls `on_gone` once if the client goes away while this exchange waits on something else
  // (the upstream), so that work can be cancelled at once, also before the response started.
  // Only one watch at a time; StopWatching() or the destructor ends it. If the client is
  // already known to be gone, `on_gone` runs before WatchClient returns.
  virtual void WatchClient(std::function<void()> on_gone) = 0;
  virtual void StopWatching() = 0;

 protected:
  enum class State { kNew, kStreaming, kDone };
  // Takes the request id from the request's `x-request-id` when sane, else makes one.
  Exchange(Request& request, Clock::time_point started, bool draining);

  Request& request_;
  const Clock::time_point started_;
  const bool draining_;
  std::string request_id_;
  ResponseHeaders response_headers_;
  State state_ = State::kNew;
  uint64_t bytes_sent_ = 0;
  unsigned response_status_ = 0;
  Clock::time_point head_sent_at_{};
};

}  // namespace turnpike::http
