// Internal to http/: the state of one client connection, shared between its session coroutine
// and the completion handlers of its deadline and client watch (hence shared_ptr: a handler
// may run after the exchange that armed it). Lives on one worker thread.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "net/deadline.h"
#include "net/header_arena.h"

namespace turnpike::http {

struct Connection : std::enable_shared_from_this<Connection> {
  explicit Connection(boost::asio::ip::tcp::socket s)
      : socket(std::move(s)), deadline(socket.get_executor()) {}

  // Bounds the next I/O: when the deadline passes, pending operations on the socket are
  // cancelled (not the socket closed), so the session can still answer 408.
  void Arm(std::chrono::milliseconds timeout) { net::ArmDeadline(shared_from_this(), timeout); }
  void Disarm() { net::DisarmDeadline(deadline); }
  // Whether the last armed deadline passed (the cancelled operation reports operation_aborted).
  bool deadline_hit() const { return deadline.hit; }
  void CancelIo() {
    boost::system::error_code ignored;
    socket.cancel(ignored);
  }
  void Close() {
    net::CloseDeadline(deadline);
    boost::system::error_code ignored;
    socket.close(ignored);
  }

  boost::asio::ip::tcp::socket socket;
  net::Deadline deadline;
  boost::beast::flat_buffer buffer;
  // The header fields of the request being served; reset before each request is parsed.
  net::HeaderArena arena;
  std::chrono::milliseconds write_timeout{60'000};
  bool peer_gone = false;  // the client closed or reset the connection, or stalled a write

  // Client watch (see Exchange::WatchClient). At most one wait is pending per connection; a
  // new watch reuses it, and a completion with no watch active is ignored.
  bool peek_pending = false;
  bool watching = false;
  std::function<void()> on_gone;
};

}  // namespace turnpike::http
