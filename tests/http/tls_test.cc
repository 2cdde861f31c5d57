// Inbound TLS in-process: TlsContext::Load's errors name the file; a TLS server serves the same
// exchange as the cleartext one (a streamed body's chunk framing checked on the decrypted
// bytes); SNI picks the certificate whose names match, the default otherwise; ALPN agrees on
// http/1.1; a stalled handshake is cut and counted; a reload changes what the next handshake
// is served.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <string>
#include <thread>
#include <vector>

#include "http/exchange.h"
#include "http/server.h"
#include "http/tls_context.h"
#include "running_server.h"

namespace turnpike::http {
namespace {
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

std::string Data(const char* name) { return std::string(TESTDATA_DIR) + "/" + name; }

TlsOptions Options(std::vector<TlsOptions::Pair> pairs) {
  TlsOptions o;
  o.certificates = std::move(pairs);
  return o;
}

std::string LoadError(const TlsOptions& options) {
  auto loaded = TlsContext::Load(options);
  return loaded.ok() ? "(loaded)" : loaded.error().message;
}

TEST(TlsContextTest, ErrorsNameTheFile) {
  EXPECT_NE(LoadError(Options({{Data("missing.pem"), Data("a.key")}}))
                .find("cannot load the certificate file " + Data("missing.pem")),
            std::string::npos);
  EXPECT_NE(LoadError(Options({{Data("a.pem"), Data("missing.key")}}))
                .find("cannot load the key file " + Data("missing.key")),
            std::string::npos);
  EXPECT_EQ(LoadError(Options({{Data("a.pem"), Data("other.key")}})),
            "the key file " + Data("other.key") + " does not match the certificate file " +
                Data("a.pem"));
  EXPECT_NE(LoadError(Options({{Data("expired.pem"), Data("a.key")}}))
                .find("the certificate in " + Data("expired.pem") + " expired on "),
            std::string::npos);
  TlsOptions bad_ca = Options({{Data("a.pem"), Data("a.key")}});
  bad_ca.client_ca_file = Data("missing-ca.pem");
  EXPECT_NE(LoadError(bad_ca).find("cannot load the client CA file " + Data("missing-ca.pem")),
            std::string::npos);
  TlsOptions bad_ciphers = Options({{Data("a.pem"), Data("a.key")}});
  bad_ciphers.ciphers = "NOT-A-CIPHER";
  EXPECT_NE(LoadError(bad_ciphers).find("ciphers: no usable cipher"), std::string::npos);
  auto good =
      TlsContext::Load(Options({{Data("a.pem"), Data("a.key")}, {Data("b.pem"), Data("b.key")}}));
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good.value()->certificate_count(), 2u);
}

// Streams three pieces, a write and six pieces (the framing of http1_exchange_test.cc).
class PiecesHandler : public Handler {
 public:
  net::awaitable<void> Handle(Exchange& exchange) override {
    const std::string a = "ab", b = "cd", c = "ef";
    co_await exchange.StartStream(200, "text/plain");
    const std::vector<std::string_view> three{a, b, c};
    co_await exchange.WritePieces(three);
    co_await exchange.Write("gh");
    const std::vector<std::string_view> six{"1", "2", "3", "4", "5", "6"};
    co_await exchange.WritePieces(six);
    co_await exchange.EndStream();
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return error.message;
  }
};

struct TlsAnswer {
  bool handshake_ok = false;
  std::string names;          // the served leaf's first DNS name
  std::string protocol;       // ALPN
  std::string body;           // after the head, up to the last chunk
  bool close_notify = false;  // the server ended with close_notify (a clean TLS end of stream)
};

TlsAnswer Fetch(uint16_t port, const char* server_name) {
  TlsAnswer answer;
  net::io_context io;
  ssl::context client(ssl::context::tls_client);
  client.set_verify_mode(ssl::verify_none);
  const unsigned char alpn[] = "\x02h2\x08http/1.1";
  SSL_CTX_set_alpn_protos(client.native_handle(), alpn, sizeof(alpn) - 1);
  ssl::stream<tcp::socket> stream(io, client);
  stream.lowest_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  if (server_name != nullptr) SSL_set_tlsext_host_name(stream.native_handle(), server_name);
  boost::system::error_code ec;
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) return answer;
  answer.handshake_ok = true;
  X509* leaf = SSL_get1_peer_certificate(stream.native_handle());
  if (leaf != nullptr) {
    auto* names =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr));
    if (names != nullptr && sk_GENERAL_NAME_num(names) > 0) {
      const GENERAL_NAME* first = sk_GENERAL_NAME_value(names, 0);
      answer.names = reinterpret_cast<const char*>(ASN1_STRING_get0_data(first->d.dNSName));
    }
    GENERAL_NAMES_free(names);
    X509_free(leaf);
  }
  const unsigned char* proto = nullptr;
  unsigned proto_len = 0;
  SSL_get0_alpn_selected(stream.native_handle(), &proto, &proto_len);
  answer.protocol.assign(reinterpret_cast<const char*>(proto), proto_len);
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  net::write(stream, net::buffer(request), ec);
  std::string all;
  char buffer[4096];
  for (;;) {
    const size_t n = stream.read_some(net::buffer(buffer), ec);
    if (ec) break;
    all.append(buffer, n);
  }
  answer.close_notify = ec == net::error::eof;  // stream_truncated without close_notify
  const size_t head_end = all.find("\r\n\r\n");
  if (head_end != std::string::npos) answer.body = all.substr(head_end + 4);
  return answer;
}

ServerOptions TlsServerOptions(std::shared_ptr<const TlsContext> tls) {
  ServerOptions o;
  o.workers = 1;
  o.tls = std::move(tls);
  return o;
}

HandlerFactory Pieces() {
  return [](int, net::io_context&) { return std::make_unique<PiecesHandler>(); };
}

TEST(TlsServerTest, ServesTheExchangeAndPicksTheCertificateBySni) {
  auto tls =
      TlsContext::Load(Options({{Data("a.pem"), Data("a.key")}, {Data("b.pem"), Data("b.key")}}));
  ASSERT_TRUE(tls.ok()) << tls.error().message;
  testing::RunningServer server(Pieces(), TlsServerOptions(tls.value()));

  const TlsAnswer plain = Fetch(server.port(), "a.test");
  ASSERT_TRUE(plain.handshake_ok);
  EXPECT_EQ(plain.names, "a.test");
  EXPECT_EQ(plain.protocol, "http/1.1");  // offered h2 first: not served (yet)
  EXPECT_EQ(plain.body, "6\r\nabcdef\r\n2\r\ngh\r\n6\r\n123456\r\n0\r\n\r\n");
  EXPECT_TRUE(plain.close_notify);

  EXPECT_EQ(Fetch(server.port(), "b.test").names, "b.test");
  EXPECT_EQ(Fetch(server.port(), "x.wild.test").names, "b.test");   // the wildcard
  EXPECT_EQ(Fetch(server.port(), "unknown.test").names, "a.test");  // the default
  EXPECT_EQ(Fetch(server.port(), nullptr).names, "a.test");         // no SNI: the default
}

TEST(TlsServerTest, ReloadChangesTheNextHandshake) {
  auto first = TlsContext::Load(Options({{Data("a.pem"), Data("a.key")}}));
  auto second = TlsContext::Load(Options({{Data("b.pem"), Data("b.key")}}));
  ASSERT_TRUE(first.ok() && second.ok());
  testing::RunningServer server(Pieces(), TlsServerOptions(first.value()));
  EXPECT_EQ(Fetch(server.port(), nullptr).names, "a.test");
  server.server().ReloadTls(second.value());
  // The reload is a message to the worker; the next accepted connection runs after it.
  std::string served;
  for (int i = 0; i < 100 && served != "b.test"; ++i) served = Fetch(server.port(), nullptr).names;
  EXPECT_EQ(served, "b.test");
}

TEST(TlsServerTest, StalledHandshakeIsCutAndCounted) {
  TlsOptions options = Options({{Data("a.pem"), Data("a.key")}});
  options.handshake_timeout = std::chrono::milliseconds(50);
  auto tls = TlsContext::Load(options);
  ASSERT_TRUE(tls.ok());
  testing::RunningServer server(Pieces(), TlsServerOptions(tls.value()));
  net::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
  const std::string partial = "\x16\x03\x01";  // a record header, then nothing
  net::write(socket, net::buffer(partial));
  char byte;
  boost::system::error_code ec;
  socket.read_some(net::buffer(&byte, 1), ec);  // returns when the server closes
  EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
  EXPECT_EQ(server.server().tls_handshake_failures(), 1u);
  // A cleartext request to a TLS port is a failed handshake too.
  tcp::socket cleartext(io);
  cleartext.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  net::write(cleartext, net::buffer(request));
  std::string back;  // at most a TLS alert, never an HTTP answer
  char chunk[512];
  for (;;) {
    const size_t n = cleartext.read_some(net::buffer(chunk), ec);
    if (ec) break;
    back.append(chunk, n);
  }
  EXPECT_EQ(back.find("HTTP/"), std::string::npos) << back;
  for (int i = 0; i < 100 && server.server().tls_handshake_failures() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server.server().tls_handshake_failures(), 2u);
}

}  // namespace
}  // namespace turnpike::http
