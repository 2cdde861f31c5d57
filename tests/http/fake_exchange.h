// FakeExchange: an http::Exchange in memory, for tests that drive a door or a dispatcher
// without a socket. The request is given whole at construction; the answer is kept for the test
// to read: status, content type, headers, body (Respond's, or the streamed Writes' joined).
//
//   http::testing::FakeExchange exchange(Verb::get, "/admin/v1/plans", "",
//                                        {{"authorization", "Bearer t"}});
//   RunOnLoop(dispatcher.Handle(exchange));
//   EXPECT_EQ(exchange.response_status(), 200u);
//
// The client never goes away unless the test says so (SetClientGone: writes then return false
// and WatchClient's callback runs). Thread safety: one test thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "http/exchange.h"

namespace turnpike::http::testing {

// The request a FakeExchange owns; a base so that it exists before the Exchange reads it.
struct FakeRequest {
  FakeRequest(boost::beast::http::verb method, std::string_view target, std::string body,
              std::initializer_list<std::pair<std::string_view, std::string_view>> headers) {
    request.method(method);
    request.target(target);
    request.version(11);
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = std::move(body);
    request.prepare_payload();
  }
  Request request;
};

class FakeExchange : private FakeRequest, public Exchange {
 public:
  FakeExchange(boost::beast::http::verb method, std::string_view target, std::string body = {},
               std::initializer_list<std::pair<std::string_view, std::string_view>> headers = {})
      : FakeRequest(method, target, std::move(body), headers),
        Exchange(FakeRequest::request, Clock::now(), false) {}

  boost::asio::awaitable<bool> Respond(unsigned status, std::string_view content_type,
                                       std::string body) override {
    Head(status, content_type);
    body_ = std::move(body);
    bytes_sent_ += body_.size();
    state_ = State::kDone;
    co_return !gone_;
  }
  boost::asio::awaitable<bool> StartStream(unsigned status,
                                           std::string_view content_type) override {
    Head(status, content_type);
    state_ = State::kStreaming;
    co_return !gone_;
  }
  boost::asio::awaitable<bool> Write(std::string_view data) override {
    if (gone_) co_return false;
    body_.append(data);
    bytes_sent_ += data.size();
    co_return true;
  }
  boost::asio::awaitable<bool> EndStream() override {
    state_ = State::kDone;
    co_return !gone_;
  }
  void Abort() override {
    aborted_ = true;
    state_ = State::kDone;
  }
  bool client_gone() const override { return gone_; }
  bool keep_alive() const override { return !gone_ && !aborted_; }
  std::string client_address() const override { return "127.0.0.1:1"; }
  void WatchClient(std::function<void()> on_gone) override {
    on_gone_ = std::move(on_gone);
    if (gone_ && on_gone_) std::exchange(on_gone_, nullptr)();
  }
  void StopWatching() override { on_gone_ = nullptr; }

  // The client goes away now.
  void SetClientGone() {
    gone_ = true;
    if (on_gone_) std::exchange(on_gone_, nullptr)();
  }

  // What the handler answered.
  const std::string& response_body() const { return body_; }
  const std::string& content_type() const { return content_type_; }
  // The value of response header `name` ("" if none was added).
  std::string_view response_header(std::string_view name) const {
    return response_headers_.Find(name);
  }
  bool aborted() const { return aborted_; }

 private:
  void Head(unsigned status, std::string_view content_type) {
    response_status_ = status;
    content_type_ = std::string(content_type);
    head_sent_at_ = Clock::now();
  }

  std::string body_;
  std::string content_type_;
  bool aborted_ = false;
  bool gone_ = false;
  std::function<void()> on_gone_;
};

}  // namespace turnpike::http::testing
