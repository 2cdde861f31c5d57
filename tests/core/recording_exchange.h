// An Exchange that records what a door answered instead of sending it: the head (status,
// content type, the response header lines as they were when the head went), the body as one
// string and, for a streamed body, each Write in order. `writes_before_gone` makes the client
// leave: the Write after that many fails, as a transport's does once the peer is gone.
//
// Single-threaded, like every Exchange; the request outlives it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "http/exchange.h"

namespace turnpike::core::testing {

class RecordingExchange final : public http::Exchange {
 public:
  explicit RecordingExchange(http::Request& request,
                             size_t writes_before_gone = std::numeric_limits<size_t>::max())
      : Exchange(request, http::Clock::now(), /*draining=*/false),
        writes_left_(writes_before_gone) {}

  boost::asio::awaitable<bool> Respond(unsigned status, std::string_view content_type,
                                       std::string body) override {
    Head(status, content_type);
    body_ = std::move(body);
    bytes_sent_ += body_.size();
    state_ = State::kDone;
    co_return true;
  }
  boost::asio::awaitable<bool> StartStream(unsigned status,
                                           std::string_view content_type) override {
    Head(status, content_type);
    streamed_ = true;
    state_ = State::kStreaming;
    co_return true;
  }
  boost::asio::awaitable<bool> Write(std::string_view data) override {
    if (writes_left_ == 0) {
      gone_ = true;
      co_return false;
    }
    if (data.empty()) co_return true;
    --writes_left_;
    writes_.emplace_back(data);
    body_ += data;
    bytes_sent_ += data.size();
    co_return true;
  }
  boost::asio::awaitable<bool> EndStream() override {
    ended_ = true;
    state_ = State::kDone;
    co_return !gone_;
  }
  void Abort() override { state_ = State::kDone; }
  bool client_gone() const override { return gone_; }
  bool keep_alive() const override { return true; }
  std::string client_address() const override { return "127.0.0.1:1"; }
  void WatchClient(std::function<void()> on_gone) override {}
  void StopWatching() override {}

  unsigned status() const { return status_; }
  const std::string& content_type() const { return content_type_; }
  const std::string& head_lines() const { return head_lines_; }
  const std::string& body() const { return body_; }
  const std::vector<std::string>& writes() const { return writes_; }
  bool streamed() const { return streamed_; }
  bool ended() const { return ended_; }
  int heads() const { return heads_; }

 private:
  void Head(unsigned status, std::string_view content_type) {
    ++heads_;
    status_ = status;
    response_status_ = status;
    content_type_ = std::string(content_type);
    head_lines_ = std::string(response_headers_.lines());
    head_sent_at_ = http::Clock::now();
  }

  size_t writes_left_;
  unsigned status_ = 0;
  std::string content_type_;
  std::string head_lines_;
  std::string body_;
  std::vector<std::string> writes_;
  bool streamed_ = false;
  bool ended_ = false;
  bool gone_ = false;
  int heads_ = 0;
};

}  // namespace turnpike::core::testing
