// TLS over a TCP socket, with OpenSSL reading and writing the socket itself.
//
// Asio's ssl::stream runs OpenSSL over a memory BIO pair: every record is copied from the
// socket into the stream's buffer, from there into the BIO, and the other way for writes, and
// each read or write is a composed operation of several asynchronous steps (a socket read or
// write each, with their completions) even when the bytes are there. Its two 17 KB buffers and
// the BIO pair's two stay allocated for the connection's life.
//
// TlsSocket instead binds the SSL object to the socket's descriptor (a socket BIO), as nginx
// does: SSL_read and SSL_write make the recv and send themselves, with read-ahead on (one recv
// takes what the kernel holds, not a record header and then its body). Reads and writes are
// tried at once; only when OpenSSL wants the socket readable or writable does an operation wait
// for that (a readiness wait on the socket) and try again. So:
// - `read_some` and `write_some` never block: they return what was done, or
//   `error::would_block` when nothing could be (the caller waits, or calls the asynchronous
//   form, with the same buffers: OpenSSL requires a write to be retried with the same bytes).
// - `async_read_some` and `async_write_some` (Asio's AsyncReadStream and AsyncWriteStream, so
//   `async_write` and the parsers' reads work unchanged) complete by a post when the first try
//   succeeds, never inline.
// - A write of several buffers is gathered into one record (up to 16 KB, a per-thread scratch
//   buffer: nothing per connection), so a response head and its body go out as one record and
//   one send.
// - Memory per connection: the SSL object; with SSL_MODE_RELEASE_BUFFERS (on here) its record
//   buffers are freed whenever they are empty, so an idle connection holds no buffer.
//
// Threading: one socket is used by one thread (its executor's), like any Asio socket. One read
// and one write may be pending at once (HTTP/2's read and write loops); handshake and shutdown
// run alone.
//
// Errors, as Asio's ssl::stream reports them: `error::eof` for the peer's close_notify,
// `ssl::error::stream_truncated` for an end of stream without one, the socket's errno, or an
// OpenSSL error in Asio's ssl category. After a fatal error the connection takes no more TLS
// operations (a shutdown completes at once with that error).
//
// The process must ignore SIGPIPE: a socket BIO writes with write(2), which raises it when the
// peer has gone (main does; so do the tests).
#pragma once

#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <utility>

namespace turnpike::net {

class TlsSocket {
 public:
  using next_layer_type = boost::asio::ip::tcp::socket;
  using lowest_layer_type = boost::asio::ip::tcp::socket;
  using executor_type = next_layer_type::executor_type;
  using handshake_type = boost::asio::ssl::stream_base::handshake_type;

  // A connected socket (a server's accepted one), or one to connect later (a client's).
  TlsSocket(next_layer_type socket, boost::asio::ssl::context& context);
  TlsSocket(const executor_type& executor, boost::asio::ssl::context& context);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  executor_type get_executor() { return socket_.get_executor(); }
  next_layer_type& next_layer() { return socket_; }
  lowest_layer_type& lowest_layer() { return socket_; }
  SSL* native_handle() { return ssl_; }

  // A client's checks of the server's certificate name (a DNS name or an IP address): with
  // the context's verify_peer, a handshake with a certificate for another name fails.
  bool SetVerifyHost(std::string_view host);

  // Non-blocking: the bytes read (at most the first non-empty buffer's size), or 0 with an
  // error (would_block: nothing yet).
  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::mutable_buffer b(*it);
      if (b.size() != 0) return Read(b.data(), b.size(), ec);
    }
    ec = {};
    return 0;
  }

  // Non-blocking: the bytes written (records complete in OpenSSL's hands), or 0 with an error
  // (would_block: retry with the same buffers once the socket is writable).
  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec) {
    auto it = boost::asio::buffer_sequence_begin(buffers);
    const auto end = boost::asio::buffer_sequence_end(buffers);
    while (it != end && boost::asio::const_buffer(*it).size() == 0) ++it;
    if (it == end) {
      ec = {};
      return 0;
    }
    const boost::asio::const_buffer first(*it);
    if (first.size() >= kGatherBytes || std::next(it) == end) {
      return Write(first.data(), first.size(), ec);
    }
    char* scratch = GatherScratch();
    size_t gathered = 0;
    for (; it != end && gathered < kGatherBytes; ++it) {
      const boost::asio::const_buffer b(*it);
      const size_t take = std::min(b.size(), kGatherBytes - gathered);
      if (take == 0) continue;  // an empty buffer's data may be null
      std::memcpy(scratch + gathered, b.data(), take);
      gathered += take;
    }
    return Write(scratch, gathered, ec);
  }

  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return Start<void(boost::system::error_code, size_t)>(
        [buffers](TlsSocket& s, boost::system::error_code& ec) { return s.read_some(buffers, ec); },
        std::forward<Token>(token));
  }

  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return Start<void(boost::system::error_code, size_t)>(
        [buffers](TlsSocket& s, boost::system::error_code& ec) {
          return s.write_some(buffers, ec);
        },
        std::forward<Token>(token));
  }

  // The first call binds the SSL object to the socket (which must be connected by then) and
  // makes the socket non-blocking.
  template <typename Token>
  auto async_handshake(handshake_type type, Token&& token) {
    return Start<void(boost::system::error_code)>(
        [type](TlsSocket& s, boost::system::error_code& ec) {
          s.Handshake(type, ec);
          return size_t{0};
        },
        std::forward<Token>(token));
  }

  // Sends close_notify and waits for the peer's (or its end of stream, or a fatal error).
  template <typename Token>
  auto async_shutdown(Token&& token) {
    return Start<void(boost::system::error_code)>(
        [](TlsSocket& s, boost::system::error_code& ec) {
          s.Shutdown(ec);
          return size_t{0};
        },
        std::forward<Token>(token));
  }

 private:
  static constexpr size_t kGatherBytes = 16 * 1024;  // TLS's largest record

  // One operation: try, and while OpenSSL wants the socket, wait for it and try again.
  template <typename Signature, typename Action>
  class Op;

  template <typename Signature, typename Action, typename Token>
  auto Start(Action action, Token&& token) {
    return boost::asio::async_compose<Token, Signature>(Op<Signature, Action>(*this, action), token,
                                                        socket_);
  }

  // SSL_read_ex or SSL_write_ex (`io(&n)`) unless TLS has ended, with the errors mapped.
  template <typename Io>
  size_t Transfer(Io io, boost::system::error_code& ec);
  size_t Read(void* data, size_t size, boost::system::error_code& ec);
  size_t Write(const void* data, size_t size, boost::system::error_code& ec);
  void Handshake(handshake_type type, boost::system::error_code& ec);
  void Shutdown(boost::system::error_code& ec);
  // The error of a failed SSL call's `result`; sets want_write_ for would_block.
  boost::system::error_code Failure(int result);
  static char* GatherScratch();

  next_layer_type socket_;
  SSL* ssl_;
  bool bound_ = false;               // SSL_set_fd done
  bool want_write_ = false;          // the last would_block waits for writability, not readability
  boost::system::error_code fatal_;  // set once a fatal error ended TLS on this connection
};

template <typename Signature, typename Action>
class TlsSocket::Op {
 public:
  Op(TlsSocket& socket, Action action) : socket_(socket), action_(std::move(action)) {}

  template <typename Self>
  void operator()(Self& self, boost::system::error_code wait_ec = {}) {
    if (state_ == State::kPosted) return Finish(self);
    if (state_ == State::kWaiting && wait_ec) {
      ec_ = wait_ec;  // cancelled (a deadline), or the socket closed
      n_ = 0;
      return Finish(self);
    }
    n_ = action_(socket_, ec_);
    if (ec_ == boost::asio::error::would_block) {
      state_ = State::kWaiting;
      const auto wait =
          socket_.want_write_ ? next_layer_type::wait_write : next_layer_type::wait_read;
      socket_.socket_.async_wait(wait, std::move(self));
      return;
    }
    if (state_ == State::kStart) {  // done at the first try: complete by a post, not inline
      state_ = State::kPosted;
      boost::asio::post(std::move(self));
      return;
    }
    Finish(self);
  }

 private:
  enum class State { kStart, kWaiting, kPosted };

  template <typename Self>
  void Finish(Self& self) {
    if constexpr (std::is_same_v<Signature, void(boost::system::error_code)>) {
      self.complete(ec_);
    } else {
      self.complete(ec_, n_);
    }
  }

  TlsSocket& socket_;
  Action action_;
  State state_ = State::kStart;
  boost::system::error_code ec_;
  size_t n_ = 0;
};

}  // namespace turnpike::net
