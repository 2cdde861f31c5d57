// The HTTP/2 Exchange: one request stream of an HTTP/2 connection and its response.
//
// Ownership: made by the stream's handler coroutine (http2_session.cc) and destroyed when the
// handler returns; it holds the connection (Http2Connection) and the stream, which outlive it
// while the queued response body drains. One worker thread.
//
// Writes queue the body on the stream (Http2Connection::Queue), which nghttp2 sends as the
// client's flow-control windows allow; a Write() returns at once unless the stream's queue
// holds more than Http2Connection::kStreamQueueBytes, then it suspends until the client has
// taken enough (or the stream is gone). Respond() sends the body with a content-length.
// Abort() resets the stream (RST_STREAM), not the connection. client_gone() turns true when
// the client resets the stream or the connection is lost before the response is complete, and
// WatchClient's `on_gone` runs then.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/exchange.h"
#include "http/http2_connection.h"

namespace turnpike::http {

class Http2Exchange final : public Exchange {
 public:
  Http2Exchange(std::shared_ptr<Http2Connection> connection, std::shared_ptr<Http2Stream> stream,
                bool draining);
  ~Http2Exchange() override;

  boost::asio::awaitable<bool> Respond(unsigned status, std::string_view content_type,
                                       std::string body) override;
  boost::asio::awaitable<bool> StartStream(unsigned status, std::string_view content_type) override;
  boost::asio::awaitable<bool> Write(std::string_view data) override;
  boost::asio::awaitable<bool> EndStream() override;
  void Abort() override;

  bool client_gone() const override { return stream_->gone; }
  // The connection outlives the exchange; a gone stream ends only itself.
  bool keep_alive() const override { return !stream_->gone; }
  std::string client_address() const override { return connection_->client_address(); }
  void WatchClient(std::function<void()> on_gone) override;
  void StopWatching() override;

 private:
  bool SubmitHead(unsigned status, std::string_view content_type, std::string_view content_length,
                  bool body);

  std::shared_ptr<Http2Connection> connection_;
  std::shared_ptr<Http2Stream> stream_;
};

}  // namespace turnpike::http
