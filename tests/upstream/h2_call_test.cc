// upstream::Call over HTTP/2 (an origin with `http2`) against the mock provider served
// in-process (HTTP/2 by prior knowledge beside HTTP/1.1), over real loopback sockets: what the
// doors see (status, headers, body pieces) is the same as over HTTP/1.1; calls share one
// connection up to the stream limit and open another beyond it; a cancelled call resets its
// stream (the mock sees a RST_STREAM and a client that went away) and the connection carries
// the next call.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>

#include "mock_client.h"
#include "upstream/call.h"
#include "upstream/h2_connection.h"
#include "upstream/origin.h"
#include "upstream/pool.h"

namespace turnpike::upstream {
namespace {
namespace net = boost::asio;
using mock::MockOptions;
using mock::testing::RunningMock;

constexpr auto kGiveUp = std::chrono::seconds(20);  // a hung test fails instead of hanging

MockOptions Tokens(int tokens, int first_token_delay_ms = 0, int inter_token_ms = 0) {
  MockOptions options;
  options.tokens = tokens;
  options.first_token_delay = std::chrono::milliseconds(first_token_delay_ms);
  options.inter_token = std::chrono::milliseconds(inter_token_ms);
  return options;
}

class H2CallTest : public ::testing::Test {
 protected:
  void Start(MockOptions options, uint32_t streams_per_connection = 0) {
    mock_ = std::make_unique<RunningMock>(std::move(options));
    PoolOptions pool_options;
    pool_options.reap_interval = std::chrono::milliseconds(0);
    pool_options.h2_max_streams_per_connection = streams_per_connection;
    pool_ = std::make_unique<Pool>(io_, tls_, pool_options);
    Result<Origin> origin =
        ParseOrigin("http://127.0.0.1:" + std::to_string(mock_->port()) + "/v1", true);
    ASSERT_TRUE(origin.ok());
    origin_ = origin.value();
    origin_.http2 = true;
  }
  void TearDown() override {
    if (pool_) pool_->Shutdown();
    io_.poll();
    pool_.reset();
  }

  // Runs the event loop until `done` holds (or kGiveUp passes).
  template <typename Done>
  void RunUntil(Done done) {
    const auto give_up = std::chrono::steady_clock::now() + kGiveUp;
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      io_.run_one_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(done());
  }

  http::Http2Totals MockHttp2() const { return mock_->server().http2_totals(); }

  std::unique_ptr<RunningMock> mock_;
  net::io_context io_;
  TlsContexts tls_{"", false};
  std::unique_ptr<Pool> pool_;
  Origin origin_;
  CallOptions options_;
};

struct Outcome {
  bool done = false;
  bool ok = false;
  unsigned status = 0;
  std::string content_type;
  std::string body;
  bool http2 = false;
};

// One call: Start, then the body piece by piece (ReadSome) or whole (ReadAll).
net::awaitable<void> OneCall(Pool& pool, const Origin& origin, const CallOptions& options,
                             std::string body, bool pieces, Outcome* out) {
  Call call(pool, origin, options);
  OutgoingRequest request;
  request.target = "/v1/chat/completions";
  request.body = body;
  const Status started = co_await call.Start(request);
  out->http2 = call.http2();
  if (started.ok()) {
    out->status = call.status();
    out->content_type = std::string(call.content_type());
    if (pieces) {
      for (;;) {
        Result<std::string_view> piece = co_await call.ReadSome();
        if (!piece.ok() || piece.value().empty()) {
          out->ok = piece.ok();
          break;
        }
        out->body.append(piece.value());
      }
    } else {
      Result<std::string> all = co_await call.ReadAll(1 << 20);
      out->ok = all.ok();
      if (all.ok()) out->body = std::move(all.value());
    }
  }
  out->done = true;
}

TEST_F(H2CallTest, PlainAndStreamedAnswersRideOneConnection) {
  Start(Tokens(3));
  Outcome plain;
  Outcome streamed;
  net::co_spawn(io_,
                OneCall(*pool_, origin_, options_, mock::testing::ChatBody(false), false, &plain),
                net::detached);
  RunUntil([&] { return plain.done; });
  net::co_spawn(io_,
                OneCall(*pool_, origin_, options_, mock::testing::ChatBody(true), true, &streamed),
                net::detached);
  RunUntil([&] { return streamed.done; });
  EXPECT_TRUE(plain.http2);
  EXPECT_TRUE(plain.ok);
  EXPECT_EQ(plain.status, 200u);
  EXPECT_EQ(plain.content_type, "application/json");
  EXPECT_NE(plain.body.find("tok0 tok1 tok2"), std::string::npos) << plain.body;
  EXPECT_TRUE(streamed.ok);
  EXPECT_EQ(streamed.status, 200u);
  EXPECT_EQ(streamed.content_type, "text/event-stream");
  EXPECT_NE(streamed.body.find("data: [DONE]"), std::string::npos) << streamed.body;
  EXPECT_EQ(pool_->probe().connects.value(), 1u);
  EXPECT_EQ(pool_->probe().reuses.value(), 1u);
  EXPECT_EQ(MockHttp2().connections, 1u);
  EXPECT_EQ(MockHttp2().streams, 2u);
  EXPECT_EQ(pool_->ActiveCount(origin_), 0u);  // both slots given back at the end of the body
}

TEST_F(H2CallTest, HundredConcurrentCallsShareOneConnection) {
  Start(Tokens(3, 200));  // every answer waits 200 ms: all 100 are in flight together
  std::vector<Outcome> outcomes(100);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    net::co_spawn(io_,
                  OneCall(*pool_, origin_, options_, mock::testing::ChatBody(i % 2 == 1),
                          i % 2 == 1, &outcomes[i]),
                  net::detached);
  }
  RunUntil([&] {
    for (const Outcome& o : outcomes) {
      if (!o.done) return false;
    }
    return true;
  });
  size_t ok = 0;
  for (const Outcome& o : outcomes) ok += o.ok && o.status == 200 ? 1 : 0;
  EXPECT_EQ(ok, 100u);
  EXPECT_EQ(pool_->probe().connects.value(), 1u);
  EXPECT_EQ(MockHttp2().connections, 1u);
  EXPECT_EQ(MockHttp2().streams, 100u);
  EXPECT_EQ(pool_->h2().ConnectionCount(origin_), 1u);
}

TEST_F(H2CallTest, BeyondTheStreamLimitAnotherConnectionOpens) {
  Start(Tokens(3, 200), /*streams_per_connection=*/2);
  std::vector<Outcome> outcomes(5);
  for (Outcome& o : outcomes) {
    net::co_spawn(io_,
                  OneCall(*pool_, origin_, options_, mock::testing::ChatBody(false), false, &o),
                  net::detached);
  }
  RunUntil([&] {
    for (const Outcome& o : outcomes) {
      if (!o.done) return false;
    }
    return true;
  });
  for (const Outcome& o : outcomes) EXPECT_TRUE(o.ok);
  EXPECT_EQ(pool_->probe().connects.value(), 3u);  // 2 + 2 + 1
  EXPECT_EQ(MockHttp2().connections, 3u);
}

net::awaitable<void> CallThenCancel(Pool& pool, const Origin& origin, const CallOptions& options,
                                    bool* first_piece, bool* done) {
  Call call(pool, origin, options);
  OutgoingRequest request;
  request.target = "/v1/chat/completions";
  const std::string body = mock::testing::ChatBody(true);
  request.body = body;
  const Status started = co_await call.Start(request);
  if (started.ok()) {
    Result<std::string_view> piece = co_await call.ReadSome();
    *first_piece = piece.ok() && !piece.value().empty();
    call.Cancel();  // the client went away
  }
  *done = true;
}

TEST_F(H2CallTest, ACancelledCallResetsItsStreamAndTheConnectionStays) {
  Start(Tokens(1000, 0, 20));  // a 20 s stream
  bool first_piece = false;
  bool done = false;
  net::co_spawn(io_, CallThenCancel(*pool_, origin_, options_, &first_piece, &done), net::detached);
  RunUntil([&] { return done; });
  EXPECT_TRUE(first_piece);
  RunUntil([&] { return MockHttp2().client_resets == 1; });
  RunUntil([&] {
    return mock_->service()
               .stats()
               .Read()[static_cast<size_t>(mock::Counter::kClientDisconnects)] == 1;
  });
  EXPECT_EQ(mock_->service().stats().Read()[static_cast<size_t>(mock::Counter::kStreamsCompleted)],
            0u);
  Outcome next;
  net::co_spawn(io_,
                OneCall(*pool_, origin_, options_,
                        mock::testing::ChatBody(false, false, R"("max_tokens":2)"), false, &next),
                net::detached);
  RunUntil([&] { return next.done; });
  EXPECT_TRUE(next.ok);
  EXPECT_EQ(pool_->probe().connects.value(), 1u);
  EXPECT_EQ(MockHttp2().connections, 1u);
}

}  // namespace
}  // namespace turnpike::upstream
