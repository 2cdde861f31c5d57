#include "upstream/h2_call.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>

#include "upstream/call.h"

namespace turnpike::upstream {
namespace asio = boost::asio;

namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr int kAttempts = 2;  // a refused or unsent stream is tried once more
}  // namespace

H2Call::H2Call(Pool& pool, const Origin& origin, const CallOptions& options)
    : pool_(pool), origin_(origin), options_(options) {}

H2Call::~H2Call() {
  if (stream_ && connection_ && !stream_->ended()) connection_->session().Cancel(*stream_);
}

std::string_view H2Call::header(std::string_view name) const {
  if (!stream_) return {};
  for (const auto& [n, v] : stream_->headers) {
    if (boost::beast::iequals(n, name)) return v;
  }
  return {};
}

Error H2Call::Failure(std::string_view what) const {
  const std::string where = " (" + origin_.key + ", HTTP/2)";
  if (cancelled_)
    return Error{ErrorCode::kUpstreamUnavailable, "upstream call cancelled" + where, ""};
  return Error{ErrorCode::kUpstreamUnavailable, std::string(what) + where, ""};
}

asio::awaitable<bool> H2Call::Wait(std::chrono::milliseconds timeout) {
  stream_->signal.expires_after(timeout);
  auto [ec] = co_await stream_->signal.async_wait(kTuple);
  co_return ec == asio::error::operation_aborted;
}

asio::awaitable<Status> H2Call::Start(const OutgoingRequest& request) {
  const std::string_view scheme = origin_.tls ? "https" : "http";
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (cancelled_) co_return Failure("cancelled");
    connection_ = pool_.h2().Pick(origin_, options_.connect_timeout);
    reused_ = connection_->connected();
    stream_ = connection_->session().Submit(request, scheme, origin_.host_header);
    if (!stream_) {
      if (connection_->ended()) continue;
      co_return Failure("the HTTP/2 session refused a new stream");
    }
    if (reused_) pool_.probe().reuses.Add();
    request_sent_at_ = Clock::now();
    const auto deadline = Clock::now() + options_.first_byte_timeout;
    while (!stream_->head && !stream_->ended() && !cancelled_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        connection_->session().Cancel(*stream_);
        co_return Error{ErrorCode::kUpstreamTimeout,
                        "upstream timed out (" + origin_.key + ", HTTP/2, response head)", ""};
      }
      const bool woken = co_await Wait(left);
      (void)woken;  // the loop checks the stream, then the deadline
    }
    if (cancelled_) co_return Failure("cancelled");
    if (stream_->head) {
      head_received_at_ = Clock::now();
      connected_at_ = connection_->connected_at();
      content_type_ = header("content-type");
      co_return Ok{};
    }
    if (connection_->h1_selected()) {
      pool_.h2().MarkHttp1(origin_);
      fell_back_ = true;
      co_return Failure("the origin does not speak h2");
    }
    const bool retry_safe = stream_->refused || (stream_->lost && !stream_->sent);
    if (!retry_safe || attempt + 1 == kAttempts) break;
    pool_.probe().stale_retries.Add();
  }
  if (stream_ && stream_->lost) {
    co_return Failure("upstream connection failed: " + connection_->failure());
  }
  co_return Failure("upstream reset the stream (HTTP/2 error " +
                    std::to_string(stream_ ? stream_->error : 0) + ")");
}

asio::awaitable<Result<std::optional<std::string_view>>> H2Call::ReadSomeWithin(
    std::chrono::milliseconds wait) {
  using Piece = std::optional<std::string_view>;
  if (!stream_) co_return Piece(std::string_view{});
  if (last_bytes_at_ == Clock::time_point{}) last_bytes_at_ = head_received_at_;
  for (;;) {
    if (piece_at_ < piece_.size()) {
      const size_t n = std::min(piece_.size() - piece_at_, options_.read_buffer_bytes);
      const std::string_view out(piece_.data() + piece_at_, n);
      piece_at_ += n;
      co_return Piece(out);
    }
    if (!stream_->data.empty()) {
      piece_.clear();
      piece_.swap(stream_->data);
      piece_at_ = 0;
      connection_->session().Consume(*stream_, piece_.size());
      last_bytes_at_ = Clock::now();
      continue;
    }
    if (cancelled_) co_return Failure("cancelled");
    if (stream_->eof) {
      done_ = true;
      co_return Piece(std::string_view{});
    }
    if (stream_->closed) {
      if (stream_->lost) {
        co_return Failure("upstream connection failed mid-body: " + connection_->failure());
      }
      co_return Failure("upstream reset the stream mid-body (HTTP/2 error " +
                        std::to_string(stream_->error) + ")");
    }
    const auto silent =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_bytes_at_);
    const auto idle_left = options_.idle_timeout - silent;
    const bool soft = wait.count() > 0 && idle_left > wait;
    if (!soft && idle_left.count() <= 0) {
      connection_->session().Cancel(*stream_);
      co_return Error{ErrorCode::kUpstreamTimeout,
                      "upstream timed out (" + origin_.key + ", HTTP/2, reading the body)", ""};
    }
    const bool woken = co_await Wait(soft ? wait : idle_left);
    if (!woken && soft && stream_->data.empty() && !stream_->ended()) co_return Piece{};
  }
}

asio::awaitable<Result<std::string>> H2Call::ReadAll(size_t max_bytes) {
  std::string body;
  for (;;) {
    Result<std::optional<std::string_view>> piece =
        co_await ReadSomeWithin(std::chrono::milliseconds::zero());
    if (!piece.ok()) co_return piece.error();
    const std::string_view bytes = *piece.value();
    if (bytes.empty()) break;
    if (body.size() + bytes.size() > max_bytes) {
      Cancel();
      co_return Error{ErrorCode::kUpstreamBadResponse,
                      "upstream response larger than " + std::to_string(max_bytes) + " bytes", ""};
    }
    if (body.empty()) {
      // Usually the whole body came in one piece: take the buffer itself.
      if (piece_at_ == piece_.size() && bytes.size() == piece_.size()) {
        body.swap(piece_);
        piece_at_ = 0;
        continue;
      }
    }
    body.append(bytes);
  }
  co_return body;
}

void H2Call::Cancel() {
  cancelled_ = true;
  if (!stream_) return;
  if (connection_ && !stream_->ended()) connection_->session().Cancel(*stream_);
  stream_->Wake();
}

}  // namespace turnpike::upstream
