#include "core/dispatcher.h"

namespace turnpike::core {
namespace net = boost::asio;

Dispatcher::Dispatcher(const CoreShared& shared, const std::vector<DoorSpec>& doors,
                       int worker_index, net::io_context& context)
    : shared_(shared), core_(shared, context) {
  doors_.reserve(doors.size());
  for (const DoorSpec& spec : doors) doors_.push_back(spec.make(worker_index, context, core_));
  core_.AttachDoors(doors_);
}

net::awaitable<void> Door::Receive(http::Exchange& exchange, RouteMatch match,
                                   HandedRequest request) {
  const Error error{ErrorCode::kInternal, "This door takes no handed requests.", ""};
  ErrorReply reply = RenderError(match.route, error);
  co_await exchange.Respond(static_cast<unsigned>(reply.status), "application/json",
                            std::move(reply.body));
}

Dispatcher::~Dispatcher() = default;

void Dispatcher::Shutdown() {
  for (auto& door : doors_) door->Shutdown();
  core_.Shutdown();
}

net::awaitable<void> Dispatcher::Handle(http::Exchange& exchange) {
  const auto& request = exchange.request();
  RouteMatch match = shared_.router.Match(request.method(), exchange.path());
  if (match.outcome == RouteMatch::Outcome::kFound) {
    return doors_[match.door]->Handle(exchange, match);
  }
  return AnswerUnrouted(exchange, match);
}

net::awaitable<void> Dispatcher::AnswerUnrouted(http::Exchange& exchange, RouteMatch match) {
  RequestContext ctx;
  core_.Start(exchange, match, ctx);
  const auto& request = exchange.request();
  const std::string_view path = exchange.path();
  const std::string method(request.method_string());
  Error error{ErrorCode::kNotFound, "Invalid URL (" + method + " " + std::string(path) + ")", ""};
  if (match.outcome == RouteMatch::Outcome::kMethodNotAllowed) {
    exchange.response_headers().Add("Allow", match.allow);
    error = Error{ErrorCode::kMethodNotAllowed,
                  "Method " + method + " is not allowed on " + std::string(path) + "; use " +
                      std::string(match.allow) + ".",
                  ""};
  }
  ErrorReply reply = doors_[match.door]->RenderError(match.route, error);
  co_await core_.RespondError(exchange, ctx, error.code, std::move(reply));
  core_.Finish(exchange, ctx);
}

std::string Dispatcher::RenderError(std::string_view target, const Error& error) const {
  // Errors the server found before routing have no trustworthy method: the path picks the door.
  const RouteMatch match = shared_.router.Match(Verb::unknown, http::PathOf(target));
  return doors_[match.door]->RenderError(match.route, error).body;
}

}  // namespace turnpike::core
