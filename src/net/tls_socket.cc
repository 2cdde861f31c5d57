#include "net/tls_socket.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <cerrno>
#include <string>

namespace turnpike::net {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// Before each SSL call: SSL_get_error reads this thread's error queue, and an end of stream or
// a reset is told apart by errno.
void ClearErrors() {
  ERR_clear_error();
  errno = 0;
}

SSL* NewSsl(asio::ssl::context& context) {
  SSL* ssl = SSL_new(context.native_handle());
  if (ssl == nullptr) {
    throw boost::system::system_error(
        error_code(static_cast<int>(ERR_get_error()), asio::error::get_ssl_category()), "SSL_new");
  }
  // Partial writes: write_some reports each record as it is sent. A moving buffer: a retry
  // may gather the same bytes into another place. Released buffers: an idle connection holds
  // none. Read-ahead: one recv takes all the kernel holds.
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                        SSL_MODE_RELEASE_BUFFERS);
  SSL_set_read_ahead(ssl, 1);
  return ssl;
}

}  // namespace

TlsSocket::TlsSocket(next_layer_type socket, asio::ssl::context& context)
    : socket_(std::move(socket)), ssl_(NewSsl(context)) {}

TlsSocket::TlsSocket(const executor_type& executor, asio::ssl::context& context)
    : socket_(executor), ssl_(NewSsl(context)) {}

TlsSocket::~TlsSocket() { SSL_free(ssl_); }  // the socket BIO does not close the descriptor

bool TlsSocket::SetVerifyHost(std::string_view host) {
  const std::string name(host);
  error_code ec;
  asio::ip::make_address(name, ec);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  if (!ec) return X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1;
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) == 1;
}

template <typename Io>
size_t TlsSocket::Transfer(Io io, error_code& ec) {
  if (fatal_) {
    ec = fatal_;
    return 0;
  }
  ClearErrors();
  size_t n = 0;
  const int result = io(&n);
  if (result == 1) {
    ec = {};
    return n;
  }
  ec = Failure(result);
  return 0;
}

size_t TlsSocket::Read(void* data, size_t size, error_code& ec) {
  return Transfer([&](size_t* n) { return SSL_read_ex(ssl_, data, size, n); }, ec);
}

size_t TlsSocket::Write(const void* data, size_t size, error_code& ec) {
  return Transfer([&](size_t* n) { return SSL_write_ex(ssl_, data, size, n); }, ec);
}

void TlsSocket::Handshake(handshake_type type, error_code& ec) {
  if (fatal_) {
    ec = fatal_;
    return;
  }
  if (!bound_) {
    socket_.non_blocking(true, ec);
    if (ec) return;
    if (SSL_set_fd(ssl_, socket_.native_handle()) != 1) {
      ec = error_code(static_cast<int>(ERR_get_error()), asio::error::get_ssl_category());
      return;
    }
    if (type == handshake_type::client) {
      SSL_set_connect_state(ssl_);
    } else {
      SSL_set_accept_state(ssl_);
    }
    bound_ = true;
  }
  ClearErrors();
  const int result = SSL_do_handshake(ssl_);
  ec = result == 1 ? error_code() : Failure(result);
}

void TlsSocket::Shutdown(error_code& ec) {
  if (fatal_ || !bound_) {
    ec = fatal_ ? fatal_ : error_code(asio::error::not_connected);
    return;
  }
  ClearErrors();
  int result = SSL_shutdown(ssl_);
  if (result == 0) {
    // close_notify sent; the second call reads the peer's.
    ClearErrors();
    result = SSL_shutdown(ssl_);
  }
  if (result == 1) {
    ec = {};
    return;
  }
  ec = Failure(result);
}

error_code TlsSocket::Failure(int result) {
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, result)) {
    case SSL_ERROR_WANT_READ:
      want_write_ = false;
      return asio::error::would_block;
    case SSL_ERROR_WANT_WRITE:
      want_write_ = true;
      return asio::error::would_block;
    case SSL_ERROR_ZERO_RETURN:
      return asio::error::eof;  // the peer's close_notify: not fatal
    case SSL_ERROR_SYSCALL: {
      const unsigned long e = ERR_get_error();
      if (e != 0) {
        fatal_ = error_code(static_cast<int>(e), asio::error::get_ssl_category());
      } else if (saved_errno != 0) {
        fatal_ = error_code(saved_errno, boost::system::system_category());
      } else {
        fatal_ = asio::ssl::error::stream_truncated;
      }
      return fatal_;
    }
    default: {
      const unsigned long e = ERR_get_error();
      if (ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        fatal_ = asio::ssl::error::stream_truncated;  // the peer closed without close_notify
      } else if (e == 0) {
        fatal_ = asio::ssl::error::unexpected_result;  // a failure that queued no error
      } else {
        fatal_ = error_code(static_cast<int>(e), asio::error::get_ssl_category());
      }
      return fatal_;
    }
  }
}

char* TlsSocket::GatherScratch() {
  static thread_local char scratch[kGatherBytes];
  return scratch;
}

}  // namespace turnpike::net
