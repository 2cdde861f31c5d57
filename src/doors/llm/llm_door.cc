#include "doors/llm/llm_door.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/block_cache.h"
#include "core/openai_errors.h"
#include "doors/llm/cache_filter.h"
#include "doors/llm/route_filter.h"

namespace turnpike::doors::llm {
namespace net = boost::asio;
using Verb = core::Verb;

namespace {

// A request's context and flow: several KiB, kept off Handle's coroutine frame, which Asio
// would otherwise malloc (and free) per request (common/block_cache.h).
struct RequestState final : CachedBlock {
  LlmContext ctx;
  std::optional<ChatFlow> flow;
};

constexpr std::string_view kJson = "application/json";
constexpr uint32_t kSeedMix = 0x9e3779b9u;
constexpr std::string_view kOpenAi = "openai";
constexpr std::string_view kAnthropic = "anthropic";
constexpr std::string_view kOpenAiResponses = "openai_responses";
constexpr std::string_view kOpenAiCompletions = "openai_completions";
constexpr std::string_view kGemini = "gemini";
constexpr std::string_view kCohere = "cohere";
constexpr std::string_view kGeminiModelPrefix = "models/";

// The door's routes; the value is what RouteMatch::route carries.
enum Route : int {
  kChat,
  kMessages,
  kResponses,
  kCompletions,
  kEmbeddings,
  kModels,
  kGeminiGenerate,
  kGeminiStream,
  kGeminiModels,
  kGeminiModel,
  kCohereChat,
  kMessagesCountTokens,
  kGeminiCountTokens,
  kGeminiEmbed,
  kGeminiBatchEmbed,
  kCohereEmbed,
};

bool IsGeminiRoute(int route) {
  return (route >= kGeminiGenerate && route <= kGeminiModel) || route == kGeminiCountTokens ||
         route == kGeminiEmbed || route == kGeminiBatchEmbed;
}

}  // namespace

std::vector<core::RouteSpec> LlmDoor::Routes(const providers::Registry& providers) {
  std::vector<core::RouteSpec> routes = {
      {"/v1/chat/completions", {Verb::post}, "chat_completions", kChat},
      {"/v1/embeddings", {Verb::post}, "embeddings", kEmbeddings},
      {"/v1/models", {Verb::get, Verb::head}, "models", kModels},
  };
  if (providers.Find(kAnthropic) != nullptr) {
    routes.push_back({"/v1/messages", {Verb::post}, "messages", kMessages});
    routes.push_back(
        {"/v1/messages/count_tokens", {Verb::post}, "messages_count_tokens", kMessagesCountTokens});
  }
  if (providers.Find(kOpenAiResponses) != nullptr) {
    routes.push_back({"/v1/responses", {Verb::post}, "responses", kResponses});
  }
  if (providers.Find(kOpenAiCompletions) != nullptr) {
    routes.push_back({"/v1/completions", {Verb::post}, "completions", kCompletions});
  }
  if (providers.Find(kGemini) != nullptr) {
    routes.push_back({"/v1beta/models/{model}:generateContent",
                      {Verb::post},
                      "gemini_generate_content",
                      kGeminiGenerate});
    routes.push_back({"/v1beta/models/{model}:streamGenerateContent",
                      {Verb::post},
                      "gemini_stream_generate_content",
                      kGeminiStream});
    routes.push_back({"/v1beta/models/{model}:countTokens",
                      {Verb::post},
                      "gemini_count_tokens",
                      kGeminiCountTokens});
    routes.push_back({"/v1beta/models/{model}:embedContent",
                      {Verb::post},
                      "gemini_embed_content",
                      kGeminiEmbed});
    routes.push_back({"/v1beta/models/{model}:batchEmbedContents",
                      {Verb::post},
                      "gemini_batch_embed_contents",
                      kGeminiBatchEmbed});
    routes.push_back({"/v1beta/models", {Verb::get, Verb::head}, "gemini_models", kGeminiModels});
    routes.push_back(
        {"/v1beta/models/{model}", {Verb::get, Verb::head}, "gemini_models", kGeminiModel});
  }
  if (providers.Find(kCohere) != nullptr) {
    routes.push_back({"/v2/chat", {Verb::post}, "cohere_chat", kCohereChat});
    routes.push_back({"/v2/embed", {Verb::post}, "cohere_embed", kCohereEmbed});
  }
  return routes;
}

LlmDoor::LlmDoor(const LlmShared& shared, int worker_index, net::io_context& context,
                 core::WorkerCore& core)
    : shared_(shared),
      core_(core),
      call_options_(model_call::CallOptionsFrom(shared.config.upstream)),
      rng_(static_cast<uint32_t>(worker_index + 1) * kSeedMix),
      call_deps_{core.pool(),
                 call_options_,
                 shared.config.routing,
                 shared.config.server.sse_keepalive,
                 shared.config.upstream.max_response_bytes,
                 core.probe().retries,
                 rng_},
      deps_{shared.config, *shared.routes, core, chain_, call_deps_, shared.cache != nullptr},
      models_body_(ModelsBody()),
      gemini_models_body_(GeminiModelsBody()),
      openai_(shared.providers.Find(kOpenAi)),
      anthropic_(shared.providers.Find(kAnthropic)),
      responses_(shared.providers.Find(kOpenAiResponses)),
      completions_(shared.providers.Find(kOpenAiCompletions)),
      gemini_(shared.providers.Find(kGemini)),
      cohere_(shared.providers.Find(kCohere)) {
  if (openai_ == nullptr) throw std::runtime_error("the provider registry has no openai dialect");
  if (std::unique_ptr<core::Filter> governance = core.MakeGovernanceFilter()) {
    chain_.Add(std::move(governance));
  }
  chain_.Add(std::make_unique<RouteFilter>(shared.config.routing, static_cast<uint32_t>(rng_())));
  if (shared.cache != nullptr) {
    chain_.Add(std::make_unique<CacheFilter>(
        *shared.cache, static_cast<size_t>(worker_index), context.get_executor(),
        cache::RequestDigester(DigestSeedOf(shared.config.llm_cache.key_secret)),
        MakeSemanticLookup()));
  }
}

std::unique_ptr<SemanticLookup> LlmDoor::MakeSemanticLookup() const {
  const std::string& name = shared_.config.llm_cache.semantic.model;
  const ModelEntry* model = name.empty() ? nullptr : shared_.routes->Find(name);
  if (model == nullptr) return nullptr;  // config validation found it, or semantic mode is off
  return std::make_unique<SemanticLookup>(call_deps_, *model, shared_.config.routing.max_attempts);
}

LlmDoor::~LlmDoor() = default;

std::string LlmDoor::ModelsBody() const {
  boost::json::array data;
  for (const auto& model : shared_.routes->models()) {
    data.push_back(boost::json::object{
        {"id", model.name}, {"object", "model"}, {"created", 0}, {"owned_by", "turnpike"}});
  }
  return boost::json::serialize(boost::json::object{{"object", "list"}, {"data", std::move(data)}});
}

core::ErrorReply LlmDoor::RenderError(int route, const Error& error) const {
  const providers::Provider* client = route == kMessages || route == kMessagesCountTokens
                                          ? anthropic_
                                      : route == kResponses                           ? responses_
                                      : route == kCompletions                         ? completions_
                                      : route == kCohereChat || route == kCohereEmbed ? cohere_
                                      : IsGeminiRoute(route)                          ? gemini_
                                                                                      : nullptr;
  if (client != nullptr) {
    providers::ErrorReply reply = client->RenderError(error);
    return {reply.status, std::move(reply.body)};
  }
  return {HttpStatus(error.code), core::OpenAiErrorBody(error)};
}

net::awaitable<void> LlmDoor::Handle(http::Exchange& exchange, core::RouteMatch match) {
  // A Responses request whose model another door declared (core/handoff.h) is that door's:
  // its body is parsed once, here, and handed over, or kept for this door's own parse.
  std::optional<boost::json::value> document;
  if (match.route == kResponses && core_.hands_off()) {
    boost::system::error_code ec;
    document.emplace(boost::json::parse(exchange.request().body(), ec));
    const boost::json::object* object = ec ? nullptr : document->if_object();
    const boost::json::value* model = object != nullptr ? object->if_contains("model") : nullptr;
    if (model != nullptr && model->is_string()) {
      const std::string_view name = model->as_string();
      if (core::Door* target = core_.HandOffTarget(name)) {
        core::HandedRequest handed{std::string(name), std::move(*document)};
        co_await target->Receive(exchange, match, std::move(handed));
        co_return;
      }
    }
    if (object == nullptr) document.reset();  // this door's parse reports the error
  }
  // The request's state (~7 KiB) in a cached block, not on this frame (common/block_cache.h);
  // default-initialised, as a local would be (make_unique would zero the block first).
  auto state = std::make_unique_for_overwrite<RequestState>();
  LlmContext& ctx = state->ctx;
  core_.Start(exchange, match, ctx);
  if (match.route == kModels) {
    co_await AnswerModels(exchange, ctx);
  } else if (match.route == kGeminiModels || match.route == kGeminiModel) {
    co_await AnswerGeminiModels(exchange, ctx, match);
  } else {
    // One flow object for every model route: it holds the request's model call (chat_flow.h).
    const FlowApi flow_api = FlowApiOf(match);
    ChatFlow& flow =
        state->flow.emplace(deps_, exchange, ctx, flow_api.api, *flow_api.client, flow_api.path);
    if (document) flow.UseDocument(document->as_object());
    co_await flow.Run();
    state->flow.reset();  // the flow ends before the request is finished, as it always has
  }
  core_.Finish(exchange, ctx);
}

LlmDoor::FlowApi LlmDoor::FlowApiOf(const core::RouteMatch& match) const {
  if (IsGeminiRoute(match.route)) {
    std::string_view model = match.Param("model");
    if (model.starts_with(kGeminiModelPrefix)) model.remove_prefix(kGeminiModelPrefix.size());
    const ClientApi api = match.route == kGeminiCountTokens  ? ClientApi::kGeminiCountTokens
                          : match.route == kGeminiEmbed      ? ClientApi::kGeminiEmbed
                          : match.route == kGeminiBatchEmbed ? ClientApi::kGeminiBatchEmbed
                                                             : ClientApi::kGeminiGenerate;
    return {api, gemini_, PathRequest{model, match.route == kGeminiStream}};
  }
  if (match.route == kMessagesCountTokens) {
    return {ClientApi::kAnthropicCountTokens, anthropic_, {}};
  }
  if (match.route == kCohereChat || match.route == kCohereEmbed) {
    return {match.route == kCohereEmbed ? ClientApi::kCohereEmbed : ClientApi::kCohereChat,
            cohere_,
            {}};
  }
  const ClientApi api = match.route == kMessages      ? ClientApi::kAnthropicMessages
                        : match.route == kResponses   ? ClientApi::kOpenAiResponses
                        : match.route == kCompletions ? ClientApi::kOpenAiCompletions
                        : match.route == kEmbeddings  ? ClientApi::kOpenAiEmbeddings
                                                      : ClientApi::kOpenAiChat;
  const providers::Provider* client = match.route == kMessages      ? anthropic_
                                      : match.route == kResponses   ? responses_
                                      : match.route == kCompletions ? completions_
                                                                    : openai_;
  return {api, client, {}};
}

net::awaitable<void> LlmDoor::AnswerModels(http::Exchange& exchange, LlmContext& ctx) {
  if (!exchange.request().body().empty()) {
    const Error error{ErrorCode::kInvalidRequest, "A GET request must not have a body.", ""};
    co_await core_.RespondError(exchange, ctx, error.code, RenderError(kModels, error));
    co_return;
  }
  std::string body = models_body_;
  co_await core_.Respond(exchange, ctx, 200, kJson, std::move(body));
}

net::awaitable<void> LlmDoor::AnswerGeminiModels(http::Exchange& exchange, LlmContext& ctx,
                                                 core::RouteMatch match) {
  if (match.route == kGeminiModels) {
    std::string body = gemini_models_body_;
    co_await core_.Respond(exchange, ctx, 200, kJson, std::move(body));
    co_return;
  }
  std::string_view name = match.Param("model");
  if (name.starts_with(kGeminiModelPrefix)) name.remove_prefix(kGeminiModelPrefix.size());
  if (shared_.routes->Find(name) == nullptr) {
    const Error error{ErrorCode::kNotFound,
                      "models/" + std::string(name) + " is not found for API version v1beta.", ""};
    core::ErrorReply reply = RenderError(match.route, error);
    co_await core_.RespondError(exchange, ctx, error.code, std::move(reply));
    co_return;
  }
  std::string body = boost::json::serialize(GeminiModel(name));
  co_await core_.Respond(exchange, ctx, 200, kJson, std::move(body));
}

boost::json::object LlmDoor::GeminiModel(std::string_view name) {
  return boost::json::object{
      {"name", "models/" + std::string(name)},
      {"displayName", name},
      {"supportedGenerationMethods",
       boost::json::array{"generateContent", "streamGenerateContent", "countTokens", "embedContent",
                          "batchEmbedContents"}}};
}

std::string LlmDoor::GeminiModelsBody() const {
  boost::json::array models;
  for (const auto& model : shared_.routes->models()) models.push_back(GeminiModel(model.name));
  return boost::json::serialize(boost::json::object{{"models", std::move(models)}});
}

}  // namespace turnpike::doors::llm
