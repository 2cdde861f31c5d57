// The contract between the HTTP server and whatever answers requests (a front door, the mock
// provider).
//
// The server owns connections and parsing; a Handler decides what to answer. The server makes
// one Handler per worker thread through a HandlerFactory, so a handler may keep per-thread
// state (upstream pools, probes, log buffers) without locks. A handler instance is only ever
// called on its own worker's thread and outlives every exchange it is given.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"

namespace turnpike::http {

class Exchange;

class Handler {
 public:
  virtual ~Handler() = default;

  // Answers one request. Must leave the exchange answered (Respond, or StartStream ...
  // EndStream, or Abort); an exchange left unanswered gets a 500.
  virtual boost::asio::awaitable<void> Handle(Exchange& exchange) = 0;

  // Renders an error the server detected before the handler ran (bad request line, header or
  // body over its limit, slow client) in the error shape of the API that `target` belongs to.
  // Returns the JSON body; the status is HttpStatus(error.code).
  virtual std::string RenderError(std::string_view target, const Error& error) const = 0;

  // Called on the worker's thread after its event loop stopped and before the loop is
  // destroyed: release every I/O object the handler owns (pooled sockets, timers, resolvers).
  virtual void Shutdown() {}
};

// Called once per worker at start-up, on the starting thread.
using HandlerFactory =
    std::function<std::unique_ptr<Handler>(int worker_index, boost::asio::io_context& context)>;

}  // namespace turnpike::http
