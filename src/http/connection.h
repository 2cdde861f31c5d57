// Internal to http/: the state of one client connection, shared between its session coroutine
// and the completion handlers of its deadline and client watch (hence shared_ptr: a handler
// may run after the exchange that armed it). Lives on one worker thread.
//
// The byte stream is a template parameter, so the session and the exchange are compiled once
// per transport with no indirection per read or write: `Connection` is cleartext over the TCP
// socket; `TlsConnection` is TLS over it (net::TlsSocket), made after a handshake (worker.cc)
// and closed with close_notify. Both have the same non-blocking `write_some` and asynchronous
// reads and writes, and expose `socket()`, the TCP socket underneath, for what is not a byte
// of the stream (deadlines cancel it, the client watch waits on it, Abort resets it).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "net/deadline.h"
#include "net/header_arena.h"
#include "net/tls_socket.h"

namespace turnpike::http {

using PlainStream = boost::asio::ip::tcp::socket;
using TlsStream = net::TlsSocket;

template <typename Stream>
struct BasicConnection : std::enable_shared_from_this<BasicConnection<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, PlainStream>;

  // Plain: (socket). TLS: (socket, ssl::context&).
  template <typename... Args>
  explicit BasicConnection(Args&&... args)
      : stream(std::forward<Args>(args)...), deadline(stream.get_executor()) {}

  boost::asio::ip::tcp::socket::lowest_layer_type& socket() { return stream.lowest_layer(); }

  // Bounds the next I/O: when the deadline passes, pending operations on the socket are
  // cancelled (not the socket closed), so the session can still answer 408.
  void Arm(std::chrono::milliseconds timeout) {
    net::ArmDeadline(this->shared_from_this(), timeout);
  }
  void Disarm() { net::DisarmDeadline(deadline); }
  // Whether the last armed deadline passed (the cancelled operation reports operation_aborted).
  bool deadline_hit() const { return deadline.hit; }
  void CancelIo() {
    boost::system::error_code ignored;
    socket().cancel(ignored);
  }
  void Close() {
    net::CloseDeadline(deadline);
    boost::system::error_code ignored;
    socket().close(ignored);
  }

  Stream stream;
  net::Deadline deadline;
  boost::beast::flat_buffer buffer;
  // The header fields of the request being served; reset before each request is parsed.
  net::HeaderArena arena;
  // The response head being written (Http1Exchange): one response at a time per connection,
  // so one buffer whose capacity stays (no allocation per response once warm).
  std::string response_head;
  std::chrono::milliseconds write_timeout{60'000};
  bool peer_gone = false;  // the client closed or reset the connection, or stalled a write

  // Client watch (see Exchange::WatchClient). At most one wait is pending per connection; a
  // new watch reuses it, and a completion with no watch active is ignored.
  bool peek_pending = false;
  bool watching = false;
  std::function<void()> on_gone;

  // TLS only: the snapshot (TlsContext) this connection's SSL object was made from, kept for
  // the connection's life.
  std::shared_ptr<const void> tls_context;
};

using Connection = BasicConnection<PlainStream>;
using TlsConnection = BasicConnection<TlsStream>;

}  // namespace turnpike::http
