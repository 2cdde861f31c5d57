// Inbound TLS: the server's certificates, protocol policy, ALPN and client-certificate checks,
// loaded from files into one immutable value (a snapshot).
//
// Ownership: Load() builds a TlsContext and hands it out by shared_ptr. The server's workers
// each hold the current one and make every new connection's SSL object from it; a connection
// keeps its snapshot until it closes, so a reload (Load() again, then Server::ReloadTls)
// changes only what later handshakes see. Immutable after Load(): OpenSSL reads it from any
// worker thread at once (SSL_CTX is safe for concurrent SSL_new and handshakes).
//
// Certificates: the first is the default; the others are chosen by the client's SNI name
// against each certificate's DNS names (X509_check_host: SAN entries, wildcards included). A
// client whose SNI matches no certificate, or that sends none, gets the default.
//
// ALPN: the server's protocols in order of preference ("http/1.1"; with server.http2, "h2"
// first). A client that offers ALPN with none of them still completes the handshake without a
// protocol (and is served HTTP/1.1), as nginx does; the session dispatches on Protocol() after
// the handshake (session.cc).
//
// Errors (from Load only, as values): every problem names the file it came from: unreadable
// or malformed certificate or key, a key that does not match its certificate, a certificate
// that has expired or is not valid yet, a CA file that cannot be read, an empty cipher list.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace turnpike::http {

struct TlsOptions {
  struct Pair {
    std::string cert_file;  // PEM: the leaf first, then its chain
    std::string key_file;   // PEM, unencrypted
  };
  std::vector<Pair> certificates;  // at least one; the first is the default
  bool tls13_only = false;         // else TLS 1.2 and 1.3
  std::string ciphers;             // TLS 1.2 suites; "" = kDefaultCiphers
  std::string client_ca_file;      // "" = no client certificate asked for
  bool require_client_cert = false;
  std::chrono::milliseconds handshake_timeout{10'000};
  std::vector<std::string> alpn = {"http/1.1"};
};

// ECDHE key exchange with AEAD ciphers only (Mozilla's "intermediate" TLS 1.2 list without
// the DHE suites). TLS 1.3 suites are OpenSSL's defaults, all AEAD.
inline constexpr std::string_view kDefaultCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

class TlsContext {
 public:
  // Reads every file and builds the contexts. Blocking file I/O: call it at start-up or on a
  // thread that serves no connection (the signal thread).
  static Result<std::shared_ptr<const TlsContext>> Load(const TlsOptions& options);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // The context new connections start in (the default certificate's); the SNI callback
  // moves a connection to another certificate's context during its handshake.
  boost::asio::ssl::context& initial() const { return *contexts_.front(); }
  std::chrono::milliseconds handshake_timeout() const { return handshake_timeout_; }
  size_t certificate_count() const { return contexts_.size(); }

  // The protocol a finished handshake agreed on by ALPN ("" when none was).
  static std::string_view Protocol(const SSL* ssl);

 private:
  TlsContext() = default;
  // The context whose certificate covers `server_name`, or the default.
  SSL_CTX* ForServerName(std::string_view server_name) const;
  static int OnServerName(SSL* ssl, int* alert, void* arg);
  static int OnAlpn(SSL* ssl, const unsigned char** out, unsigned char* out_len,
                    const unsigned char* in, unsigned int in_len, void* arg);

  std::vector<std::unique_ptr<boost::asio::ssl::context>> contexts_;  // [0]: the default
  std::vector<X509*> leaves_;  // each context's leaf certificate (owned by the context)
  std::string alpn_wire_;      // `alpn` in the wire form: length-prefixed names
  std::chrono::milliseconds handshake_timeout_{0};
};

}  // namespace turnpike::http
