// ChatFlow's token-count path (Anthropic POST /v1/messages/count_tokens, Gemini :countTokens):
// forwarded to a deployment of the client's dialect when the model has one, else answered from
// the gateway's estimate. Billing rules: chat_flow.h.
#include <boost/asio/use_awaitable.hpp>

#include "doors/llm/chat_flow.h"
#include "governance/cost.h"
#include "providers/json_text.h"
#include "providers/scratch_json.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kCountHeader = "x-turnpike-token-count";
}  // namespace

Status ChatFlow::ParseCountTokens() {
  const std::string_view body = exchange_.request().body();
  if (api_ == ClientApi::kAnthropicCountTokens) {
    // The Messages request without max_tokens: read as /v1/messages reads its body.
    Result<providers::openai::ChatRequestInfo> info = providers::openai::InspectChatRequest(body);
    if (!info.ok()) return info.error();
    info_ = std::move(info.value());
  } else {
    // Gemini: the model is in the URL; the body ({contents} or {generateContentRequest}) must
    // be a JSON object, and goes upstream untouched.
    providers::ScratchJson scratch;
    boost::system::error_code ec;
    const boost::json::value doc = scratch.Parse(body, ec);
    if (ec || !doc.is_object()) {
      return Error{ErrorCode::kInvalidRequest,
                   "Invalid JSON payload received: the body is not a JSON object.", ""};
    }
    info_.model = std::string(path_.model);
  }
  info_.stream = false;
  info_.max_tokens = 0;  // nothing is generated: nothing reserved
  return Ok{};
}

net::awaitable<void> ChatFlow::CountTokens() {
  bool forwardable = false;
  for (int a = 0; a < ctx_.attempts.count && !forwardable; ++a) {
    const DeploymentTarget& target = ctx_.model_entry->deployments[ctx_.attempts.order[a]];
    forwardable = target.provider == client_.name() && !target.count_tokens_path.empty();
  }
  if (forwardable) {
    co_await Attempts();
  } else {
    co_await AnswerTokenEstimate();
  }
}

net::awaitable<void> ChatFlow::AnswerTokenEstimate() {
  // The admission's rule (governance/cost.h): ceil(bytes / kPromptBytesPerToken), deliberately
  // high, over the whole body (JSON syntax included).
  const int64_t bytes = static_cast<int64_t>(exchange_.request().body().size());
  const int64_t tokens =
      (bytes + governance::kPromptBytesPerToken - 1) / governance::kPromptBytesPerToken;
  std::string body =
      api_ == ClientApi::kAnthropicCountTokens ? R"({"input_tokens":)" : R"({"totalTokens":)";
  providers::AppendInt(body, tokens);
  body.push_back('}');
  exchange_.response_headers().Add(kCountHeader, "estimate");
  co_await deps_.core.Respond(exchange_, ctx_, 200, kJson, std::move(body));
}

net::awaitable<void> ChatFlow::RelayCountTokens(WholeReply& answer) {
  // The upstream's answer as it came: same dialect, bytes untouched; no usage, nothing billed.
  exchange_.response_headers().Add(kCountHeader, "upstream");
  co_await deps_.core.Respond(exchange_, ctx_, answer.status, answer.content_type,
                              std::move(answer.body));
}

}  // namespace turnpike::doors::llm
