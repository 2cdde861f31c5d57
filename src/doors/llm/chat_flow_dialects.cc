// ChatFlow's request bodies: the identity splices and the translation through the pivot.
#include <boost/asio/use_awaitable.hpp>

#include "doors/llm/chat_flow.h"
#include "model_call/pivot_source.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

Status ChatFlow::ParsePivot() {
  Result<boost::json::object> parsed = document_ != nullptr
                                           ? client_.ParseRequestDocument(*document_)
                                           : client_.ParseRequest(exchange_.request().body());
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

Result<std::string> ChatFlow::Body(const DeploymentTarget& target,
                                   const providers::Provider& dialect, bool identity) {
  ctx_.target = &target;
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
  return model_call::TranslatedBody(*pivot_, target, upstream, ctx_);
}

}  // namespace turnpike::doors::llm
