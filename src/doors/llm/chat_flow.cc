#include "doors/llm/chat_flow.h"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>

#include "core/openai_errors.h"
#include "doors/llm/stream_relay.h"
#include "stream/chat_accumulator.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr size_t kMaxRetryableBody = 64 * 1024;
constexpr std::string_view kJson = "application/json";

bool IsRetryable(unsigned status) { return status == 429 || status >= 500; }

bool ContentTypeIs(std::string_view value, std::string_view type) {
  return value.size() >= type.size() && value.substr(0, type.size()) == type;
}

// Stops the client watch when the attempt's Call goes out of scope.
class WatchScope {
 public:
  WatchScope(http::Exchange& exchange, upstream::Call& call) : exchange_(exchange) {
    exchange_.WatchClient([&call] { call.Cancel(); });
  }
  ~WatchScope() { exchange_.StopWatching(); }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;

 private:
  http::Exchange& exchange_;
};

}  // namespace

net::awaitable<void> ChatFlow::Run() {
  const auto& request = exchange_.request();
  auto content_type = request.find(boost::beast::http::field::content_type);
  if (content_type != request.end() && !ContentTypeIs(content_type->value(), kJson)) {
    const Error error{
        ErrorCode::kUnsupportedMediaType,
        "Content-Type must be application/json, not " + std::string(content_type->value()), ""};
    co_await Fail(error);
    co_return;
  }
  if (api_ == ClientApi::kOpenAiChat || api_ == ClientApi::kAnthropicMessages) {
    Result<providers::openai::ChatRequestInfo> info =
        providers::openai::InspectChatRequest(request.body());
    if (!info.ok()) {
      co_await Fail(info.error());
      co_return;
    }
    info_ = std::move(info.value());
  } else if (counting_tokens()) {
    if (Status parsed = ParseCountTokens(); !parsed.ok()) {
      co_await Fail(parsed.error());
      co_return;
    }
  } else if (embedding()) {
    if (Status parsed = ParseEmbeddings(); !parsed.ok()) {
      co_await Fail(parsed.error());
      co_return;
    }
  } else if (Status parsed = ParsePivot(); !parsed.ok()) {
    co_await Fail(parsed.error());
    co_return;
  }
  ctx_.model = info_.model;
  ctx_.stream = info_.stream;
  // The body's size, or more when a parser found more (token ids are shorter than 3 bytes each).
  // A token count bills nothing: nothing is reserved for it.
  if (!counting_tokens()) {
    ctx_.billing.prompt_bytes =
        std::max(ctx_.billing.prompt_bytes, static_cast<int64_t>(request.body().size()));
  }
  if (info_.max_tokens >= 0) ctx_.billing.max_tokens = info_.max_tokens;
  core::WorkerCore::ReadCredentials(exchange_, ctx_);
  if (api_ == ClientApi::kGeminiGenerate || api_ == ClientApi::kGeminiCountTokens ||
      api_ == ClientApi::kGeminiEmbed || api_ == ClientApi::kGeminiBatchEmbed) {
    ReadGoogleApiKey();
  }
  ctx_.phases.parsed = core::Clock::now();

  // The model's route is looked up once, here: the governance filter prices by it and the
  // route filter (after authentication) answers 404 for a model the table does not have.
  ctx_.model_entry = deps_.routes.Find(ctx_.model);
  ctx_.billing.model = ctx_.model;
  if (ctx_.model_entry != nullptr) {
    ctx_.billing.price_fallback = ctx_.model_entry->deployments.front().upstream_model;
  }

  core::FilterStatus status = deps_.chain.Run(ctx_);
  if (status == core::FilterStatus::kSuspend) status = co_await deps_.chain.Resume(ctx_);
  if (status == core::FilterStatus::kRespond) {
    const core::RenderError render = [this](const Error& error) {
      providers::ErrorReply reply = ClientError(error);
      return core::ErrorReply{reply.status, std::move(reply.body)};
    };
    co_await deps_.core.AnswerFromChain(exchange_, ctx_, render);
  } else {
    ctx_.phases.admitted = core::Clock::now();
    if (counting_tokens()) {
      co_await CountTokens();
    } else {
      co_await Attempts();
    }
  }
  deps_.chain.Complete(ctx_);
}

void ChatFlow::ReadGoogleApiKey() {
  // Gemini clients send the key as x-goog-api-key, or as ?key= in the URL; either carries the
  // virtual key, read as an x-api-key would be. Views into the request, which outlives ctx_.
  if (!ctx_.x_api_key.empty() || !ctx_.authorization.empty()) return;
  const auto& request = exchange_.request();
  if (auto header = request.find("x-goog-api-key"); header != request.end()) {
    ctx_.x_api_key = std::string_view(header->value().data(), header->value().size());
    return;
  }
  const std::string_view target(request.target().data(), request.target().size());
  const size_t query = target.find('?');
  if (query == std::string_view::npos) return;
  std::string_view rest = target.substr(query + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (pair.starts_with("key=")) {
      ctx_.x_api_key = pair.substr(4);
      return;
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
}

void ChatFlow::MarkClientGone() {
  ctx_.status = 499;
  ctx_.error = ErrorCode::kUpstreamUnavailable;
}

net::awaitable<bool> ChatFlow::Sleep(std::chrono::milliseconds delay) {
  if (delay.count() <= 0) co_return !exchange_.client_gone();
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(delay);
  exchange_.WatchClient([&timer] { timer.cancel(); });
  [[maybe_unused]] auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
  exchange_.StopWatching();
  co_return !exchange_.client_gone();
}

net::awaitable<void> ChatFlow::Attempts() {
  const ModelEntry& model = *ctx_.model_entry;
  const config::RoutingConfig& routing = deps_.config.routing;
  std::optional<Error> last_error;
  std::optional<RetryableAnswer> last_answer;

  int made = 0;  // attempts made so far
  for (int a = 0; a < ctx_.attempts.count; ++a) {
    const size_t index = ctx_.attempts.order[a];
    const DeploymentTarget& target = model.deployments[index];
    // A token count goes only where the client's dialect is spoken (CountTokens checked one is).
    if (counting_tokens() && target.provider != client_.name()) continue;
    if (made > 0) {
      deps_.retries.Add();
      std::chrono::milliseconds delay =
          Backoff(made, routing.backoff_base, routing.backoff_max, deps_.rng);
      if (last_answer && last_answer->retry_after_seconds >= 0) {
        const std::chrono::milliseconds retry_after{last_answer->retry_after_seconds * 1000};
        if (retry_after <= routing.max_retry_after) {
          delay = std::max(delay, retry_after);
        } else if (last_answer->deployment == index) {
          break;  // the same deployment asked for a longer pause than we may wait
        }
      }
      if (!co_await Sleep(delay)) {
        MarkClientGone();
        co_return;
      }
    }
    ctx_.target = &target;
    ctx_.deployment = target.name;
    ctx_.attempts_made = ++made;

    // Identity (same dialect both ends): the client's bytes with the model spliced in.
    const bool identity = IsIdentity(target);
    const providers::Provider* dialect = identity ? &client_ : target.dialect;
    Result<std::string> body = BuildBody(target, *dialect, identity);
    if (!body.ok()) {
      co_await Fail(body.error());
      co_return;
    }
    upstream::OutgoingRequest out;
    out.target = embedding()         ? target.embed_path
                 : counting_tokens() ? target.count_tokens_path
                 : info_.stream      ? target.stream_path
                                     : target.chat_path;
    out.body = body.value();
    const std::string_view stream_type = providers::StreamContentType(dialect->stream_framing());
    out.accept = info_.stream ? stream_type : "application/json";
    out.authorization = target.authorization;
    out.request_id = ctx_.request_id;
    out.extra_headers = target.extra_headers;

    upstream::Call call(deps_.pool, target.origin, deps_.call_options);
    WatchScope watch(exchange_, call);
    Status started = co_await call.Start(out);
    ctx_.phases.upstream_connected =
        call.reused() ? core::Clock::time_point{} : call.connected_at();
    ctx_.phases.upstream_sent = call.request_sent_at();
    ctx_.phases.upstream_head = call.head_received_at();
    if (exchange_.client_gone()) {
      MarkClientGone();
      co_return;
    }
    if (!started.ok()) {
      last_error = started.error();
      last_answer.reset();
      continue;
    }
    const unsigned status = call.status();
    ctx_.upstream_status = static_cast<int>(status);
    if (IsRetryable(status)) {
      Result<std::string> answer_body = co_await call.ReadAll(kMaxRetryableBody);
      if (exchange_.client_gone()) {
        MarkClientGone();
        co_return;
      }
      last_answer = RetryableAnswer{status,
                                    std::string(call.header("content-type")),
                                    answer_body.ok() ? std::move(answer_body.value()) : "",
                                    ParseRetryAfterSeconds(call.header("retry-after")),
                                    index,
                                    identity ? nullptr : dialect};
      last_error.reset();
      continue;
    }
    const bool stream = info_.stream && status / 100 == 2 &&
                        ContentTypeIs(call.header("content-type"), stream_type);
    if (counting_tokens()) {
      co_await RelayCountTokens(call);
    } else if (embedding()) {
      co_await RelayEmbeddings(call, *dialect, identity);
    } else if (identity && api_ == ClientApi::kOpenAiChat) {
      if (stream) {
        co_await RelayStream(call);
      } else {
        co_await RelayWhole(call);
      }
    } else if (stream) {
      co_await RelayDialectStream(call, *dialect, identity);
    } else {
      co_await RelayDialectWhole(call, *dialect, identity);
    }
    co_return;
  }
  co_await GiveUp(last_error, last_answer);
}

net::awaitable<void> ChatFlow::GiveUp(const std::optional<Error>& error,
                                      std::optional<RetryableAnswer>& answer) {
  if (answer) {
    // Pass the last upstream answer on as it was: its status and OpenAI-shaped body.
    if (answer->retry_after_seconds >= 0) {
      exchange_.response_headers().Add("Retry-After", int64_t{answer->retry_after_seconds});
    }
    ctx_.error = answer->status == 429 ? ErrorCode::kRateLimited : ErrorCode::kUpstreamBadResponse;
    if (answer->translate_from != nullptr) {
      // Another dialect's error: read it, answer it in the client's shape and status.
      const Error parsed =
          answer->translate_from->ParseError(static_cast<int>(answer->status), answer->body);
      ctx_.error = parsed.code;
      providers::ErrorReply reply = ClientError(parsed);
      co_await deps_.core.Respond(exchange_, ctx_, static_cast<unsigned>(reply.status), kJson,
                                  std::move(reply.body));
      co_return;
    }
    if (ContentTypeIs(answer->content_type, kJson) && !answer->body.empty()) {
      co_await deps_.core.Respond(exchange_, ctx_, answer->status, kJson, std::move(answer->body));
      co_return;
    }
    Error wrapped{answer->status == 429 ? ErrorCode::kRateLimited : ErrorCode::kUpstreamBadResponse,
                  "The upstream provider answered HTTP " + std::to_string(answer->status) + ".",
                  ""};
    ctx_.error = wrapped.code;
    std::string body = ClientError(wrapped).body;
    co_await deps_.core.Respond(exchange_, ctx_, answer->status, kJson, std::move(body));
    co_return;
  }
  const Error final_error =
      error.value_or(Error{ErrorCode::kUpstreamUnavailable, "No upstream attempt was made.", ""});
  co_await Fail(final_error);
}

providers::ErrorReply ChatFlow::ClientError(const Error& error) const {
  if (api_ == ClientApi::kOpenAiChat || api_ == ClientApi::kOpenAiEmbeddings) {
    return {HttpStatus(error.code), core::OpenAiErrorBody(error)};
  }
  providers::ErrorReply reply = client_.RenderError(error);
  if ((api_ == ClientApi::kCohereChat || api_ == ClientApi::kCohereEmbed) &&
      reply.body.starts_with('{')) {
    // Cohere's errors carry an id for support requests: the gateway's request id (hex digits).
    reply.body.insert(1, "\"id\":\"" + std::string(ctx_.request_id) + "\",");
  }
  return reply;
}

net::awaitable<void> ChatFlow::Fail(const Error& error) {
  ctx_.error = error.code;
  providers::ErrorReply reply = ClientError(error);
  co_await deps_.core.Respond(exchange_, ctx_, static_cast<unsigned>(reply.status), kJson,
                              std::move(reply.body));
}

net::awaitable<std::optional<std::string>> ChatFlow::ReadWholeAnswer(upstream::Call& call) {
  Result<std::string> body = co_await call.ReadAll(deps_.config.upstream.max_response_bytes);
  if (exchange_.client_gone()) {
    MarkClientGone();
    co_return std::nullopt;
  }
  if (!body.ok()) {
    co_await Fail(body.error());
    co_return std::nullopt;
  }
  co_return std::move(body.value());
}

net::awaitable<void> ChatFlow::RelayWhole(upstream::Call& call) {
  std::optional<std::string> body = co_await ReadWholeAnswer(call);
  if (!body) co_return;
  const unsigned status = call.status();
  if (status / 100 == 2) {
    stream::Usage usage = stream::ExtractUsage(*body);
    ctx_.usage = {usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, -1,
                  usage.reasoning_tokens};
    ctx_.output_bytes = static_cast<int64_t>(body->size());
  }
  std::string content_type(call.header("content-type"));
  if (content_type.empty()) content_type = kJson;
  co_await deps_.core.Respond(exchange_, ctx_, status, content_type, std::move(*body));
}

net::awaitable<void> ChatFlow::RelayStream(upstream::Call& call) {
  StreamRelay relay(exchange_, call, ctx_, info_.include_usage, deps_.config.server.sse_keepalive,
                    deps_.config.server.server_timing);
  co_await relay.Run();
}

}  // namespace turnpike::doors::llm
