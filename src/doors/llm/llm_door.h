// The LLM front door: the OpenAI- and Anthropic-compatible routes on one worker.
//
//   POST /v1/chat/completions   OpenAI chat, stream and non-stream, through the filter chain
//   POST /v1/messages           Anthropic Messages, the same way (its errors in Anthropic's
//                               shape); only when the registry has the anthropic dialect
//   POST /v1/responses          OpenAI Responses (stateless) and legacy completions, always
//   POST /v1/completions        translated through the pivot; only when the registry has the
//                               openai_responses / openai_completions dialect
//   POST /v1/embeddings         OpenAI embeddings, governed like chat (chat_flow.h)
//   GET  /v1/models             the configured public model names
//   POST /v1beta/models/{model}:generateContent, :streamGenerateContent   Gemini clients
//                               (the model and streaming from the URL; key in x-goog-api-key
//                               or ?key=); GET /v1beta/models[/{model}] the model names in
//                               Gemini's shape; only when the registry has the gemini dialect
//   POST /v2/chat               Cohere v2 clients, stream and non-stream; only with cohere
// Error dialect: OpenAI's envelope (core/openai_errors.h), except on the routes of another
// client dialect (Anthropic Messages, Gemini, Cohere), which answer in that dialect's shape.
//
// The chain: the core's governance filter (when governance is on), the route filter, then the
// response cache's filter when the gateway has the cache (cache_filter.h), with the worker's
// embedder for semantic mode when llm_cache.semantic names a model (semantic_lookup.h).
// A `/v1/responses` request whose model is `agent:<id>` will belong to the agent door: the
// Responses parser here is the one place that reads `model`, so the hand-off is made after it,
// with the parsed request, and no body is parsed twice (docs/architecture.md).
//
// Ownership: one LlmDoor per worker (made by its DoorFactory in app/); it owns its filter chain
// and borrows the worker's upstream pool (WorkerCore::pool) for its model calls. LlmShared is owned
// by the composition root and outlives every worker. Thread safety: the owning worker only.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/door.h"
#include "core/filter.h"
#include "core/request_probe.h"
#include "core/worker_core.h"
#include "doors/llm/chat_flow.h"
#include "doors/llm/response_cache.h"
#include "doors/llm/semantic_lookup.h"
#include "model_call/model_call.h"
#include "model_call/route_table.h"
#include "providers/registry.h"
#include "upstream/call.h"

namespace turnpike::doors::llm {

// What every worker's LLM door shares, read-only after start-up.
struct LlmShared {
  const config::Config& config;
  std::shared_ptr<const RouteTable> routes;
  core::ProbeRegistry& probes;  // the door registers its pools' probes
  // The API dialects (providers/): must hold "openai" and every deployment's provider.
  const providers::Registry& providers;
  // The response cache (response_cache.h); null: none (the chain has no cache filter).
  ResponseCache* cache = nullptr;
};

class LlmDoor : public core::Door {
 public:
  LlmDoor(const LlmShared& shared, int worker_index, boost::asio::io_context& context,
          core::WorkerCore& core);
  ~LlmDoor() override;

  // The routes this door answers with `providers` (a client dialect's route is there only
  // when the registry has the dialect).
  static std::vector<core::RouteSpec> Routes(const providers::Registry& providers);

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;

 private:
  boost::asio::awaitable<void> AnswerModels(http::Exchange& exchange, LlmContext& ctx);
  std::string ModelsBody() const;
  // The cache filter's embedder for semantic mode; null when llm_cache.semantic is not set.
  std::unique_ptr<SemanticLookup> MakeSemanticLookup() const;
  // GET /v1beta/models and /v1beta/models/{model}: the public model names, Gemini's shape.
  // The API a model route serves, its dialect's Provider, and what its URL says.
  struct FlowApi {
    ClientApi api;
    const providers::Provider* client;
    PathRequest path;
  };
  FlowApi FlowApiOf(const core::RouteMatch& match) const;
  boost::asio::awaitable<void> AnswerGeminiModels(http::Exchange& exchange, LlmContext& ctx,
                                                  core::RouteMatch match);
  static boost::json::object GeminiModel(std::string_view name);
  std::string GeminiModelsBody() const;

  const LlmShared& shared_;
  core::WorkerCore& core_;
  const upstream::CallOptions call_options_;
  core::FilterChain chain_;
  std::minstd_rand rng_;
  const model_call::CallDeps call_deps_;
  const FlowDeps deps_;
  const std::string models_body_;
  const std::string gemini_models_body_;
  const providers::Provider* openai_;       // the client dialect of /v1/chat/completions
  const providers::Provider* anthropic_;    // of /v1/messages; nullptr = route off
  const providers::Provider* responses_;    // of /v1/responses; nullptr = route off
  const providers::Provider* completions_;  // of /v1/completions; nullptr = route off
  const providers::Provider* gemini_;       // of /v1beta/models/...; nullptr = routes off
  const providers::Provider* cohere_;       // of /v2/chat; nullptr = route off
};

}  // namespace turnpike::doors::llm
