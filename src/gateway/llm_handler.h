// The LLM front door: OpenAI- and Anthropic-compatible routes on one worker.
//
//   POST /v1/chat/completions   OpenAI chat, stream and non-stream, through the filter chain
//   POST /v1/messages           Anthropic Messages, the same way (its errors in Anthropic's
//                               shape); only when the registry has the anthropic dialect
//   POST /v1/responses          OpenAI Responses (stateless) and legacy completions, always
//   POST /v1/completions        translated through the pivot; only when the registry has the
//                               openai_responses / openai_completions dialect
//   POST /v1/embeddings         OpenAI embeddings, governed like chat (chat_flow.h)
//   GET  /v1/models             the configured public model names
//   GET  /healthz               alive
//   GET  /readyz                200, or 503 while draining
//   GET  /metrics               Prometheus text, summed over all workers
//   /admin/...                  handed to GatewayShared::admin (admin/admin_api.h)
//
// Ownership: one LlmHandler per worker (made by the server's HandlerFactory); it owns the
// worker's upstream pool, filter chain, probe and access-log buffer. GatewayShared is owned by
// the composition root (app/) and outlives every worker. Thread safety: the owning worker only.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <random>
#include <string>

#include "config/config.h"
#include "control/governance_service.h"
#include "gateway/gateway_probe.h"
#include "http/exchange.h"
#include "http/handler.h"
#include "observability/access_log.h"
#include "pipeline/filter.h"
#include "pipeline/route_table.h"
#include "providers/registry.h"
#include "store/call_log_buffer.h"
#include "upstream/call.h"
#include "upstream/pool.h"

namespace turnpike::gateway {

// What every worker's handler shares, read-only after start-up (the registry is filled while
// the handlers are made, before any worker runs).
struct GatewayShared {
  const config::Config& config;
  std::shared_ptr<const pipeline::RouteTable> routes;
  const upstream::TlsContexts& tls;
  observability::AccessLogSink* access_log = nullptr;  // nullptr = access log off
  ProbeRegistry& probes;
  control::GovernanceService* governance = nullptr;  // nullptr = governance off (open gateway)
  http::Handler* admin = nullptr;  // answers /admin/...; shared by workers; nullptr = none
  // The API dialects (providers/): must hold "openai" and every deployment's provider.
  const providers::Registry* providers = nullptr;
};

class LlmHandler : public http::Handler {
 public:
  LlmHandler(const GatewayShared& shared, int worker_index, boost::asio::io_context& context);
  ~LlmHandler() override;

  boost::asio::awaitable<void> Handle(http::Exchange& exchange) override;
  std::string RenderError(std::string_view target, const Error& error) const override;
  void Shutdown() override;

 private:
  friend class ChatFlow;
  boost::asio::awaitable<void> Respond(http::Exchange& exchange, pipeline::RequestContext& ctx,
                                       unsigned status, std::string_view content_type,
                                       std::string body);
  boost::asio::awaitable<void> RespondError(http::Exchange& exchange, pipeline::RequestContext& ctx,
                                            const Error& error);
  boost::asio::awaitable<void> AnswerGet(http::Exchange& exchange, pipeline::RequestContext& ctx,
                                         RouteId route, std::string_view path);
  void Finish(http::Exchange& exchange, pipeline::RequestContext& ctx, RouteId route);
  void LogCall(const http::Exchange& exchange, const pipeline::RequestContext& ctx,
               int64_t overhead_us);
  std::string ModelsBody() const;

  const GatewayShared& shared_;
  boost::asio::io_context& context_;
  upstream::Pool pool_;
  upstream::CallOptions call_options_;
  pipeline::FilterChain chain_;
  GatewayProbe probe_;
  std::unique_ptr<observability::AccessLogBuffer> access_log_;
  std::unique_ptr<store::CallLogBuffer> call_log_;
  std::minstd_rand rng_;
  const std::string models_body_;
  const providers::Provider* openai_;       // the client dialect of /v1/chat/completions
  const providers::Provider* anthropic_;    // of /v1/messages; nullptr = route off
  const providers::Provider* responses_;    // of /v1/responses; nullptr = route off
  const providers::Provider* completions_;  // of /v1/completions; nullptr = route off
};

}  // namespace turnpike::gateway
