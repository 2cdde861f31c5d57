#include "doors/llm/chat_flow.h"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>

#include "core/openai_errors.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr std::string_view kJson = "application/json";

bool ContentTypeIs(std::string_view value, std::string_view type) {
  return value.size() >= type.size() && value.substr(0, type.size()) == type;
}

}  // namespace

net::awaitable<void> ChatFlow::Run() {
  const auto& request = exchange_.request();
  // Absent or empty: taken as JSON (the body's parse judges it).
  const std::string_view content_type =
      http::FieldValue(request, boost::beast::http::field::content_type);
  if (!content_type.empty() && !ContentTypeIs(content_type, kJson)) {
    const Error error{ErrorCode::kUnsupportedMediaType,
                      "Content-Type must be application/json, not " + std::string(content_type),
                      ""};
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
  if (deps_.response_cache) OfferToCache();
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

void ChatFlow::OfferToCache() {
  if (embedding() || counting_tokens()) return;
  ctx_.cache.request = {&client_, &exchange_.request(), info_.stream, info_.include_usage};
}

void ChatFlow::ReadGoogleApiKey() {
  // Gemini clients send the key as x-goog-api-key, or as ?key= in the URL; either carries the
  // virtual key, read as an x-api-key would be. Views into the request, which outlives ctx_.
  if (!ctx_.x_api_key.empty() || !ctx_.authorization.empty()) return;
  const auto& request = exchange_.request();
  if (const std::string_view key = http::FieldValue(request, "x-goog-api-key"); !key.empty()) {
    ctx_.x_api_key = key;
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

namespace {
// Abandons the call when the client goes away, for as long as it runs.
class WatchScope {
 public:
  WatchScope(http::Exchange& exchange, model_call::ModelCall& call) : exchange_(exchange) {
    exchange_.WatchClient([&call] { call.Abandon(); });
  }
  ~WatchScope() { exchange_.StopWatching(); }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;

 private:
  http::Exchange& exchange_;
};
}  // namespace

void RawAnswerSink::OnWhole(const model_call::WholeAnswer& answer) {
  reply_.status = answer.status;
  reply_.content_type = answer.content_type;
  storage_ = answer.storage;
}

net::awaitable<bool> RawAnswerSink::Flush() {
  if (storage_ == nullptr) co_return true;
  reply_.body = std::move(*storage_);
  storage_ = nullptr;
  co_await flow_.RelayRaw(reply_);
  co_return true;
}

net::awaitable<void> ChatFlow::RelayRaw(WholeReply& reply) {
  if (counting_tokens()) {
    co_await RelayCountTokens(reply);
    co_return;
  }
  const DeploymentTarget& target = *ctx_.target;
  const bool identity = IsIdentity(target);
  co_await RelayEmbeddings(reply, identity ? client_ : *target.dialect, identity);
}

bool ChatFlow::Accepts(const DeploymentTarget& target) const {
  // A token count goes only where the client's dialect is spoken (CountTokens checked one is).
  return !counting_tokens() || target.provider == client_.name();
}

std::string_view ChatFlow::Path(const DeploymentTarget& target, bool stream) const {
  if (embedding()) return target.embed_path;
  if (counting_tokens()) return target.count_tokens_path;
  return stream ? target.stream_path : target.chat_path;
}

net::awaitable<void> ChatFlow::Attempts() {
  model_call::ModelCall& call = call_.emplace(deps_.call, ctx_);
  model_call::CallRequest request;
  request.model = ctx_.model_entry;
  request.plan = &ctx_.attempts;
  request.source = this;
  request.client = &client_;
  request.stream = info_.stream;
  const bool raw = embedding() || counting_tokens();
  request.purpose = raw ? model_call::Purpose::kRaw : model_call::Purpose::kChat;

  ClientSinkOptions options;
  options.client = &client_;
  options.openai_chat = api_ == ClientApi::kOpenAiChat;
  options.include_usage = info_.include_usage;
  options.client_body = exchange_.request().body();
  options.client_document = document_;
  options.server_timing = deps_.config.server.server_timing;
  if (raw) {
    call.AddSink(raw_sink_.emplace(*this));
  } else {
    // Leading a cache key: the answer is recorded for the entry and for followers, the client's
    // translated frames included (cache_ticket.h).
    if (ctx_.cache.leading()) options.recording = &ctx_.cache.fan_out->recording();
    call.AddSink(client_sink_.emplace(exchange_, deps_.core, ctx_, options));
    if (ctx_.cache.leading()) call.AddSink(*ctx_.cache.fan_out);
  }
  model_call::CallEnd end = model_call::CallEnd::kAbandoned;
  {
    WatchScope watch(exchange_, call);
    end = co_await call.Run(request);
  }
  if (end == model_call::CallEnd::kFailed) {
    model_call::CallFailure failure = call.failure();
    co_await GiveUp(std::move(failure));
  }
}

net::awaitable<void> ChatFlow::GiveUp(model_call::CallFailure failure) {
  if (std::optional<model_call::CallFailure::Passed>& answer = failure.answer) {
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
  const Error final_error = failure.error.value_or(
      Error{ErrorCode::kUpstreamUnavailable, "No upstream attempt was made.", ""});
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

}  // namespace turnpike::doors::llm
