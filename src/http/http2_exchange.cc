#include "http/http2_exchange.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace turnpike::http {
namespace {
namespace net = boost::asio;
constexpr auto kTuple = net::as_tuple(net::use_awaitable);
}  // namespace

Http2Exchange::Http2Exchange(std::shared_ptr<Http2Connection> connection,
                             std::shared_ptr<Http2Stream> stream, bool draining)
    : Exchange(stream->request, stream->started, draining),
      connection_(std::move(connection)),
      stream_(std::move(stream)) {}

Http2Exchange::~Http2Exchange() { StopWatching(); }

bool Http2Exchange::SubmitHead(unsigned status, std::string_view content_type,
                               std::string_view content_length, bool body) {
  response_status_ = status;
  head_sent_at_ = Clock::now();
  return connection_->SubmitResponse(*stream_, status, content_type, content_length, request_id_,
                                     response_headers_.lines(), body);
}

net::awaitable<bool> Http2Exchange::Respond(unsigned status, std::string_view content_type,
                                            std::string body) {
  if (state_ != State::kNew) co_return false;
  state_ = State::kDone;
  const std::string length = std::to_string(body.size());
  if (!SubmitHead(status, content_type, length, !body.empty())) co_return false;
  bytes_sent_ += body.size();
  if (!body.empty()) connection_->Queue(*stream_, body, true);
  co_return !stream_->gone;
}

net::awaitable<bool> Http2Exchange::StartStream(unsigned status, std::string_view content_type) {
  if (state_ != State::kNew) co_return false;
  state_ = State::kStreaming;
  const bool submitted = SubmitHead(status, content_type, {}, true);
  co_return submitted && !stream_->gone;
}

net::awaitable<bool> Http2Exchange::Write(std::string_view data) {
  if (state_ != State::kStreaming) co_return false;
  Http2Stream& s = *stream_;
  if (s.gone || s.closed) co_return false;
  if (data.empty()) co_return true;
  bytes_sent_ += data.size();
  connection_->Queue(s, data, false);
  // Backpressure per stream: wait while the client has not taken enough of this stream. A
  // wait that ends by its deadline with nothing taken meanwhile is a stalled client.
  while (s.queued() > Http2Connection::kStreamQueueBytes && !s.closed) {
    if (!s.drained) {
      s.drained = std::make_unique<net::steady_timer>(connection_->executor());
    }
    const uint64_t taken_before = s.taken;
    s.drained->expires_after(connection_->stream_write_timeout());
    auto [ec] = co_await s.drained->async_wait(kTuple);
    // Cancelled: the queue shrank or the stream closed.
    if (!ec && s.taken == taken_before && !s.closed) {
      connection_->ResetStalled(s);
      co_return false;
    }
  }
  co_return !s.gone;
}

net::awaitable<bool> Http2Exchange::EndStream() {
  if (state_ != State::kStreaming) co_return false;
  state_ = State::kDone;
  if (stream_->gone || stream_->closed) co_return false;
  connection_->Queue(*stream_, {}, true);
  co_return true;
}

void Http2Exchange::Abort() {
  state_ = State::kDone;
  connection_->Reset(*stream_);
}

void Http2Exchange::WatchClient(std::function<void()> on_gone) {
  if (stream_->gone) {
    if (on_gone) on_gone();
    return;
  }
  stream_->on_gone = std::move(on_gone);
}

void Http2Exchange::StopWatching() { stream_->on_gone = nullptr; }

}  // namespace turnpike::http
