#include "doors/ops/ops_door.h"

#include "core/openai_errors.h"

namespace turnpike::doors::ops {
namespace net = boost::asio;
using Verb = core::Verb;

namespace {
enum Route : int { kHealth, kReady, kMetrics };
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";
}  // namespace

std::vector<core::RouteSpec> OpsDoor::Routes() {
  return {{"/healthz", {Verb::get, Verb::head}, "health", kHealth},
          {"/readyz", {Verb::get, Verb::head}, "health", kReady},
          {"/metrics", {Verb::get, Verb::head}, "metrics", kMetrics}};
}

core::ErrorReply OpsDoor::RenderError(int route, const Error& error) const {
  return {HttpStatus(error.code), core::OpenAiErrorBody(error)};
}

net::awaitable<void> OpsDoor::Handle(http::Exchange& exchange, core::RouteMatch match) {
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  if (!exchange.request().body().empty()) {
    const Error error{ErrorCode::kInvalidRequest, "A GET request must not have a body.", ""};
    co_await core_.RespondError(exchange, ctx, error.code, RenderError(match.route, error));
    core_.Finish(exchange, ctx);
    co_return;
  }
  // Bodies are named before co_await (GCC 12 mishandles temporaries in co_await expressions).
  std::string body = R"({"status":"ok"})";
  unsigned status = 200;
  std::string_view content_type = kJson;
  if (match.route == kMetrics) {
    body = core::RenderMetrics(probes_);
    content_type = kPrometheusText;
  } else if (match.route == kReady && exchange.draining()) {
    status = 503;
    body = R"({"status":"draining"})";
  }
  co_await core_.Respond(exchange, ctx, status, content_type, std::move(body));
  core_.Finish(exchange, ctx);
}

}  // namespace turnpike::doors::ops
