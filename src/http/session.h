// Internal to http/: the coroutine that serves one client connection, request after request.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <memory>

#include "http/handler.h"
#include "http/server.h"

namespace turnpike::http {

struct Connection;

struct SessionContext {
  const ServerOptions& options;
  Handler& handler;
  const std::atomic<bool>& draining;
  std::atomic<int64_t>& in_flight;  // single writer: this worker
};

// Reads requests with the configured limits and timeouts, hands each to the handler, answers
// protocol errors itself (in the handler's error shape), and closes the connection at the end.
boost::asio::awaitable<void> RunSession(SessionContext ctx, std::shared_ptr<Connection> connection);

}  // namespace turnpike::http
