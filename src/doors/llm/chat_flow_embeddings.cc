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

providers::EmbeddingsCall ChatFlow::EmbeddingsCallOf() const {
  return providers::EmbeddingsCall{path_.model, api_ == ClientApi::kGeminiEmbed, ctx_.request_id};
}

bool ChatFlow::IsIdentity(const DeploymentTarget& target) const {
  if (target.provider != client_.name()) return false;
  if (!embedding() || api_ == ClientApi::kOpenAiEmbeddings) return true;
  return client_.embeddings_client()->ServesIdentity(EmbeddingsCallOf());
}

Status ChatFlow::ParseEmbeddings() {
  Result<providers::EmbeddingsRequest> parsed = Error{ErrorCode::kInternal, "", ""};
  if (api_ == ClientApi::kOpenAiEmbeddings) {
    parsed = providers::ParseEmbeddingsRequest(exchange_.request().body());
  } else {
    // Another dialect's call, read as the OpenAI request every EmbeddingsApi takes.
    Result<std::string> body =
        client_.embeddings_client()->ToOpenAiBody(exchange_.request().body(), EmbeddingsCallOf());
    if (!body.ok()) return body.error();
    parsed = providers::ParseEmbeddingsRequest(body.value());
    if (!parsed.ok()) {
      // Its errors name the OpenAI fields; the client named them otherwise.
      Error error = parsed.error();
      const std::string_view input_name = api_ == ClientApi::kCohereEmbed   ? "texts"
                                          : api_ == ClientApi::kGeminiEmbed ? "content"
                                                                            : "requests";
      if (error.param.starts_with("input")) error.param.replace(0, 5, input_name);
      if (error.param == "dimensions") {
        error.param = api_ == ClientApi::kCohereEmbed ? "output_dimension" : "outputDimensionality";
      }
      return error;
    }
  }
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
                                              const providers::Provider& upstream,
                                              bool identity) const {
  const bool client_dialect = api_ != ClientApi::kOpenAiEmbeddings;
  if (identity && client_dialect) {
    return client_.embeddings_client()->IdentityBody(exchange_.request().body(),
                                                     target.upstream_model);
  }
  const providers::EmbeddingsApi* api = upstream.embeddings();
  if (api == nullptr || target.embed_path.empty()) {
    return Error{ErrorCode::kInvalidRequest,
                 "The model `" + ctx_.model + "` does not support embeddings (its provider, " +
                     target.provider + ", has no embeddings API).",
                 "model"};
  }
  if (client_dialect) {
    // What the client's dialect carried beyond text, dimensions and the hints (client
    // embeddings headers) is refused here, by the client's name for it, for every upstream.
    if (Status checked = providers::CheckTextOnlyRequest(*embeddings_, target.provider);
        !checked.ok()) {
      return checked.error();
    }
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

net::awaitable<void> ChatFlow::RelayEmbeddings(WholeReply& reply,
                                               const providers::Provider& upstream, bool identity) {
  std::string* body = &reply.body;
  const unsigned status = reply.status;
  if (identity) {
    // The answer is already the client's: relayed untouched, only the usage read.
    if (status / 100 == 2 && api_ == ClientApi::kOpenAiEmbeddings) {
      const stream::Usage usage = stream::ExtractUsage(*body);
      SetEmbeddingsUsage(usage.prompt_tokens >= 0 ? usage.prompt_tokens : usage.total_tokens);
    } else if (status / 100 == 2) {
      // Another dialect's answer: its own parser finds its count (Cohere's billed units).
      Result<providers::Embeddings> read = upstream.embeddings()->ParseResponse(*body);
      SetEmbeddingsUsage(read.ok() ? read.value().prompt_tokens : -1);
    }
    co_await deps_.core.Respond(exchange_, ctx_, status, reply.content_type, std::move(*body));
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
  std::string rendered = api_ == ClientApi::kOpenAiEmbeddings
                             ? providers::RenderEmbeddings(answer, embeddings_->format)
                             : client_.embeddings_client()->Render(answer, EmbeddingsCallOf());
  co_await deps_.core.Respond(exchange_, ctx_, 200, kJson, std::move(rendered));
}

}  // namespace turnpike::doors::llm
