// Internal to http/: the state of one client connection, shared between its session coroutine
// and the client-watch completion handler (hence shared_ptr: the handler may outlive the
// exchange that armed it). Lives on one worker thread.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <cstdint>
#include <functional>

namespace turnpike::http {

struct Connection {
  explicit Connection(boost::asio::ip::tcp::socket socket) : stream(std::move(socket)) {}

  boost::beast::tcp_stream stream;
  boost::beast::flat_buffer buffer;
  std::chrono::milliseconds write_timeout{60'000};
  bool peer_gone = false;  // the client closed or reset the connection

  // Client watch (see Exchange::WatchClient). A generation number tells a stale completion
  // (from a watch already stopped) from the current one.
  uint64_t watch_generation = 0;
  bool watching = false;
  std::function<void()> on_gone;
};

}  // namespace turnpike::http
