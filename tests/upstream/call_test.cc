// upstream::Call over HTTP/1.1 against a hand-written origin on loopback (same event loop): a
// request body far larger than the socket's buffers is written whole (the part the socket takes
// at once, then the rest asynchronously); a response body is read whether it came with its head
// (taken from the connection's buffer, no read), after it, or in chunks; and a keep-alive
// connection goes back to the pool once its body has been read.
#include "upstream/call.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "upstream/origin.h"
#include "upstream/pool.h"

namespace turnpike::upstream {
namespace {
namespace asio = boost::asio;
using asio::ip::tcp;

constexpr auto kGiveUp = std::chrono::seconds(20);  // a hung test fails instead of hanging

// How the origin writes its answer.
enum class Answer {
  kWithHead,   // head and body in one write
  kAfterHead,  // the head, then (after a pause) the body
  kChunked,    // chunked, one chunk per write with pauses between
};

// What the origin saw of the request, and the sum of its body's bytes.
struct Seen {
  size_t requests = 0;
  size_t body_bytes = 0;
  uint64_t body_sum = 0;
};

uint64_t SumOf(std::string_view bytes) {
  uint64_t sum = 0;
  for (unsigned char c : bytes) sum = sum * 31 + c;
  return sum;
}

asio::awaitable<void> Pause(tcp::socket& socket) {
  asio::steady_timer timer(socket.get_executor());
  timer.expires_after(std::chrono::milliseconds(20));
  co_await timer.async_wait(asio::use_awaitable);
}

// Serves requests on one accepted connection until the client closes it: reads the head and the
// Content-Length body, answers `text` the way `answer` says.
asio::awaitable<void> Origin1(tcp::acceptor& acceptor, Answer answer, std::string text,
                              Seen& seen) {
  tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
  std::string buffer;
  for (;;) {
    auto [ec, head_end] = co_await asio::async_read_until(
        socket, asio::dynamic_buffer(buffer), "\r\n\r\n", asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    const std::string head = buffer.substr(0, head_end);
    buffer.erase(0, head_end);
    const size_t at = head.find("Content-Length: ");
    const size_t length = at == std::string::npos ? 0 : std::stoul(head.substr(at + 16));
    if (buffer.size() < length) {
      const size_t have = buffer.size();
      buffer.resize(length);
      co_await asio::async_read(socket, asio::buffer(buffer.data() + have, length - have),
                                asio::use_awaitable);
    }
    ++seen.requests;
    seen.body_bytes = length;
    seen.body_sum = SumOf(std::string_view(buffer).substr(0, length));
    buffer.erase(0, length);

    if (answer == Answer::kChunked) {
      co_await asio::async_write(socket,
                                 asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: "
                                                          "text/plain\r\nTransfer-Encoding: "
                                                          "chunked\r\n\r\n")),
                                 asio::use_awaitable);
      for (size_t i = 0; i < text.size(); i += 3) {
        const std::string piece = text.substr(i, 3);
        const std::string chunk = std::to_string(piece.size()) + "\r\n" + piece + "\r\n";
        co_await Pause(socket);
        co_await asio::async_write(socket, asio::buffer(chunk), asio::use_awaitable);
      }
      co_await asio::async_write(socket, asio::buffer(std::string("0\r\n\r\n")),
                                 asio::use_awaitable);
      continue;
    }
    const std::string response_head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
        "Content-Length: " +
        std::to_string(text.size()) + "\r\n\r\n";
    if (answer == Answer::kWithHead) {
      co_await asio::async_write(socket, asio::buffer(response_head + text), asio::use_awaitable);
    } else {
      co_await asio::async_write(socket, asio::buffer(response_head), asio::use_awaitable);
      co_await Pause(socket);
      co_await asio::async_write(socket, asio::buffer(text), asio::use_awaitable);
    }
  }
}

struct Outcome {
  bool done = false;
  std::string error;
  std::string body;
  std::string content_type;
};

// One call: Start, then ReadAll.
asio::awaitable<void> CallOnce(Pool& pool, const Origin& origin, const CallOptions& options,
                               std::string body, Outcome& out) {
  Call call(pool, origin, options);
  OutgoingRequest request;
  request.target = "/v1/echo";
  request.body = body;
  const Status started = co_await call.Start(request);
  if (!started.ok()) {
    out.error = started.error().message;
    out.done = true;
    co_return;
  }
  out.content_type = std::string(call.content_type());
  Result<std::string> all = co_await call.ReadAll(1 << 20);
  if (all.ok()) {
    out.body = std::move(all.value());
  } else {
    out.error = all.error().message;
  }
  out.done = true;
}

class CallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PoolOptions options;
    options.reap_interval = std::chrono::milliseconds(0);
    pool_ = std::make_unique<Pool>(io_, tls_, options);
    origin_ =
        ParseOrigin("http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/v1",
                    true)
            .value();
  }
  void TearDown() override {
    pool_->Shutdown();
    io_.poll();
    pool_.reset();
  }

  void Serve(Answer answer, std::string text) {
    asio::co_spawn(io_, Origin1(acceptor_, answer, std::move(text), seen_), asio::detached);
  }

  void ExpectReadWholeAndReused(Answer answer, const std::string& text);

  Outcome Run(std::string body) {
    Outcome out;
    asio::co_spawn(io_, CallOnce(*pool_, origin_, options_, std::move(body), out), asio::detached);
    const auto give_up = std::chrono::steady_clock::now() + kGiveUp;
    while (!out.done && std::chrono::steady_clock::now() < give_up) {
      io_.run_one_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(out.done);
    return out;
  }

  asio::io_context io_;
  TlsContexts tls_{"", false};
  tcp::acceptor acceptor_{io_, {asio::ip::make_address("127.0.0.1"), 0}};
  std::unique_ptr<Pool> pool_;
  Origin origin_;
  CallOptions options_;
  Seen seen_;
};

// 48 MiB is past what the socket takes at once (loopback's send buffer tops out at 4 MiB, the
// receiver's at 32 MiB here): the first write is partial and the rest goes asynchronously.
TEST_F(CallTest, ARequestBodyLargerThanTheSocketTakesIsWrittenWhole) {
  Serve(Answer::kWithHead, "ok");
  std::string body(48u << 20, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i * 7 % 26);
  const uint64_t sum = SumOf(body);
  const Outcome out = Run(body);
  EXPECT_EQ(out.error, "");
  EXPECT_EQ(out.body, "ok");
  EXPECT_EQ(seen_.body_bytes, body.size());
  EXPECT_EQ(seen_.body_sum, sum);
}

// Three calls in a row to an origin that answers `text` the way `answer` says: each reads the
// whole body and gives the connection back to the pool, where the next one finds it.
void CallTest::ExpectReadWholeAndReused(Answer answer, const std::string& text) {
  Serve(answer, text);
  for (int i = 0; i < 3; ++i) {
    const Outcome out = Run("{\"n\":" + std::to_string(i) + "}");
    EXPECT_EQ(out.error, "");
    EXPECT_EQ(out.body, text);
    EXPECT_EQ(out.content_type, "text/plain");
    EXPECT_EQ(pool_->probe().idle.value(), 1);  // back in the pool after its body
  }
  EXPECT_EQ(seen_.requests, 3u);
  EXPECT_EQ(pool_->probe().reuses.value(), 2u);
}

TEST_F(CallTest, ABodyThatCameWithItsHeadIsReadAndTheConnectionReused) {
  ExpectReadWholeAndReused(Answer::kWithHead, "hello there");
}

TEST_F(CallTest, ABodyThatCameAfterItsHeadIsReadAndTheConnectionReused) {
  ExpectReadWholeAndReused(Answer::kAfterHead, "later bytes");
}

TEST_F(CallTest, AChunkedBodyInSeveralWritesIsReadWholeAndTheConnectionReused) {
  ExpectReadWholeAndReused(Answer::kChunked, "one two three four");
}

}  // namespace
}  // namespace turnpike::upstream
