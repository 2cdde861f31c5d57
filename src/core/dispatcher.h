// The worker's http::Handler: routes each exchange (core/router.h) to the door that answers it,
// and answers what no door takes itself — a path no route matches (404) and a method its route
// does not take (405 with Allow) — in the dialect of the fallback door or the matched door,
// accounted through the WorkerCore like every other request.
//
// A routed request costs one router lookup and one virtual call: Handle is not a coroutine,
// it returns the door's own, so routing adds no coroutine frame.
//
// Ownership and threads: one Dispatcher per worker (the server's HandlerFactory makes it in
// app/); it owns that worker's WorkerCore and one instance of every door, in the order of
// the DoorSpec list the router was built with. Used only on its worker's thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <vector>

#include "core/door.h"
#include "core/worker_core.h"
#include "http/handler.h"

namespace turnpike::core {

class Dispatcher : public http::Handler {
 public:
  // `doors[i]` is the door the router knows as index i.
  Dispatcher(const CoreShared& shared, const std::vector<DoorSpec>& doors, int worker_index,
             boost::asio::io_context& context);
  ~Dispatcher() override;

  boost::asio::awaitable<void> Handle(http::Exchange& exchange) override;
  std::string RenderError(std::string_view target, const Error& error) const override;
  void Shutdown() override;

 private:
  boost::asio::awaitable<void> AnswerUnrouted(http::Exchange& exchange, RouteMatch match);

  const CoreShared& shared_;
  WorkerCore core_;
  std::vector<std::unique_ptr<Door>> doors_;
};

}  // namespace turnpike::core
