// ChatFlow's paths through providers/: translated requests and answers, and the Anthropic and
// Responses identity paths (bytes forwarded, usage read). The OpenAI chat identity path never
// comes here.
#include <boost/asio/use_awaitable.hpp>

#include "common/clock.h"
#include "doors/llm/chat_flow.h"
#include "doors/llm/dialect_relay.h"
#include "providers/openai/stream_codec.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr std::string_view kJson = "application/json";

// The max_tokens a provider that requires one gets when the client gave none: the upstream
// model's max output from the request's governance snapshot (admin overrides included), else
// from config and the built-in table (pre-computed in the route table).
int64_t DefaultMaxTokens(const core::RequestContext& ctx, const DeploymentTarget& target) {
  if (ctx.snapshot) {
    const governance::ModelPrice* price = ctx.snapshot->FindPrice(target.upstream_model);
    if (price != nullptr && price->max_output_tokens > 0) return price->max_output_tokens;
  }
  return target.default_max_tokens;
}

int64_t OutputBytes(const providers::Response& response) {
  int64_t bytes = static_cast<int64_t>(response.text.size());
  for (const providers::ToolCall& call : response.tool_calls) {
    bytes += static_cast<int64_t>(call.name.size() + call.arguments.size());
  }
  return bytes;
}
}  // namespace

Status ChatFlow::ParsePivot() {
  Result<boost::json::object> parsed = client_.ParseRequest(exchange_.request().body());
  if (!parsed.ok()) return parsed.error();
  boost::json::object& pivot = pivot_.emplace(std::move(parsed.value()));
  if (!path_.model.empty()) pivot["model"] = path_.model;
  if (path_.stream) {
    pivot["stream"] = true;
    pivot["stream_options"] = boost::json::object{{"include_usage", true}};
  }
  // ParseRequest guarantees a string model; the rest is optional.
  info_.model = std::string(pivot.at("model").as_string());
  const boost::json::value* stream = pivot.if_contains("stream");
  info_.stream = stream != nullptr && *stream == true;
  const boost::json::value* options = pivot.if_contains("stream_options");
  const boost::json::value* include = options != nullptr && options->is_object()
                                          ? options->as_object().if_contains("include_usage")
                                          : nullptr;
  info_.has_stream_options = options != nullptr;
  info_.include_usage = include != nullptr && *include == true;
  const boost::json::value* max = pivot.if_contains("max_completion_tokens");
  if (max != nullptr && max->is_int64()) info_.max_tokens = max->as_int64();
  return Ok{};
}

Result<std::string> ChatFlow::BuildBody(const DeploymentTarget& target,
                                        const providers::Provider& dialect, bool identity) {
  if (embedding()) return BuildEmbeddings(target, dialect, identity);
  if (!identity) return TranslateRequest(target, dialect);
  if (api_ == ClientApi::kOpenAiChat || api_ == ClientApi::kAnthropicMessages ||
      api_ == ClientApi::kAnthropicCountTokens) {
    return providers::openai::BuildUpstreamChatBody(
        exchange_.request().body(), info_, target.upstream_model, api_ == ClientApi::kOpenAiChat);
  }
  // A pivot-only API (Responses): its dialect splices its own body.
  return client_.IdentityBody(exchange_.request().body(), target.upstream_model);
}

Result<std::string> ChatFlow::TranslateRequest(const DeploymentTarget& target,
                                               const providers::Provider& upstream) {
  if (!pivot_) {
    Result<boost::json::object> parsed = client_.ParseRequest(exchange_.request().body());
    if (!parsed.ok()) return parsed.error();
    pivot_.emplace(std::move(parsed.value()));
  }
  providers::UpstreamRequestOptions options;
  options.upstream_model = target.upstream_model;
  options.default_max_tokens = DefaultMaxTokens(ctx_, target);
  return upstream.BuildRequest(*pivot_, options);
}

net::awaitable<void> ChatFlow::RelayDialectWhole(upstream::Call& call,
                                                 const providers::Provider& upstream,
                                                 bool identity) {
  std::optional<std::string> body = co_await ReadWholeAnswer(call);
  if (!body) co_return;
  const unsigned status = call.status();
  if (status / 100 != 2 && !identity) {
    const Error error = upstream.ParseError(static_cast<int>(status), *body);
    co_await Fail(error);
    co_return;
  }
  if (status / 100 == 2) {
    Result<providers::Response> parsed = upstream.ParseResponse(*body);
    if (parsed.ok()) {
      // Cohere's answers name no model: the client is told the deployment's.
      if (parsed.value().model.empty() && ctx_.target != nullptr) {
        parsed.value().model = ctx_.target->upstream_model;
      }
      const providers::TokenUsage& u = parsed.value().usage;
      ctx_.usage = {u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_creation_tokens,
                    u.reasoning_tokens};
      ctx_.output_bytes = OutputBytes(parsed.value());
      ctx_.finish_reason = providers::openai::FinishReasonName(parsed.value().finish);
      if (!identity) {
        providers::EncoderOptions render;
        render.created = UnixSeconds();
        render.client_body = exchange_.request().body();
        std::string rendered = client_.RenderWholeResponse(parsed.value(), render);
        co_await deps_.core.Respond(exchange_, ctx_, 200, kJson, std::move(rendered));
        co_return;
      }
    } else if (!identity) {
      const Error error = parsed.error();
      co_await Fail(error);
      co_return;
    }
  }
  // Identity: the upstream's answer as it came (an unreadable one too: the client judges it).
  std::string content_type(call.header("content-type"));
  if (content_type.empty()) content_type = kJson;
  co_await deps_.core.Respond(exchange_, ctx_, status, content_type, std::move(*body));
}

net::awaitable<void> ChatFlow::RelayDialectStream(upstream::Call& call,
                                                  const providers::Provider& upstream,
                                                  bool identity) {
  DialectRelayOptions options;
  options.client = &client_;
  options.upstream = &upstream;
  options.translate = !identity;
  options.include_usage = info_.include_usage;
  options.client_body = exchange_.request().body();
  if (ctx_.target != nullptr) options.upstream_model = ctx_.target->upstream_model;
  options.keepalive = deps_.config.server.sse_keepalive;
  options.server_timing = deps_.config.server.server_timing;
  DialectRelay relay(exchange_, call, ctx_, options);
  co_await relay.Run();
}

}  // namespace turnpike::doors::llm
