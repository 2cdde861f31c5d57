// GET /v1/responses/{id}?stream=true[&starting_after=N] (agent_door.h): a background turn's
// events after sequence number N (all of them without it), in order, through the terminal
// event. (FollowLog also serves a background turn created with stream: true: turn_run.cc.)
//
// Live, on the replica running the turn: the turn's EventLog (event_log.h) is replayed from
// N + 1, then followed, the resume waiting on a timer that the next logged event cancels (from
// the turn's worker, by a post to this one); a keep-alive comment every kKeepAlive while
// nothing comes, which is also when a gone client is noticed. Once the turn has ended and
// stored, its stream is read from the store (events, agent_store.h): the same bytes. A turn
// running on another replica, or one whose log overflowed, has no stream to give here: a 400
// (cross-replica resume is a later part).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <charconv>

#include "doors/agents/agent_door.h"
#include "doors/agents/event_log.h"

namespace turnpike::agents {
namespace net = boost::asio;

namespace {

constexpr std::chrono::seconds kKeepAlive{15};
constexpr std::string_view kSse = "text/event-stream";

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

// starting_after: -1 when absent.
Result<int64_t> StartingAfter(std::string_view target) {
  boost::system::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target);
  if (!url) return Invalid("The request target is not a valid URL.", "");
  for (auto param : url->params()) {
    if (param.key != "starting_after") continue;
    int64_t after = -1;
    const std::string& v = param.value;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), after);
    if (ec != std::errc() || end != v.data() + v.size() || after < -1) {
      return Invalid("`starting_after` must be a sequence number.", "starting_after");
    }
    return after;
  }
  return int64_t{-1};
}

}  // namespace

net::awaitable<bool> AgentDoor::FollowLog(http::Exchange& exchange, std::shared_ptr<EventLog> log,
                                          int64_t after) {
  net::any_io_executor executor = co_await net::this_coro::executor;
  int64_t seen = after;
  for (;;) {
    EventLog::Read read = log->After(seen);
    if (!read.frames.empty()) {
      const bool sent = co_await exchange.Write(read.frames);
      if (!sent) co_return false;
      seen = read.last;
      continue;
    }
    if (read.overflowed) {
      const bool sent = co_await exchange.Write(
          "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"This "
          "turn's stream outgrew what is kept for resuming it.\",\"param\":null}\n\n");
      co_return sent;
    }
    if (read.finished) co_return true;
    auto timer = std::make_shared<net::steady_timer>(executor);
    timer->expires_after(kKeepAlive);
    const bool waits =
        log->Wait(seen, [executor, timer] { net::post(executor, [timer] { timer->cancel(); }); });
    if (!waits) continue;
    auto [ec] = co_await timer->async_wait(net::as_tuple(net::use_awaitable));
    if (!ec) {
      const bool alive = co_await exchange.Write(": keep-alive\n\n");
      if (!alive) co_return false;
    }
  }
}

net::awaitable<void> AgentDoor::ResumeStream(http::Exchange& exchange, core::RequestContext& ctx,
                                             std::string id, std::string tenant) {
  Result<int64_t> after = StartingAfter(exchange.target());
  if (!after.ok()) {
    const Error error = after.error();
    co_await core_.RespondError(exchange, ctx, error.code, RenderError(-1, error));
    co_return;
  }
  std::shared_ptr<EventLog> log = shared_.turns.FindLog(id, tenant);
  std::string stored;
  if (log == nullptr) {
    auto get = [id](AgentStore& s) { return s.GetResponseEvents(id); };
    Result<std::optional<StoredStream>> row = co_await WithAgentStore<std::optional<StoredStream>>(
        context_.store, std::move(get), store::JobLane::kRead);
    std::optional<Error> error;
    if (!row.ok()) {
      error = row.error();
    } else if (!row.value() || (*row)->tenant != tenant) {
      error = Error{ErrorCode::kNotFound, "Response with id '" + id + "' not found.", ""};
    } else if ((*row)->events.empty()) {
      error =
          Invalid((*row)->status == "queued" || (*row)->status == "in_progress"
                      ? "This response runs on another replica; its stream is resumed only there."
                      : "This response has no stored stream: only a background turn's is kept.",
                  "stream");
    }
    if (error) {
      co_await core_.RespondError(exchange, ctx, error->code, RenderError(-1, *error));
      co_return;
    }
    stored = std::move((*row)->events);
  }
  const bool started = co_await exchange.StartStream(200, kSse);
  ctx.status = 200;
  bool ok = started;
  if (ok && log != nullptr) {
    ok = co_await FollowLog(exchange, log, *after);
  } else if (ok) {
    ok = co_await exchange.Write(EventLog::FramesAfter(stored, *after));
  }
  if (ok) ok = co_await exchange.EndStream();
  if (!ok) ctx.status = 499;
}

}  // namespace turnpike::agents
