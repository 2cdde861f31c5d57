#include "http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdio>

namespace turnpike::http {
namespace ssl = boost::asio::ssl;

namespace {

// One session cache namespace for every context: resumption survives an SNI switch.
constexpr std::string_view kSessionIdContext = "turnpike";
constexpr size_t kMaxAlpnName = 255;

// The first error OpenSSL queued on this thread (the queue is cleared), for a message.
std::string TakeSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

Error Fail(std::string message) { return Error{ErrorCode::kInternal, std::move(message), ""}; }

// A passphrase prompt would read the terminal: refuse encrypted keys instead.
int NoPassword(char*, int, int, void*) { return 0; }

std::string TimeText(const ASN1_TIME* t) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "?";
  ASN1_TIME_print(bio, t);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<size_t>(n > 0 ? n : 0));
  BIO_free(bio);
  return text;
}

Result<X509*> LoadPair(SSL_CTX* ctx, const TlsOptions::Pair& pair) {
  if (SSL_CTX_use_certificate_chain_file(ctx, pair.cert_file.c_str()) != 1) {
    return Fail("cannot load the certificate file " + pair.cert_file + ": " + TakeSslError());
  }
  const std::string mismatch =
      "the key file " + pair.key_file + " does not match the certificate file " + pair.cert_file;
  if (SSL_CTX_use_PrivateKey_file(ctx, pair.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // OpenSSL compares the key with the certificate as it loads it.
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return Fail(mismatch);
    }
    return Fail("cannot load the key file " + pair.key_file + ": " + TakeSslError());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Fail(mismatch);
  }
  X509* leaf = SSL_CTX_get0_certificate(ctx);
  if (leaf == nullptr) return Fail("no certificate in " + pair.cert_file);
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0) {
    return Fail("the certificate in " + pair.cert_file + " expired on " +
                TimeText(X509_get0_notAfter(leaf)));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0) {
    return Fail("the certificate in " + pair.cert_file + " is not valid before " +
                TimeText(X509_get0_notBefore(leaf)));
  }
  return leaf;
}

Status ConfigurePolicy(SSL_CTX* ctx, const TlsOptions& options) {
  SSL_CTX_set_min_proto_version(ctx, options.tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  // Idle connections keep no read/write buffers (nginx does the same).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_default_passwd_cb(ctx, NoPassword);
  const std::string ciphers =
      options.ciphers.empty() ? std::string(kDefaultCiphers) : options.ciphers;
  if (SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    return Fail("ciphers: no usable cipher in \"" + ciphers + "\": " + TakeSslError());
  }
  SSL_CTX_set_session_id_context(ctx,
                                 reinterpret_cast<const unsigned char*>(kSessionIdContext.data()),
                                 static_cast<unsigned>(kSessionIdContext.size()));
  if (options.client_ca_file.empty()) return Ok{};
  if (SSL_CTX_load_verify_locations(ctx, options.client_ca_file.c_str(), nullptr) != 1) {
    return Fail("cannot load the client CA file " + options.client_ca_file + ": " + TakeSslError());
  }
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.client_ca_file.c_str());
  if (names == nullptr) {
    return Fail("no CA certificate in the client CA file " + options.client_ca_file + ": " +
                TakeSslError());
  }
  SSL_CTX_set_client_CA_list(ctx, names);  // takes ownership
  const int mode = options.require_client_cert ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                               : SSL_VERIFY_PEER;
  SSL_CTX_set_verify(ctx, mode, nullptr);
  return Ok{};
}

}  // namespace

TlsContext::~TlsContext() = default;

Result<std::shared_ptr<const TlsContext>> TlsContext::Load(const TlsOptions& options) {
  if (options.certificates.empty()) return Fail("no certificate configured");
  std::shared_ptr<TlsContext> tls(new TlsContext());
  tls->handshake_timeout_ = options.handshake_timeout;
  for (const std::string& name : options.alpn) {
    if (name.empty() || name.size() > kMaxAlpnName) return Fail("bad ALPN name: " + name);
    tls->alpn_wire_.push_back(static_cast<char>(name.size()));
    tls->alpn_wire_.append(name);
  }
  ERR_clear_error();
  for (const TlsOptions::Pair& pair : options.certificates) {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
    SSL_CTX* ctx = context->native_handle();
    const Status policy = ConfigurePolicy(ctx, options);
    if (!policy.ok()) return policy.error();
    Result<X509*> leaf = LoadPair(ctx, pair);
    if (!leaf.ok()) return leaf.error();
    if (!tls->alpn_wire_.empty()) SSL_CTX_set_alpn_select_cb(ctx, &TlsContext::OnAlpn, tls.get());
    tls->leaves_.push_back(leaf.value());
    tls->contexts_.push_back(std::move(context));
  }
  SSL_CTX* initial = tls->contexts_.front()->native_handle();
  if (tls->contexts_.size() > 1) {
    SSL_CTX_set_tlsext_servername_callback(initial, &TlsContext::OnServerName);
    SSL_CTX_set_tlsext_servername_arg(initial, tls.get());
  }
  return std::shared_ptr<const TlsContext>(std::move(tls));
}

SSL_CTX* TlsContext::ForServerName(std::string_view server_name) const {
  const std::string name(server_name);
  for (size_t i = 0; i < leaves_.size(); ++i) {
    if (X509_check_host(leaves_[i], name.data(), name.size(), 0, nullptr) == 1) {
      return contexts_[i]->native_handle();
    }
  }
  return contexts_.front()->native_handle();
}

int TlsContext::OnServerName(SSL* ssl, int*, void* arg) {
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (name == nullptr) return SSL_TLSEXT_ERR_OK;  // no SNI: the default certificate
  const auto* self = static_cast<const TlsContext*>(arg);
  SSL_CTX* chosen = self->ForServerName(name);
  if (chosen != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, chosen);
  return SSL_TLSEXT_ERR_OK;
}

int TlsContext::OnAlpn(SSL*, const unsigned char** out, unsigned char* out_len,
                       const unsigned char* in, unsigned int in_len, void* arg) {
  const auto* self = static_cast<const TlsContext*>(arg);
  unsigned char* selected = nullptr;
  const int result = SSL_select_next_proto(
      &selected, out_len, reinterpret_cast<const unsigned char*>(self->alpn_wire_.data()),
      static_cast<unsigned>(self->alpn_wire_.size()), in, in_len);
  if (result != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_NOACK;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

std::string_view TlsContext::Protocol(const SSL* ssl) {
  const unsigned char* data = nullptr;
  unsigned int size = 0;
  SSL_get0_alpn_selected(ssl, &data, &size);
  if (data == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace turnpike::http
