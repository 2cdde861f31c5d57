// Http1Exchange's gathered write (Exchange::WritePieces): pieces that do not lie one after the
// other go out as one chunk of their joined size, in order, and more than kMaxPieces are joined
// first; read off the wire by a raw socket, so the chunk framing itself is what is checked.
#include "http/http1_exchange.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <string>
#include <vector>

#include "http/server.h"
#include "running_server.h"

namespace turnpike::http {
namespace {
namespace net = boost::asio;

// Streams: three separate strings as one WritePieces, one Write, six pieces (past kMaxPieces),
// then the end.
class PiecesHandler : public Handler {
 public:
  net::awaitable<void> Handle(Exchange& exchange) override {
    const std::string a = "ab", b = "cd", c = "ef";
    co_await exchange.StartStream(200, "text/plain");
    const std::vector<std::string_view> three{a, b, c};
    co_await exchange.WritePieces(three);
    co_await exchange.Write("gh");
    const std::vector<std::string_view> six{"1", "2", "3", "4", "5", "6"};
    static_assert(Exchange::kMaxPieces < 6);
    co_await exchange.WritePieces(six);
    const std::vector<std::string_view> empty{"", ""};
    co_await exchange.WritePieces(empty);  // nothing: no chunk (an empty one would end the body)
    co_await exchange.EndStream();
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return error.message;
  }
};

// The response's bytes after its head, up to and including the last chunk.
std::string ChunkedBody(uint16_t port) {
  net::io_context io;
  net::ip::tcp::socket socket(io);
  net::ip::tcp::resolver resolver(io);
  net::connect(socket, resolver.resolve("127.0.0.1", std::to_string(port)));
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  net::write(socket, net::buffer(request));
  std::string all;
  boost::system::error_code ec;
  char buffer[4096];
  while (all.find("\r\n0\r\n\r\n") == std::string::npos) {
    const size_t n = socket.read_some(net::buffer(buffer), ec);
    if (ec) break;
    all.append(buffer, n);
  }
  const size_t head_end = all.find("\r\n\r\n");
  return head_end == std::string::npos ? "" : all.substr(head_end + 4);
}

TEST(Http1ExchangeTest, GatheredPiecesGoOutAsOneChunkInOrder) {
  testing::RunningServer server(
      [](int, net::io_context&) { return std::make_unique<PiecesHandler>(); });
  EXPECT_EQ(ChunkedBody(server.port()), "6\r\nabcdef\r\n2\r\ngh\r\n6\r\n123456\r\n0\r\n\r\n");
}

}  // namespace
}  // namespace turnpike::http
