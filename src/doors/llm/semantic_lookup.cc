#include "doors/llm/semantic_lookup.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <memory>

#include "common/vectors.h"
#include "core/request_context.h"
#include "providers/embeddings.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;
namespace json = boost::json;

namespace {

// The text of a message's content: a string, or parts that are all text; nullopt otherwise.
std::optional<std::string> TextOf(const json::value& content) {
  if (const json::string* text = content.if_string()) return std::string(*text);
  const json::array* parts = content.if_array();
  if (parts == nullptr || parts->empty()) return std::nullopt;
  std::string out;
  for (const json::value& part : *parts) {
    const json::object* object = part.if_object();
    const json::value* type = object != nullptr ? object->if_contains("type") : nullptr;
    const json::value* text = object != nullptr ? object->if_contains("text") : nullptr;
    if (type == nullptr || *type != "text" || text == nullptr || !text->is_string()) {
      return std::nullopt;
    }
    if (!out.empty()) out.push_back('\n');
    out.append(text->as_string());
  }
  return out;
}

// The embeddings model's attempts: deployments whose dialect embeds, each body built by it.
class EmbedSource final : public model_call::AttemptSource {
 public:
  explicit EmbedSource(const providers::EmbeddingsRequest& request) : request_(request) {}
  bool Accepts(const model_call::DeploymentTarget& target) const override {
    return target.dialect->embeddings() != nullptr && !target.embed_path.empty();
  }
  bool IsIdentity(const model_call::DeploymentTarget&) const override { return false; }
  Result<std::string> Body(const model_call::DeploymentTarget& target,
                           const providers::Provider& dialect, bool) override {
    return dialect.embeddings()->BuildRequest(request_, target.upstream_model);
  }
  std::string_view Path(const model_call::DeploymentTarget& target, bool) const override {
    return target.embed_path;
  }

 private:
  const providers::EmbeddingsRequest& request_;
};

// The whole answer, kept (its bytes moved out in Flush, as the raw sink of chat_flow.h does).
class KeepSink final : public model_call::AnswerSink {
 public:
  void OnWhole(const model_call::WholeAnswer& answer) override {
    status = answer.status;
    storage_ = answer.storage;
  }
  net::awaitable<bool> Flush() override {
    if (storage_ != nullptr) body = std::move(*storage_);
    storage_ = nullptr;
    co_return true;
  }
  unsigned status = 0;
  std::string body;

 private:
  std::string* storage_ = nullptr;
};

// One embedding call's state, on the heap: a ModelCall is ~4 KiB (model_call.h).
struct EmbedCall {
  EmbedCall(const model_call::CallDeps& deps, providers::EmbeddingsRequest parsed)
      : request(std::move(parsed)), source(request), call(deps, ctx) {}
  core::RequestContext ctx;  // the call's own: the client's record stays the chat call's
  providers::EmbeddingsRequest request;
  EmbedSource source;
  KeepSink sink;
  model_call::ModelCall call;
  model_call::AttemptPlan plan;
};

// The single vector of a 2xx answer, normalised; nullopt for anything else.
std::optional<std::vector<float>> VectorOf(const EmbedCall& state) {
  const model_call::DeploymentTarget* target = state.call.target();
  if (target == nullptr || state.sink.status / 100 != 2) return std::nullopt;
  Result<providers::Embeddings> parsed =
      target->dialect->embeddings()->ParseResponse(state.sink.body);
  if (!parsed.ok() || parsed.value().count() != 1) return std::nullopt;
  std::vector<float> vector = std::move(parsed.value().values);
  if (!Normalize(vector)) return std::nullopt;
  return vector;
}

}  // namespace

std::optional<SemanticQuestion> ReadQuestion(std::string_view dialect, std::string_view body) {
  if (dialect != "openai" && dialect != "anthropic") return std::nullopt;
  boost::system::error_code ec;
  json::value document = json::parse(body, ec);
  json::object* root = ec ? nullptr : document.if_object();
  json::value* messages = root != nullptr ? root->if_contains("messages") : nullptr;
  json::array* list = messages != nullptr ? messages->if_array() : nullptr;
  if (list == nullptr || list->empty()) return std::nullopt;
  const json::object* last = list->back().if_object();
  const json::value* role = last != nullptr ? last->if_contains("role") : nullptr;
  const json::value* content = last != nullptr ? last->if_contains("content") : nullptr;
  if (role == nullptr || *role != "user" || content == nullptr) return std::nullopt;
  std::optional<std::string> text = TextOf(*content);
  if (!text || text->empty()) return std::nullopt;
  list->pop_back();
  return SemanticQuestion{std::move(*text), json::serialize(document)};
}

net::awaitable<std::optional<std::vector<float>>> SemanticLookup::Embed(
    std::string_view text, std::string_view request_id) {
  const std::string body = json::serialize(json::object{{"model", model_.name}, {"input", text}});
  Result<providers::EmbeddingsRequest> parsed = providers::ParseEmbeddingsRequest(body);
  if (!parsed.ok()) co_return std::nullopt;
  auto state = std::make_unique<EmbedCall>(deps_, std::move(parsed.value()));
  state->ctx.request_id = request_id;
  state->plan = model_call::PlanAttempts(model_, max_attempts_, deps_.rng);
  state->call.AddSink(state->sink);
  model_call::CallRequest request;
  request.model = &model_;
  request.plan = &state->plan;
  request.source = &state->source;
  request.purpose = model_call::Purpose::kRaw;
  const model_call::CallEnd end = co_await state->call.Run(request);
  if (end != model_call::CallEnd::kDelivered) co_return std::nullopt;
  co_return VectorOf(*state);
}

}  // namespace turnpike::doors::llm
