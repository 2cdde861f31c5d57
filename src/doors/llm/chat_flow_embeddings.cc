// ChatFlow's embeddings path (POST /v1/embeddings): the request parsed once, its body per
// deployment through the dialect's EmbeddingsApi, the whole answer relayed (identity) or
// translated. Admission, attempts, failover and settlement are ChatFlow's own.
#include <boost/asio/use_awaitable.hpp>

#include "doors/llm/chat_flow.h"
#include "governance/cost.h"
#include "stream/chat_accumulator.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;

namespace {
constexpr std::string_view kJson = "application/json";
}  // namespace

Status ChatFlow::ParseEmbeddings() {
  Result<providers::EmbeddingsRequest> parsed =
      providers::ParseEmbeddingsRequest(exchange_.request().body());
  if (!parsed.ok()) return parsed.error();
  const providers::EmbeddingsRequest& request = embeddings_.emplace(std::move(parsed.value()));
  info_.model = request.model;
  info_.stream = false;
  info_.max_tokens = 0;  // embeddings produce no output tokens: none are reserved
  // Token ids are counted one token each, whatever their digits.
  ctx_.billing.prompt_bytes = request.input_tokens * governance::kPromptBytesPerToken;
  return Ok{};
}

Result<std::string> ChatFlow::BuildEmbeddings(const DeploymentTarget& target,
                                              const providers::Provider& upstream) const {
  const providers::EmbeddingsApi* api = upstream.embeddings();
  if (api == nullptr || target.embed_path.empty()) {
    return Error{ErrorCode::kInvalidRequest,
                 "The model `" + ctx_.model + "` does not support embeddings (its provider, " +
                     target.provider + ", has no embeddings API).",
                 "model"};
  }
  return api->BuildRequest(*embeddings_, target.upstream_model);
}

void ChatFlow::SetEmbeddingsUsage(int64_t prompt_tokens) {
  ctx_.usage.completion_tokens = 0;
  if (prompt_tokens >= 0) {
    ctx_.usage.prompt_tokens = prompt_tokens;
    return;
  }
  // No count reported: never settle at $0; the prompt estimate, flagged (governance_filter.h).
  ctx_.usage.prompt_tokens =
      ctx_.admission.active()
          ? ctx_.admission.estimate().prompt_tokens
          : governance::EstimateMaxCost(ctx_.billing.prompt_bytes, 0, nullptr).prompt_tokens;
  ctx_.usage_estimated = true;
}

net::awaitable<void> ChatFlow::RelayEmbeddings(upstream::Call& call,
                                               const providers::Provider& upstream, bool identity) {
  std::optional<std::string> body = co_await ReadWholeAnswer(call);
  if (!body) co_return;
  const unsigned status = call.status();
  if (identity) {
    // The answer is already the client's: relayed untouched, only `usage` read.
    if (status / 100 == 2) {
      const stream::Usage usage = stream::ExtractUsage(*body);
      SetEmbeddingsUsage(usage.prompt_tokens >= 0 ? usage.prompt_tokens : usage.total_tokens);
    }
    std::string content_type(call.header("content-type"));
    if (content_type.empty()) content_type = kJson;
    co_await deps_.core.Respond(exchange_, ctx_, status, content_type, std::move(*body));
    co_return;
  }
  if (status / 100 != 2) {
    const Error error = upstream.ParseError(static_cast<int>(status), *body);
    co_await Fail(error);
    co_return;
  }
  Result<providers::Embeddings> parsed = upstream.embeddings()->ParseResponse(*body);
  if (parsed.ok() && parsed.value().count() != embeddings_->input_count) {
    parsed = Error{ErrorCode::kUpstreamBadResponse,
                   "The upstream answer has " + std::to_string(parsed.value().count()) +
                       " embeddings for " + std::to_string(embeddings_->input_count) + " inputs.",
                   ""};
  }
  if (!parsed.ok()) {
    const Error error = parsed.error();
    co_await Fail(error);
    co_return;
  }
  providers::Embeddings& answer = parsed.value();
  if (answer.model.empty()) answer.model = ctx_.target->upstream_model;
  // The client is told the provider's count (0 when it reported none); an estimate only bills.
  SetEmbeddingsUsage(answer.prompt_tokens);
  std::string rendered = providers::RenderEmbeddings(answer, embeddings_->format);
  co_await deps_.core.Respond(exchange_, ctx_, 200, kJson, std::move(rendered));
}

}  // namespace turnpike::doors::llm
