// A front door: one folder (doors/<name>/) that owns its paths, its error dialect and its
// per-request extension of the core's RequestContext. Today: llm (the OpenAI and Anthropic
// APIs), admin (/admin/v1/...), ops (/healthz, /readyz, /metrics).
//
// A door declares its routes (core/router.h) and how to make it on one worker; app/ adds each
// door to the router with one line (`MakeDoors` in app/serve_command.cc). The router hands a
// request to the door whose route matched; the door never sees the HTTP/1.1 session, only the
// Exchange.
//
// Handle's contract: start a context with WorkerCore::Start, answer the exchange (through the
// core's Respond, which adds Server-Timing and records the status; a door that answers the
// Exchange itself records ctx.status), and end with WorkerCore::Finish,
// which accounts the request once (metrics, access log, call log). A governed door runs its
// FilterChain (filter.h) between the two and completes it before Finish.
//
// Ownership and threads: one Door per door per worker, made by its DoorFactory on the starting
// thread, called only on its worker's thread; it outlives every exchange it is given. The
// WorkerCore it borrows outlives it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/handoff.h"
#include "core/router.h"
#include "http/exchange.h"

namespace turnpike::core {

class WorkerCore;

// An error in a door's dialect: the body and the status that API uses for it.
struct ErrorReply {
  int status = 500;
  std::string body;
};

class Door {
 public:
  virtual ~Door() = default;

  // Answers one request routed to one of this door's routes (match.outcome == kFound).
  virtual boost::asio::awaitable<void> Handle(http::Exchange& exchange, RouteMatch match) = 0;

  // `error` in the door's dialect for its route `route` (-1: a path the door answers as the
  // router's fallback, or an error the server found before routing).
  virtual ErrorReply RenderError(int route, const Error& error) const = 0;

  // Answers a request another door received and handed over (handoff.h): only called on a door
  // whose DoorSpec declares model prefixes, which must override it. The default answers 500.
  virtual boost::asio::awaitable<void> Receive(http::Exchange& exchange, RouteMatch match,
                                               HandedRequest request);

  // The worker's event loop has stopped: release every I/O object the door owns.
  virtual void Shutdown() {}
};

using DoorFactory = std::function<std::unique_ptr<Door>(
    int worker_index, boost::asio::io_context& context, WorkerCore& core)>;

// What app/ registers for one door.
struct DoorSpec {
  std::vector<RouteSpec> routes;
  DoorFactory make;
  // Model-name prefixes whose requests other doors hand to this one (handoff.h), e.g. "agent:".
  std::vector<std::string> model_prefixes;
};

}  // namespace turnpike::core
