// The HTTP/2 server session without a socket: an nghttp2 client session (or hand-made frames)
// feeds Http2Connection::Receive, and its TakeOutput goes back to the client, with the real
// stream path (MakeHttp2Connection → ServeHttp2Stream → Http2Exchange) and a scripted handler.
// Checked: a GET and a POST answered, a streamed body, many streams on one connection, a client
// RST_STREAM firing the exchange's on_gone, the body and header limits, and malformed or hostile
// input (bad frames, stream-id misuse, CONTINUATION, PING and SETTINGS floods, rapid reset)
// ending in GOAWAY without a crash.
#include "http/http2_connection.h"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "http/exchange.h"
#include "http/handler.h"
#include "http/http2_session.h"
#include "http/server.h"

namespace turnpike::http {
namespace {
namespace net = boost::asio;

class ScriptHandler : public Handler {
 public:
  net::awaitable<void> Handle(Exchange& exchange) override {
    const std::string_view path = exchange.path();
    if (path == "/get") {
      co_await exchange.Respond(200, "text/plain",
                                "hello " + std::string(exchange.request()["x-name"]));
    } else if (path == "/post") {
      co_await exchange.Respond(201, "text/plain", "got:" + exchange.request().body());
    } else if (path == "/stream") {
      co_await exchange.StartStream(200, "text/event-stream");
      co_await exchange.Write("data: 1\n\n");
      co_await exchange.Write("data: 2\n\n");
      co_await exchange.EndStream();
    } else if (path == "/wait") {
      net::steady_timer timer(exchange_executor_);
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
      if (exchange.client_gone()) ++saw_client_gone;
    }
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return "{\"error\":\"" + error.message + "\"}";
  }
  net::any_io_executor exchange_executor_;
  int gone = 0;
  int saw_client_gone = 0;
};

struct Response {
  int status = 0;
  std::string body;
  std::map<std::string, uint8_t> field_flags;  // each response field's HPACK flags
  bool closed = false;
  uint32_t error_code = 0;
};

// The client side: an nghttp2 client session, or raw bytes, against the server under test.
class Http2Harness {
 public:
  Http2Harness() {
    options_.max_body_bytes = 1024;
    options_.max_header_bytes = 1024;
    handler_.exchange_executor_ = io_.get_executor();
    server_ = MakeHttp2Connection(ctx_, io_.get_executor(), "127.0.0.1:1");
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, &OnHeader);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &OnData);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, &OnClose);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &OnFrame);
    nghttp2_session_client_new(&client_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(client_, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~Http2Harness() {
    server_->ConnectionLost();
    io_.run();
    nghttp2_session_del(client_);
  }

  int32_t Request(const std::string& method, const std::string& path, const std::string& body,
                  std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> fields{
        {":method", method}, {":scheme", "http"}, {":authority", "test"}, {":path", path}};
    for (auto& f : extra) fields.push_back(f);
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : fields) {
      nva.push_back({reinterpret_cast<uint8_t*>(n.data()), reinterpret_cast<uint8_t*>(v.data()),
                     n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
    }
    bodies_.push_back(body);
    nghttp2_data_provider provider{};
    provider.source.ptr = &bodies_.back();
    provider.read_callback = &ReadBody;
    return nghttp2_submit_request(client_, nullptr, nva.data(), nva.size(),
                                  body.empty() ? nullptr : &provider, nullptr);
  }

  // Moves bytes both ways and runs the handlers until nothing moves.
  void Pump() {
    for (int round = 0; round < 1000; ++round) {
      bool moved = false;
      for (;;) {
        const uint8_t* data = nullptr;
        const ssize_t n = nghttp2_session_mem_send(client_, &data);
        if (n <= 0) break;
        Feed(std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(n)));
        moved = true;
      }
      moved |= io_.poll() > 0;
      io_.restart();
      std::string out;
      server_->TakeOutput(out);
      if (!out.empty()) {
        moved = true;
        output_ += out;
        nghttp2_session_mem_recv(client_, reinterpret_cast<const uint8_t*>(out.data()), out.size());
      }
      if (!moved) return;
    }
  }
  void Feed(std::string_view bytes) {
    if (!refused_) refused_ = !server_->Receive(bytes);
  }
  // Raw bytes to the server, then its output (not parsed by the client session).
  std::string FeedRaw(std::string_view bytes) {
    Feed(bytes);
    io_.poll();
    io_.restart();
    std::string out;
    server_->TakeOutput(out);
    output_ += out;
    return out;
  }

  // The error code of the GOAWAY frames the server wrote, in order.
  std::vector<uint32_t> Goaways() const {
    std::vector<uint32_t> codes;
    size_t at = 0;
    while (at + 9 <= output_.size()) {
      const auto* p = reinterpret_cast<const uint8_t*>(output_.data() + at);
      const size_t length = (size_t{p[0]} << 16) | (size_t{p[1]} << 8) | p[2];
      if (p[3] == NGHTTP2_GOAWAY && at + 9 + 8 <= output_.size()) {
        const uint8_t* e = p + 9 + 4;
        codes.push_back((uint32_t{e[0]} << 24) | (uint32_t{e[1]} << 16) | (uint32_t{e[2]} << 8) |
                        e[3]);
      }
      at += 9 + length;
    }
    return codes;
  }

  ServerOptions options_;
  ScriptHandler handler_;
  std::atomic<bool> draining_{false};
  ExchangeCounts exchanges_;
  Http2Counters counters_;
  net::io_context io_;
  SessionContext ctx_{options_, handler_, draining_, exchanges_, counters_};
  std::shared_ptr<Http2Connection> server_;
  nghttp2_session* client_ = nullptr;
  std::map<int32_t, Response> responses_;
  std::vector<uint32_t> client_goaways_;
  std::string output_;
  bool refused_ = false;

 private:
  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                          nghttp2_data_source* source, void*) {
    auto* body = static_cast<std::string*>(source->ptr);
    const size_t n = std::min(length, body->size());
    std::copy_n(body->data(), n, buf);
    body->erase(0, n);
    if (body->empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t flags,
                      void* self) {
    auto* h = static_cast<Http2Harness*>(self);
    h->responses_[frame->hd.stream_id]
        .field_flags[std::string(reinterpret_cast<const char*>(name), namelen)] = flags;
    if (std::string_view(reinterpret_cast<const char*>(name), namelen) == ":status") {
      h->responses_[frame->hd.stream_id].status =
          std::stoi(std::string(reinterpret_cast<const char*>(value), valuelen));
    }
    return 0;
  }
  static int OnData(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                    void* self) {
    static_cast<Http2Harness*>(self)->responses_[id].body.append(
        reinterpret_cast<const char*>(data), len);
    return 0;
  }
  static int OnClose(nghttp2_session*, int32_t id, uint32_t code, void* self) {
    Response& r = static_cast<Http2Harness*>(self)->responses_[id];
    r.closed = true;
    r.error_code = code;
    return 0;
  }
  static int OnFrame(nghttp2_session*, const nghttp2_frame* frame, void* self) {
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      static_cast<Http2Harness*>(self)->client_goaways_.push_back(frame->goaway.error_code);
    }
    return 0;
  }
  std::list<std::string> bodies_;
};

// A frame: 9-byte header, then the payload.
std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload) {
  std::string f;
  f.push_back(static_cast<char>((payload.size() >> 16) & 0xff));
  f.push_back(static_cast<char>((payload.size() >> 8) & 0xff));
  f.push_back(static_cast<char>(payload.size() & 0xff));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  for (int shift = 24; shift >= 0; shift -= 8) {
    f.push_back(static_cast<char>((stream >> shift) & 0xff));
  }
  f.append(payload);
  return f;
}

// A literal header field without indexing, new name (RFC 7541 6.2.2), short strings only.
std::string Literal(std::string_view name, std::string_view value) {
  std::string b;
  b.push_back(0x00);
  b.push_back(static_cast<char>(name.size()));
  b.append(name);
  b.push_back(static_cast<char>(value.size()));
  b.append(value);
  return b;
}

std::string Preface() { return std::string(kHttp2Preface) + Frame(NGHTTP2_SETTINGS, 0, 0, ""); }

// The request pseudo-fields of a GET / as HPACK static-table indexes (:method GET, :scheme
// http, :path /) and a literal :authority.
std::string GetBlock() { return std::string("\x82\x86\x84", 3) + Literal(":authority", "t"); }

TEST(Http2ConnectionTest, AnswersGetAndPost) {
  Http2Harness h;
  const int32_t get = h.Request("GET", "/get", "", {{"x-name", "h2"}});
  const int32_t post = h.Request("POST", "/post", "ping");
  h.Pump();
  EXPECT_EQ(h.responses_[get].status, 200);
  EXPECT_EQ(h.responses_[get].body, "hello h2");
  EXPECT_TRUE(h.responses_[get].closed);
  EXPECT_EQ(h.responses_[post].status, 201);
  EXPECT_EQ(h.responses_[post].body, "got:ping");
  EXPECT_EQ(h.counters_.streams_opened.load(), 2u);
  EXPECT_EQ(h.exchanges_.in_flight.load(), 0);
}

// A request id is new in every response: it is sent never indexed (it would only churn the
// client's HPACK table); the content type, which repeats, may be indexed.
TEST(Http2ConnectionTest, TheRequestIdIsNeverIndexed) {
  Http2Harness h;
  const int32_t get = h.Request("GET", "/get", "", {{"x-name", "h2"}});
  h.Pump();
  ASSERT_EQ(h.responses_[get].status, 200);
  const auto& flags = h.responses_[get].field_flags;
  ASSERT_TRUE(flags.count("x-request-id"));
  EXPECT_TRUE(flags.at("x-request-id") & NGHTTP2_NV_FLAG_NO_INDEX);
  ASSERT_TRUE(flags.count("content-type"));
  EXPECT_FALSE(flags.at("content-type") & NGHTTP2_NV_FLAG_NO_INDEX);
}

TEST(Http2ConnectionTest, StreamsABody) {
  Http2Harness h;
  const int32_t id = h.Request("GET", "/stream", "");
  h.Pump();
  EXPECT_EQ(h.responses_[id].status, 200);
  EXPECT_EQ(h.responses_[id].body, "data: 1\n\ndata: 2\n\n");
  EXPECT_EQ(h.responses_[id].error_code, static_cast<uint32_t>(NGHTTP2_NO_ERROR));
}

TEST(Http2ConnectionTest, ManyStreamsOnOneConnection) {
  Http2Harness h;
  constexpr int kStreams = 100;
  std::vector<int32_t> ids;
  for (int i = 0; i < kStreams; ++i) {
    ids.push_back(h.Request("GET", "/get", "", {{"x-name", std::to_string(i)}}));
  }
  h.Pump();
  int answered = 0;
  for (int i = 0; i < kStreams; ++i) {
    if (h.responses_[ids[i]].body == "hello " + std::to_string(i)) ++answered;
  }
  EXPECT_EQ(answered, kStreams);
  EXPECT_EQ(h.counters_.streams_opened.load(), static_cast<uint64_t>(kStreams));
}

TEST(Http2ConnectionTest, ClientResetFiresOnGone) {
  Http2Harness h;
  const int32_t id = h.Request("GET", "/wait", "");
  h.Pump();
  EXPECT_EQ(h.handler_.gone, 0);
  EXPECT_EQ(h.exchanges_.in_flight.load(), 1);
  nghttp2_submit_rst_stream(h.client_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  h.Pump();
  EXPECT_EQ(h.handler_.gone, 1);
  EXPECT_EQ(h.handler_.saw_client_gone, 1);
  EXPECT_EQ(h.exchanges_.in_flight.load(), 0);
  EXPECT_EQ(h.exchanges_.started.load(), 1u);  // begun, counted once whatever its end
  EXPECT_EQ(h.counters_.client_resets.load(), 1u);
  EXPECT_TRUE(h.client_goaways_.empty());
}

TEST(Http2ConnectionTest, ConnectionLossFiresOnGone) {
  Http2Harness h;
  h.Request("GET", "/wait", "");
  h.Request("GET", "/wait", "");
  h.Pump();
  h.server_->ConnectionLost();
  h.io_.run();
  EXPECT_EQ(h.handler_.gone, 2);
  EXPECT_EQ(h.exchanges_.in_flight.load(), 0);
}

TEST(Http2ConnectionTest, BodyOverTheLimitIs413) {
  Http2Harness h;
  const int32_t id = h.Request("POST", "/post", std::string(4096, 'x'));
  const int32_t ok = h.Request("GET", "/get", "");
  h.Pump();
  EXPECT_EQ(h.responses_[id].status, 413);
  EXPECT_EQ(h.responses_[id].body, "{\"error\":\"request body too large\"}");
  EXPECT_EQ(h.responses_[ok].status, 200);  // the connection carries on
}

TEST(Http2ConnectionTest, HeadersOverTheLimitAre431) {
  Http2Harness h;
  const int32_t id = h.Request("GET", "/get", "", {{"x-big", std::string(1500, 'a')}});
  h.Pump();
  EXPECT_EQ(h.responses_[id].status, 431);
}

TEST(Http2ConnectionTest, BadFrameEndsWithGoaway) {
  Http2Harness h;
  // SETTINGS whose length is not a multiple of 6: FRAME_SIZE_ERROR.
  h.FeedRaw(Preface() + Frame(NGHTTP2_SETTINGS, 0, 0, "abcde"));
  ASSERT_FALSE(h.Goaways().empty());
  EXPECT_EQ(h.Goaways().back(), static_cast<uint32_t>(NGHTTP2_FRAME_SIZE_ERROR));
  EXPECT_FALSE(h.server_->Alive());
}

TEST(Http2ConnectionTest, BadPrefaceEndsWithGoaway) {
  Http2Harness h;
  h.FeedRaw("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\ngarbage");
  EXPECT_TRUE(h.refused_);
  EXPECT_FALSE(h.server_->Alive());
}

TEST(Http2ConnectionTest, EvenStreamIdEndsWithGoaway) {
  Http2Harness h;
  // A client may only open odd stream ids.
  h.FeedRaw(Preface() + Frame(NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM,
                              2, GetBlock()));
  ASSERT_FALSE(h.Goaways().empty());
  EXPECT_EQ(h.Goaways().back(), static_cast<uint32_t>(NGHTTP2_PROTOCOL_ERROR));
  EXPECT_EQ(h.counters_.streams_opened.load(), 0u);
}

// A HEADERS frame on a stream id below the highest seen: nghttp2 ignores the header block (it
// cannot tell it from a late trailer), so the stream is not opened and the connection lives.
TEST(Http2ConnectionTest, DecreasingStreamIdIsIgnored) {
  Http2Harness h;
  const uint8_t kFlags = NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM;
  h.FeedRaw(Preface() + Frame(NGHTTP2_HEADERS, kFlags, 5, GetBlock()) +
            Frame(NGHTTP2_HEADERS, kFlags, 3, GetBlock()));
  EXPECT_EQ(h.counters_.streams_opened.load(), 1u);
  EXPECT_TRUE(h.Goaways().empty());
  EXPECT_TRUE(h.server_->Alive());
}

TEST(Http2ConnectionTest, ContinuationFloodEndsWithGoaway) {
  Http2Harness h;
  std::string bytes = Preface() + Frame(NGHTTP2_HEADERS, 0, 1, GetBlock());
  constexpr int kFrames = 100;
  for (int i = 0; i < kFrames; ++i) {
    bytes += Frame(NGHTTP2_CONTINUATION, 0, 1, Literal("x-a", "b"));
  }
  h.FeedRaw(bytes);
  EXPECT_FALSE(h.Goaways().empty());
  EXPECT_FALSE(h.server_->Alive());
}

TEST(Http2ConnectionTest, PingFloodEndsWithGoaway) {
  Http2Harness h;
  std::string bytes = Preface();
  constexpr size_t kPings = 2 * Http2Connection::kMaxOutboundAcks;
  for (size_t i = 0; i < kPings; ++i) bytes += Frame(NGHTTP2_PING, 0, 0, "12345678");
  h.FeedRaw(bytes);  // the client reads none of the acks meanwhile
  EXPECT_FALSE(h.Goaways().empty());
  EXPECT_FALSE(h.server_->Alive());
}

TEST(Http2ConnectionTest, SettingsFloodEndsWithGoaway) {
  Http2Harness h;
  std::string entries;
  for (size_t i = 0; i < Http2Connection::kMaxSettingsEntries + 1; ++i) {
    entries += std::string("\x00\x04\x00\x01\x00\x00", 6);  // INITIAL_WINDOW_SIZE 65536
  }
  h.FeedRaw(Preface() + Frame(NGHTTP2_SETTINGS, 0, 0, entries));
  EXPECT_FALSE(h.Goaways().empty());
  EXPECT_FALSE(h.server_->Alive());
}

TEST(Http2ConnectionTest, RapidResetEndsWithEnhanceYourCalm) {
  Http2Harness h;
  constexpr size_t kResets = Http2Connection::kMaxClientResets + 10;
  for (size_t i = 0; i < kResets; ++i) {
    const int32_t id = h.Request("GET", "/wait", "");
    h.Pump();  // the HEADERS go out first (a reset before them would only drop the request)
    nghttp2_submit_rst_stream(h.client_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    h.Pump();
  }
  ASSERT_FALSE(h.client_goaways_.empty());
  EXPECT_EQ(h.client_goaways_.back(), static_cast<uint32_t>(NGHTTP2_ENHANCE_YOUR_CALM));
  EXPECT_EQ(h.counters_.goaways_sent.load(), 1u);
  EXPECT_EQ(h.exchanges_.in_flight.load(), 0);
}

TEST(Http2ConnectionTest, DrainingSendsGoawayAfterTheStream) {
  Http2Harness h;
  h.draining_ = true;
  const int32_t id = h.Request("GET", "/get", "");
  h.Pump();
  EXPECT_EQ(h.responses_[id].status, 200);
  ASSERT_EQ(h.client_goaways_.size(), 1u);
  EXPECT_EQ(h.client_goaways_.back(), static_cast<uint32_t>(NGHTTP2_NO_ERROR));
  EXPECT_FALSE(h.server_->Alive());
}

TEST(Http2ConnectionTest, ShutdownWhenIdleSendsGoawayAndEnds) {
  Http2Harness h;
  const int32_t id = h.Request("GET", "/get", "");
  h.Pump();
  EXPECT_EQ(h.responses_[id].status, 200);
  EXPECT_EQ(h.counters_.live.size(), 1u);
  h.server_->Shutdown();  // what a drain does to every live connection (Worker::GoAway)
  h.Pump();
  ASSERT_EQ(h.client_goaways_.size(), 1u);
  EXPECT_EQ(h.client_goaways_.back(), static_cast<uint32_t>(NGHTTP2_NO_ERROR));
  EXPECT_FALSE(h.server_->Alive());
}

}  // namespace
}  // namespace turnpike::http
