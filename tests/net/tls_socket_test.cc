// net::TlsSocket on loopback, both ends in one io_context: a handshake and bytes both ways
// (several buffers gathered; 4 MiB past the sockets' buffers, so writes block and are
// retried; 4 MiB each way at once, a read and a write pending on each socket); records that
// read-ahead already took from the kernel are read without waiting on the socket; a
// completion at the first try is not inline; the peer's close_notify is eof, an end of stream
// without one is stream_truncated and ends TLS, a reset is the socket's error; a cancelled
// wait is operation_aborted; a client checks the server's name.
#include "net/tls_socket.h"

#include <gtest/gtest.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <csignal>
#include <memory>
#include <string>

namespace turnpike::net {
namespace {
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

std::string Data(const char* name) { return std::string(TESTDATA_DIR) + "/" + name; }

// A server and a client TlsSocket connected over loopback (not yet handshaken).
struct Pair {
  Pair() {
    std::signal(SIGPIPE, SIG_IGN);  // a socket BIO writes with write(2)
    server_context.use_certificate_chain_file(Data("a.pem"));
    server_context.use_private_key_file(Data("a.key"), ssl::context::pem);
    client_context.set_verify_mode(ssl::verify_none);
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    client = std::make_unique<TlsSocket>(io.get_executor(), client_context);
    client->next_layer().connect(acceptor.local_endpoint());
    server = std::make_unique<TlsSocket>(acceptor.accept(), server_context);
  }
  // Both handshakes, run to completion; false if either failed.
  bool Handshake() {
    error_code server_ec = asio::error::would_block, client_ec = asio::error::would_block;
    server->async_handshake(ssl::stream_base::server, [&](error_code ec) { server_ec = ec; });
    client->async_handshake(ssl::stream_base::client, [&](error_code ec) { client_ec = ec; });
    io.run();
    io.restart();
    return !server_ec && !client_ec;
  }

  asio::io_context io;
  ssl::context server_context{ssl::context::tls_server};
  ssl::context client_context{ssl::context::tls_client};
  std::unique_ptr<TlsSocket> client;
  std::unique_ptr<TlsSocket> server;
};

TEST(TlsSocketTest, GatheredWritesAndBytesPastTheSocketBuffersArriveWhole) {
  Pair p;
  ASSERT_TRUE(p.Handshake());
  // Four buffers (one empty, with no data pointer), one call: gathered into one record.
  const std::string head = "HEAD ", body = "body", tail = "!";
  const std::array<asio::const_buffer, 4> four{asio::buffer(head), asio::buffer(body),
                                               asio::const_buffer(), asio::buffer(tail)};
  error_code ec;
  EXPECT_EQ(p.client->write_some(four, ec), 10u);
  EXPECT_FALSE(ec);
  std::string got(64, '\0');
  size_t n = 0;
  p.server->async_read_some(asio::buffer(got), [&](error_code e, size_t k) {
    ec = e;
    n = k;
  });
  p.io.run();
  p.io.restart();
  EXPECT_FALSE(ec);
  EXPECT_EQ(got.substr(0, n), "HEAD body!");

  // 4 MiB of a pattern, written while the other end reads: both sides wait and retry.
  std::string big(4 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i * 7 % 26);
  std::string received(big.size(), '\0');
  error_code write_ec, read_ec;
  asio::async_write(*p.client, asio::buffer(big), [&](error_code e, size_t) { write_ec = e; });
  asio::async_read(*p.server, asio::buffer(received), [&](error_code e, size_t) { read_ec = e; });
  p.io.run();
  EXPECT_FALSE(write_ec);
  EXPECT_FALSE(read_ec);
  EXPECT_TRUE(received == big);
}

// Both ends write 4 MiB while they read the other's 4 MiB: on each socket a read and a write
// are pending at once (as HTTP/2's read and write loops have them), each waiting for its own
// readiness, and neither's bytes are lost or reordered.
TEST(TlsSocketTest, AReadAndAWritePendingAtOnceOnEachEnd) {
  Pair p;
  ASSERT_TRUE(p.Handshake());
  std::string to_server(4 << 20, '\0'), to_client(4 << 20, '\0');
  for (size_t i = 0; i < to_server.size(); ++i) {
    to_server[i] = static_cast<char>('a' + i * 7 % 26);
    to_client[i] = static_cast<char>('A' + i * 11 % 26);
  }
  std::string at_server(to_server.size(), '\0'), at_client(to_client.size(), '\0');
  error_code ec[4];
  asio::async_write(*p.client, asio::buffer(to_server), [&](error_code e, size_t) { ec[0] = e; });
  asio::async_write(*p.server, asio::buffer(to_client), [&](error_code e, size_t) { ec[1] = e; });
  asio::async_read(*p.server, asio::buffer(at_server), [&](error_code e, size_t) { ec[2] = e; });
  asio::async_read(*p.client, asio::buffer(at_client), [&](error_code e, size_t) { ec[3] = e; });
  p.io.run();
  for (const error_code& e : ec) EXPECT_FALSE(e) << e.message();
  EXPECT_TRUE(at_server == to_server);
  EXPECT_TRUE(at_client == to_client);
}

TEST(TlsSocketTest, RecordsAlreadyReadAheadAreReadWithoutWaitingOnTheSocket) {
  Pair p;
  ASSERT_TRUE(p.Handshake());
  // Two records; the server's first read takes both from the kernel (read-ahead) and returns
  // the first. The second must come from OpenSSL's buffer: the socket has nothing more, so a
  // read that waited for it first would wait forever (the timer below ends the test instead).
  error_code ec;
  ASSERT_EQ(p.client->write_some(asio::buffer(std::string("one")), ec), 3u);
  ASSERT_EQ(p.client->write_some(asio::buffer(std::string("two")), ec), 3u);
  std::string first(3, '\0'), second(3, '\0');
  error_code second_ec = asio::error::would_block;
  asio::steady_timer limit(p.io, std::chrono::seconds(5));
  p.server->async_read_some(asio::buffer(first), [&](error_code e, size_t) {
    ASSERT_FALSE(e);
    p.server->async_read_some(asio::buffer(second), [&](error_code e2, size_t) {
      second_ec = e2;
      limit.cancel();
    });
  });
  limit.async_wait([&](error_code e) {
    if (!e) p.server->next_layer().cancel();  // the limit passed: end the read
  });
  p.io.run();
  EXPECT_EQ(first, "one");
  EXPECT_FALSE(second_ec) << second_ec.message();
  EXPECT_EQ(second, "two");
}

TEST(TlsSocketTest, ACompletionAtTheFirstTryIsPostedNotInline) {
  Pair p;
  ASSERT_TRUE(p.Handshake());
  error_code ec;
  ASSERT_EQ(p.client->write_some(asio::buffer(std::string("hi")), ec), 2u);
  // Let the bytes reach the server's socket before its read starts.
  asio::steady_timer settle(p.io, std::chrono::milliseconds(20));
  settle.wait();
  std::string got(2, '\0');
  bool initiating = true, inline_completion = false, completed = false;
  p.server->async_read_some(asio::buffer(got), [&](error_code e, size_t) {
    inline_completion = initiating;
    completed = !e;
  });
  initiating = false;
  p.io.run();
  EXPECT_TRUE(completed);
  EXPECT_FALSE(inline_completion);
  EXPECT_EQ(got, "hi");
}

TEST(TlsSocketTest, CloseNotifyIsEofACutWithoutOneIsTruncatedAndFinal) {
  {
    Pair p;
    ASSERT_TRUE(p.Handshake());
    error_code client_ec = asio::error::would_block, read_ec;
    std::string got(8, '\0');
    // The client's shutdown sends close_notify and waits for the server's; the server reads
    // eof, then answers with its own.
    p.client->async_shutdown([&](error_code e) { client_ec = e; });
    p.server->async_read_some(asio::buffer(got), [&](error_code e, size_t) {
      read_ec = e;
      p.server->async_shutdown([](error_code) {});
    });
    p.io.run();
    EXPECT_EQ(read_ec, asio::error::eof);
    EXPECT_FALSE(client_ec) << client_ec.message();
  }
  {
    Pair p;
    ASSERT_TRUE(p.Handshake());
    p.client->next_layer().shutdown(tcp::socket::shutdown_send);  // FIN, no close_notify
    error_code read_ec, shutdown_ec;
    std::string got(8, '\0');
    p.server->async_read_some(asio::buffer(got), [&](error_code e, size_t) { read_ec = e; });
    p.io.run();
    p.io.restart();
    EXPECT_EQ(read_ec, ssl::error::stream_truncated) << read_ec.message();
    // Fatal: no close_notify is attempted after it.
    p.server->async_shutdown([&](error_code e) { shutdown_ec = e; });
    p.io.run();
    EXPECT_EQ(shutdown_ec, ssl::error::stream_truncated);
  }
  {
    // A reset (the client closes with the server's session tickets unread): the socket's error.
    Pair p;
    ASSERT_TRUE(p.Handshake());
    p.client->next_layer().close();
    error_code read_ec;
    std::string got(8, '\0');
    p.server->async_read_some(asio::buffer(got), [&](error_code e, size_t) { read_ec = e; });
    p.io.run();
    EXPECT_EQ(read_ec, asio::error::connection_reset) << read_ec.message();
  }
}

TEST(TlsSocketTest, ACancelledWaitIsOperationAborted) {
  Pair p;
  ASSERT_TRUE(p.Handshake());
  error_code read_ec;
  std::string got(8, '\0');
  p.server->async_read_some(asio::buffer(got), [&](error_code e, size_t) { read_ec = e; });
  asio::post(p.io, [&] { p.server->next_layer().cancel(); });
  p.io.run();
  EXPECT_EQ(read_ec, asio::error::operation_aborted);
}

TEST(TlsSocketTest, AClientChecksTheServersName) {
  const auto handshake_with = [](const char* host) {
    Pair p;
    p.client_context.set_verify_mode(ssl::verify_peer);
    p.client_context.load_verify_file(Data("a.pem"));  // a.test, localhost; self-signed
    p.client = std::make_unique<TlsSocket>(p.io.get_executor(), p.client_context);
    tcp::acceptor acceptor(p.io, {asio::ip::make_address("127.0.0.1"), 0});
    p.client->next_layer().connect(acceptor.local_endpoint());
    p.server = std::make_unique<TlsSocket>(acceptor.accept(), p.server_context);
    EXPECT_TRUE(p.client->SetVerifyHost(host));
    return p.Handshake();
  };
  EXPECT_TRUE(handshake_with("a.test"));
  EXPECT_TRUE(handshake_with("localhost"));
  EXPECT_FALSE(handshake_with("b.test"));
  EXPECT_FALSE(handshake_with("127.0.0.1"));  // no IP address in the certificate
}

}  // namespace
}  // namespace turnpike::net
