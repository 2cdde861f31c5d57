#include "loadgen/connection.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <memory>

namespace turnpike::loadgen {
namespace {

namespace asio = boost::asio;

// Errors come back as values: no exception per failed request.
constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReadBufferSize = 16 * 1024;
// After a failed connect, wait before the next attempt so a dead target is not spun on.
constexpr auto kConnectRetryDelay = std::chrono::milliseconds(10);

// Whether the stream's first token has come: a chat stream's first `data:` line, a Responses
// stream's first output_text delta (its response.created comes before the upstream call).
bool FirstToken(const ResponseParser& parser, StreamEnd end) {
  return end == StreamEnd::kDoneMarker ? parser.saw_data_event() : parser.saw_text_delta();
}

}  // namespace

void CloseSocket(Worker::Slot& slot) {
  boost::system::error_code ignored;
  slot.socket.close(ignored);
}

asio::awaitable<bool> ConnectSlot(Worker& worker, Worker::Slot& slot, bool measured) {
  const Clock::time_point started = Clock::now();
  slot.timed_out = false;
  slot.deadline = started + worker.plan().timeout;
  auto [ec, endpoint] =
      co_await asio::async_connect(slot.socket, worker.plan().endpoints, kAsTuple);
  slot.deadline = Clock::time_point::max();
  if (!ec) {
    boost::system::error_code ignored;
    slot.socket.set_option(asio::ip::tcp::no_delay(true), ignored);
    co_return true;
  }
  CloseSocket(slot);
  if (worker.stopping()) co_return false;
  Completion failure;
  failure.measured = measured;
  failure.outcome = slot.timed_out ? Outcome::kTimeout : Outcome::kConnectError;
  failure.sent_at = started;
  failure.done_at = Clock::now();
  worker.Record(failure);
  slot.retry_timer.expires_after(kConnectRetryDelay);
  co_await slot.retry_timer.async_wait(kAsTuple);
  co_return false;
}

asio::awaitable<Exchanged> SendAndRead(Worker& worker, Worker::Slot& slot, std::string_view request,
                                       bool streaming, bool keep_body, StreamEnd end,
                                       ResponseParser& parser, asio::mutable_buffer read_buffer) {
  Exchanged out;
  Completion& c = out.completion;
  c.streaming = streaming;
  c.sent_at = Clock::now();
  const asio::const_buffer write_buffer(request.data(), request.size());
  parser.Reset(streaming, keep_body);
  slot.timed_out = false;
  slot.deadline = c.sent_at + worker.plan().timeout;

  auto [write_ec, written] = co_await asio::async_write(slot.socket, write_buffer, kAsTuple);
  ParseResult result = ParseResult::kNeedMore;
  bool io_failed = static_cast<bool>(write_ec);
  while (!io_failed && result == ParseResult::kNeedMore) {
    auto [read_ec, n] = co_await slot.socket.async_read_some(read_buffer, kAsTuple);
    if (read_ec == asio::error::eof) {
      result = parser.FeedEof();
      break;
    }
    if (read_ec) {
      io_failed = true;
      break;
    }
    const bool had_token = FirstToken(parser, end);
    result = parser.Feed(std::string_view(static_cast<const char*>(read_buffer.data()), n));
    if (!had_token && FirstToken(parser, end)) c.first_data_at = Clock::now();
  }
  c.done_at = Clock::now();
  slot.deadline = Clock::time_point::max();
  out.stopped = worker.stopping();
  if (slot.timed_out) {
    c.outcome = Outcome::kTimeout;
  } else if (write_ec) {
    c.outcome = Outcome::kWriteError;
  } else {
    c.outcome = ClassifyResponse(parser, result, streaming, end);
  }
  c.status = parser.status();
  c.body_bytes = parser.body_bytes();
  out.reusable = result == ParseResult::kComplete && parser.keep_alive() && !io_failed;
  co_return out;
}

asio::awaitable<void> RunConnection(Worker& worker, Worker::Slot& slot) {
  const Plan& plan = worker.plan();
  ResponseParser parser;
  auto read_storage = std::make_unique<char[]>(kReadBufferSize);
  const asio::mutable_buffer read_buffer(read_storage.get(), kReadBufferSize);

  while (true) {
    // The permit comes first so that --requests N sends exactly N, connect failures included.
    const Permit permit = worker.NextRequest();
    if (permit == Permit::kStop) break;
    if (!slot.socket.is_open()) {
      const bool connected = co_await ConnectSlot(worker, slot, permit == Permit::kMeasured);
      if (!connected) continue;
    }
    const bool streaming = worker.NextIsStream();
    const size_t variant = worker.NextVariant();
    const std::string& request =
        streaming ? plan.stream_requests[variant] : plan.plain_requests[variant];
    Exchanged exchanged = co_await SendAndRead(worker, slot, request, streaming, false,
                                               StreamEnd::kDoneMarker, parser, read_buffer);
    if (exchanged.stopped) break;
    exchanged.completion.measured = permit == Permit::kMeasured;
    worker.Record(exchanged.completion);
    if (!exchanged.reusable) CloseSocket(slot);
  }
  worker.ConnectionExited();
}

}  // namespace turnpike::loadgen
