// The upstream HTTP/2 client codec (H2Session) without a socket, against the gateway's own
// inbound HTTP/2 server codec (http/http2_connection.h) with a scripted handler: frames go
// client -> server -> client through Receive/TakeOutput. Checked: a request with a body and its
// answer, a streamed answer, many streams on one connection, the stream limit, flow control (a
// stream that is not read stops at its window and resumes when consumed), RST_STREAM on cancel
// (the server's handler sees the client gone), GOAWAY (the stream below the last id finishes,
// the one above is refused and no new stream is taken) and a lost connection.
#include "upstream/h2_session.h"

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <vector>

#include "http/exchange.h"
#include "http/handler.h"
#include "http/http2_connection.h"
#include "http/http2_session.h"
#include "http/server.h"
#include "upstream/call.h"

namespace turnpike::upstream {
namespace {
namespace net = boost::asio;

constexpr size_t kBigBody = 40 * 16 * 1024;  // 40 chunks of 16 KiB: more than a stream window

class ScriptHandler : public http::Handler {
 public:
  net::awaitable<void> Handle(http::Exchange& exchange) override {
    const std::string_view path = exchange.path();
    if (path == "/echo") {
      co_await exchange.Respond(
          201, "application/json",
          "got:" + exchange.request().body() + ":" + std::string(exchange.request()["x-api-key"]));
    } else if (path == "/stream") {
      co_await exchange.StartStream(200, "text/event-stream");
      co_await exchange.Write("data: 1\n\n");
      co_await exchange.Write("data: 2\n\n");
      co_await exchange.EndStream();
    } else if (path == "/big") {
      co_await exchange.StartStream(200, "application/octet-stream");
      const std::string chunk(16 * 1024, 'x');
      for (size_t sent = 0; sent < kBigBody; sent += chunk.size()) {
        const bool ok = co_await exchange.Write(chunk);
        if (!ok) co_return;
      }
      co_await exchange.EndStream();
    } else if (path == "/wait") {
      net::steady_timer timer(executor);
      timer.expires_at(net::steady_timer::time_point::max());
      exchange.WatchClient([this, &timer] {
        ++gone;
        timer.cancel();
      });
      if (!exchange.client_gone()) {
        auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        (void)ec;
      }
      exchange.StopWatching();
      if (!exchange.client_gone()) co_await exchange.Respond(200, "text/plain", "waited");
    }
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return error.message;
  }
  net::any_io_executor executor;
  int gone = 0;
};

class H2SessionTest : public ::testing::Test {
 protected:
  H2SessionTest() {
    handler_.executor = io_.get_executor();
    options_.http2_max_concurrent_streams = 8;
    server_ = http::MakeHttp2Connection(ctx_, io_.get_executor(), "127.0.0.1:1");
  }
  ~H2SessionTest() override {
    server_->ConnectionLost();
    client_.ConnectionLost();
    io_.run();
  }

  std::shared_ptr<H2Stream> Submit(std::string_view method, std::string_view path,
                                   std::string_view body = {}) {
    OutgoingRequest request;
    request.method = method;
    request.target = path;
    request.body = body;
    request.extra_headers = "X-Api-Key: k1\r\nConnection: close";
    return client_.Submit(request, "http", "upstream.test");
  }

  // Moves bytes both ways and runs the handlers until nothing moves.
  void Pump() {
    for (int round = 0; round < 10'000; ++round) {
      bool moved = false;
      std::string out;
      client_.TakeOutput(out);
      if (!out.empty()) {
        moved = true;
        server_->Receive(out);
      }
      moved |= io_.poll() > 0;
      io_.restart();
      std::string back;
      server_->TakeOutput(back);
      if (!back.empty()) {
        moved = true;
        client_.Receive(back);
      }
      if (!moved) return;
    }
  }

  http::ServerOptions options_;
  ScriptHandler handler_;
  std::atomic<bool> draining_{false};
  http::ExchangeCounts exchanges_;
  http::Http2Counters counters_;
  net::io_context io_;
  http::SessionContext ctx_{options_, handler_, draining_, exchanges_, counters_};
  std::shared_ptr<http::Http2Connection> server_;
  H2Session client_{io_.get_executor(), 0};
};

TEST_F(H2SessionTest, RequestWithBodyAndHeadersIsAnswered) {
  auto stream = Submit("POST", "/echo", "{\"a\":1}");
  ASSERT_NE(stream, nullptr);
  Pump();
  EXPECT_TRUE(stream->sent);
  EXPECT_TRUE(stream->head);
  EXPECT_EQ(stream->status, 201u);
  EXPECT_EQ(stream->data, "got:{\"a\":1}:k1");  // the deployment's header, lower-cased
  EXPECT_TRUE(stream->eof);
  EXPECT_TRUE(stream->closed);
  EXPECT_EQ(stream->error, 0u);
  bool has_type = false;
  for (const auto& [name, value] : stream->headers) {
    if (name == "content-type" && value == "application/json") has_type = true;
  }
  EXPECT_TRUE(has_type);
  EXPECT_EQ(client_.open_streams(), 0u);
}

TEST_F(H2SessionTest, StreamedAnswerArrivesWhole) {
  auto stream = Submit("POST", "/stream", "{}");
  Pump();
  EXPECT_EQ(stream->status, 200u);
  EXPECT_EQ(stream->data, "data: 1\n\ndata: 2\n\n");
  EXPECT_TRUE(stream->eof);
}

TEST_F(H2SessionTest, ManyStreamsShareOneConnectionUpToTheServersLimit) {
  // Before the server's SETTINGS the client assumes the common floor.
  EXPECT_EQ(client_.max_streams(), H2Session::kAssumedMaxStreams);
  std::vector<std::shared_ptr<H2Stream>> waiting;
  waiting.push_back(Submit("POST", "/wait", "{}"));
  Pump();
  EXPECT_EQ(client_.max_streams(), 8u);  // SETTINGS_MAX_CONCURRENT_STREAMS arrived
  for (int i = 1; i < 8; ++i) waiting.push_back(Submit("POST", "/wait", "{}"));
  Pump();
  EXPECT_EQ(client_.open_streams(), 8u);
  EXPECT_FALSE(client_.HasRoom());
  EXPECT_EQ(counters_.connections.load(), 1u);
  EXPECT_EQ(counters_.streams_opened.load(), 8u);
  for (auto& stream : waiting) client_.Cancel(*stream);
  Pump();
  EXPECT_TRUE(client_.HasRoom());
  std::vector<std::shared_ptr<H2Stream>> done;
  for (int i = 0; i < 8; ++i) done.push_back(Submit("POST", "/echo", std::to_string(i)));
  Pump();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(done[i]->data, "got:" + std::to_string(i) + ":k1");
  }
  EXPECT_EQ(counters_.streams_opened.load(), 16u);
}

TEST_F(H2SessionTest, AStreamNotReadStopsAtItsWindowAndResumesWhenConsumed) {
  auto stream = Submit("POST", "/big", "{}");
  Pump();
  EXPECT_TRUE(stream->head);
  EXPECT_EQ(stream->data.size(), H2Session::kStreamWindow);
  EXPECT_FALSE(stream->eof);
  // Another stream still flows meanwhile.
  auto other = Submit("POST", "/echo", "x");
  Pump();
  EXPECT_TRUE(other->eof);
  size_t total = 0;
  for (int round = 0; round < 100 && !stream->eof; ++round) {
    const size_t n = stream->data.size();
    total += n;
    stream->data.clear();
    client_.Consume(*stream, n);
    Pump();
  }
  total += stream->data.size();
  EXPECT_TRUE(stream->eof);
  EXPECT_EQ(total, kBigBody);
}

TEST_F(H2SessionTest, CancelSendsRstStreamAndTheServerSeesTheClientGone) {
  auto stream = Submit("POST", "/wait", "{}");
  Pump();
  EXPECT_TRUE(stream->sent);
  EXPECT_FALSE(stream->head);
  client_.Cancel(*stream);
  Pump();
  EXPECT_TRUE(stream->cancelled);
  EXPECT_TRUE(stream->closed);
  EXPECT_EQ(counters_.client_resets.load(), 1u);
  EXPECT_EQ(handler_.gone, 1);
  EXPECT_EQ(client_.open_streams(), 0u);
  // Cancelling again, or an ended stream, sends nothing more.
  client_.Cancel(*stream);
  Pump();
  EXPECT_EQ(counters_.client_resets.load(), 1u);
}

TEST_F(H2SessionTest, GoawayFinishesStreamsBelowTheLastIdAndRefusesTheRest) {
  auto first = Submit("POST", "/stream", "{}");
  auto below = Submit("POST", "/wait", "{}");
  Pump();
  ASSERT_TRUE(first->eof);
  auto above = Submit("POST", "/echo", "late");  // queued, not yet sent
  server_->Shutdown();                           // GOAWAY, last stream id = below's
  Pump();
  EXPECT_TRUE(above->refused);
  EXPECT_TRUE(above->closed);
  EXPECT_FALSE(above->head);
  EXPECT_TRUE(client_.going_away());
  EXPECT_FALSE(client_.HasRoom());
  EXPECT_EQ(Submit("POST", "/echo", "no"), nullptr);
  EXPECT_FALSE(below->closed);  // still served
  EXPECT_FALSE(below->refused);
}

TEST_F(H2SessionTest, ALostConnectionEndsEveryOpenStream) {
  auto sent = Submit("POST", "/wait", "{}");
  Pump();
  auto unsent = Submit("POST", "/echo", "x");
  client_.ConnectionLost();
  EXPECT_TRUE(sent->lost);
  EXPECT_TRUE(sent->sent);
  EXPECT_TRUE(unsent->lost);
  EXPECT_FALSE(unsent->sent);  // safe to send again elsewhere
  EXPECT_EQ(client_.open_streams(), 0u);
  EXPECT_FALSE(client_.HasRoom());
  std::string out;
  EXPECT_FALSE(client_.TakeOutput(out));
}

}  // namespace
}  // namespace turnpike::upstream
