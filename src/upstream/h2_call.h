// One exchange with an upstream origin over HTTP/2: the part of an upstream::Call that runs
// when the origin is `http2` (call.h forwards to it; doors see only Call).
//
// Start() takes a stream on a connection H2Pool picks (multiplexed with the worker's other
// calls to the origin), sends the request and waits for the response head under the first-byte
// timeout. A stream the server refused unprocessed (REFUSED_STREAM, above a GOAWAY's last
// stream id) or whose connection failed before its head was sent is tried once more on another
// connection. Over TLS, when the origin did not select h2, Start() fails with fell_back() set
// and the Call speaks HTTP/1.1 instead.
//
// The body is read as it arrives; each piece taken opens the stream's flow-control window again,
// so a reader that stops reading stalls only its stream. Cancel() and destruction before the
// end send RST_STREAM CANCEL.
//
// Ownership: borrows the Pool and the Origin (both outlive it); holds its connection and stream
// by shared_ptr. Thread safety: the owning worker's thread only.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "upstream/h2_connection.h"

namespace turnpike::upstream {

struct CallOptions;
struct OutgoingRequest;

class H2Call {
 public:
  H2Call(Pool& pool, const Origin& origin, const CallOptions& options);
  ~H2Call();
  H2Call(const H2Call&) = delete;
  H2Call& operator=(const H2Call&) = delete;

  // As Call::Start.
  boost::asio::awaitable<Status> Start(const OutgoingRequest& request);
  unsigned status() const { return stream_ ? stream_->status : 0; }
  std::string_view header(std::string_view name) const;
  std::string_view content_type() const { return content_type_; }
  // As Call::ReadSomeWithin / ReadAll.
  boost::asio::awaitable<Result<std::optional<std::string_view>>> ReadSomeWithin(
      std::chrono::milliseconds wait);
  boost::asio::awaitable<Result<std::string>> ReadAll(size_t max_bytes);
  void Cancel();

  bool done() const { return done_; }
  bool fell_back() const { return fell_back_; }
  bool reused() const { return reused_; }
  Clock::time_point connected_at() const { return connected_at_; }
  Clock::time_point request_sent_at() const { return request_sent_at_; }
  Clock::time_point head_received_at() const { return head_received_at_; }

 private:
  // Waits until the stream's signal or `timeout`: false when the time passed.
  boost::asio::awaitable<bool> Wait(std::chrono::milliseconds timeout);
  Error Failure(std::string_view what) const;

  Pool& pool_;
  const Origin& origin_;
  const CallOptions& options_;
  std::shared_ptr<H2Connection> connection_;
  std::shared_ptr<H2Stream> stream_;
  std::string piece_;  // data taken from the stream; ReadSomeWithin hands out views of it
  size_t piece_at_ = 0;
  std::string_view content_type_;
  bool cancelled_ = false;
  bool done_ = false;
  bool fell_back_ = false;
  bool reused_ = false;
  Clock::time_point connected_at_{};
  Clock::time_point request_sent_at_{};
  Clock::time_point head_received_at_{};
  Clock::time_point last_bytes_at_{};
};

}  // namespace turnpike::upstream
