// One model request, from the parsed body to the last byte sent: filter chain, attempts over
// the planned deployments with backoff and Retry-After, then a whole-body or a streamed relay
// of the chosen upstream's answer. Serves the LLM APIs: OpenAI POST /v1/chat/completions,
// /v1/responses, /v1/completions and /v1/embeddings, and Anthropic POST /v1/messages.
//
// Token counts (Anthropic's /v1/messages/count_tokens, Gemini's :countTokens) take the governed
// path too, but bill nothing: no tokens are reserved and none are settled (the admission is
// released), while the request still counts for RPM and writes a call-log row. A model with a
// deployment of the client's dialect forwards the body there (the attempts skip the others);
// without one, the gateway answers its own estimate (cost.h's bytes-per-token rule over the
// body), marked `x-turnpike-token-count: estimate` (`upstream` when forwarded).
//
// Embeddings take the same governed path (admission, attempts, settlement, call log): the
// request is parsed once (providers/embeddings.h), no output tokens are reserved, each attempt
// goes to the deployment's embed_path through its dialect's EmbeddingsApi, and the whole answer
// is relayed untouched (a deployment of the client's dialect: identity) or translated
// (chat_flow_embeddings.cc). A deployment whose dialect has no EmbeddingsApi answers 400 naming
// `model`. Gemini's :embedContent / :batchEmbedContents and Cohere's /v2/embed are read into the
// same OpenAI request first (EmbeddingsClient::ToOpenAiBody) and answered in their own shapes;
// what a translated call cannot carry is a 400 naming the client's field.
//
// Paths, per attempt (the deployment's `provider` against the client's API):
//   OpenAI client, openai deployment        identity: the body forwarded with the upstream model
//                                           spliced in; StreamRelay (bytes untouched)
//   Anthropic client, anthropic deployment  identity as well; DialectRelay in passthrough mode
//                                           (the Anthropic decoder taps usage)
//   Responses client, Responses deployment  identity as well (`api: responses`): the body from
//                                           the dialect's IdentityBody (model, store:false
//                                           spliced); DialectRelay in passthrough mode
//   any other pair                          translated through providers/: the client's
//                                           ParseRequest (once) -> the upstream's BuildRequest;
//                                           answers through ParseResponse / ParseError and the
//                                           client's RenderResponse / RenderError; streams
//                                           through DialectRelay's StreamTranslator
//
// Failover: a connect error, a timeout before the response head, a 5xx or a 429 moves on to
// the next planned attempt, as long as nothing reached the client. Once the stream started, an
// upstream failure becomes an in-stream error event (the client's dialect) and the stream ends.
// Errors: every error the client gets is in its API's shape (OpenAI's envelope, or Anthropic's
// {"type":"error","error":{...}}), with that API's status; a request the deployment's dialect
// cannot express is a 400 naming the field.
//
// Ownership: lives on the door's coroutine frame for one request; borrows what the door lends it
// (FlowDeps: its pool, chain, core), the exchange, the context and the client's Provider.
// Single-threaded.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "config/config.h"
#include "core/filter.h"
#include "core/worker_core.h"
#include "doors/llm/llm_context.h"
#include "doors/llm/route_table.h"
#include "http/exchange.h"
#include "observability/metrics.h"
#include "providers/embeddings.h"
#include "providers/openai/chat_request.h"
#include "providers/provider.h"
#include "upstream/call.h"
#include "upstream/pool.h"

namespace turnpike::doors::llm {

// What a flow borrows from its door's worker; all of it outlives the flow.
struct FlowDeps {
  const config::Config& config;
  const RouteTable& routes;
  core::WorkerCore& core;  // Respond (Server-Timing), the request probe
  core::FilterChain& chain;
  upstream::Pool& pool;
  const upstream::CallOptions& call_options;
  observability::Counter& retries;
  std::minstd_rand& rng;  // backoff jitter
};

// The API the client called. The first two have an identity path (a deployment of the same
// dialect gets the client's bytes); the others are always translated through the pivot, which
// their Run parses up front (their bodies have no `messages` for InspectChatRequest).
enum class ClientApi : uint8_t {
  kOpenAiChat,
  kAnthropicMessages,
  kOpenAiResponses,    // POST /v1/responses (stateless)
  kOpenAiCompletions,  // POST /v1/completions (legacy)
  kOpenAiEmbeddings,   // POST /v1/embeddings (never streamed)
  kGeminiGenerate,     // POST /v1beta/models/{model}:generateContent / :streamGenerateContent
  kCohereChat,         // POST /v2/chat (Cohere v2)
  // Token counts (chat_flow_count_tokens.cc): POST /v1/messages/count_tokens and Gemini's
  // POST /v1beta/models/{model}:countTokens.
  kAnthropicCountTokens,
  kGeminiCountTokens,
  // Embeddings of another client dialect (providers/embeddings.h EmbeddingsClient).
  kGeminiEmbed,       // POST /v1beta/models/{model}:embedContent (one content)
  kGeminiBatchEmbed,  // POST /v1beta/models/{model}:batchEmbedContents
  kCohereEmbed,       // POST /v2/embed
};

// What a client API says in its URL rather than its body (Gemini: the model and streaming).
struct PathRequest {
  std::string_view model;  // empty: the body names it
  bool stream = false;
};

class ChatFlow {
 public:
  // `client` is the Provider of the client's dialect (openai for kOpenAiChat).
  ChatFlow(const FlowDeps& deps, http::Exchange& exchange, LlmContext& ctx, ClientApi api,
           const providers::Provider& client, PathRequest path = {})
      : deps_(deps), exchange_(exchange), ctx_(ctx), api_(api), client_(client), path_(path) {}

  boost::asio::awaitable<void> Run();
  // Answers `error` in the client's shape.
  boost::asio::awaitable<void> Fail(const Error& error);

 private:
  // An upstream answer that asked for a retry (5xx, 429), kept to pass on if every attempt fails.
  struct RetryableAnswer {
    unsigned status = 0;
    std::string content_type;
    std::string body;
    int64_t retry_after_seconds = -1;
    size_t deployment = 0;
    const providers::Provider* translate_from = nullptr;  // set: the body is in this dialect
  };

  // info_ and pivot_ for the pivot-only APIs (Responses, completions, Gemini, Cohere): the
  // client's body translated once, before the filter chain (which needs the model), with what
  // the URL says (path_) spliced in.
  Status ParsePivot();
  // The request body for an attempt: identity, translated chat, or embeddings.
  Result<std::string> BuildBody(const DeploymentTarget& target, const providers::Provider& dialect,
                                bool identity);
  boost::asio::awaitable<void> Attempts();
  // Waits `delay` unless the client goes away first; false if it did.
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay);
  // The whole upstream answer (bounded by upstream.max_response_bytes); nullopt when the client
  // left or the read failed, both already answered for.
  boost::asio::awaitable<std::optional<std::string>> ReadWholeAnswer(upstream::Call& call);
  boost::asio::awaitable<void> RelayWhole(upstream::Call& call);
  boost::asio::awaitable<void> RelayStream(upstream::Call& call);
  // The non-identity paths and the Anthropic identity path (chat_flow_dialects.cc).
  Result<std::string> TranslateRequest(const DeploymentTarget& target,
                                       const providers::Provider& upstream);
  boost::asio::awaitable<void> RelayDialectWhole(upstream::Call& call,
                                                 const providers::Provider& upstream,
                                                 bool identity);
  boost::asio::awaitable<void> RelayDialectStream(upstream::Call& call,
                                                  const providers::Provider& upstream,
                                                  bool identity);
  // Token counts (chat_flow_count_tokens.cc): the request read for its model; the answer
  // forwarded from a deployment of the client's dialect, or else the gateway's estimate.
  bool counting_tokens() const {
    return api_ == ClientApi::kAnthropicCountTokens || api_ == ClientApi::kGeminiCountTokens;
  }
  Status ParseCountTokens();
  boost::asio::awaitable<void> CountTokens();
  boost::asio::awaitable<void> AnswerTokenEstimate();
  boost::asio::awaitable<void> RelayCountTokens(upstream::Call& call);
  // Embeddings (chat_flow_embeddings.cc): embeddings_, info_.model and the prompt estimate's
  // input from the client's body; the body for a deployment; its whole answer relayed.
  bool embedding() const {
    return api_ == ClientApi::kOpenAiEmbeddings || api_ == ClientApi::kGeminiEmbed ||
           api_ == ClientApi::kGeminiBatchEmbed || api_ == ClientApi::kCohereEmbed;
  }
  // The call as an EmbeddingsClient sees it (not kOpenAiEmbeddings).
  providers::EmbeddingsCall EmbeddingsCallOf() const;
  // Whether `target` gets the client's own bytes (same dialect, and its API serves the call).
  bool IsIdentity(const DeploymentTarget& target) const;
  Status ParseEmbeddings();
  Result<std::string> BuildEmbeddings(const DeploymentTarget& target,
                                      const providers::Provider& upstream, bool identity) const;
  boost::asio::awaitable<void> RelayEmbeddings(upstream::Call& call,
                                               const providers::Provider& upstream, bool identity);
  // Usage for settlement; without a reported count, the admission's prompt estimate, flagged.
  void SetEmbeddingsUsage(int64_t prompt_tokens);
  // An error in the client's shape and the status its API uses for it.
  providers::ErrorReply ClientError(const Error& error) const;
  boost::asio::awaitable<void> GiveUp(const std::optional<Error>& error,
                                      std::optional<RetryableAnswer>& answer);
  void MarkClientGone();
  // Gemini's credentials (x-goog-api-key, ?key=) as the context's x_api_key.
  void ReadGoogleApiKey();

  const FlowDeps& deps_;
  http::Exchange& exchange_;
  LlmContext& ctx_;
  const ClientApi api_;
  const providers::Provider& client_;
  const PathRequest path_;
  providers::openai::ChatRequestInfo info_;
  std::optional<boost::json::object> pivot_;  // the parsed request, once a translation needs it
  std::optional<providers::EmbeddingsRequest> embeddings_;  // kOpenAiEmbeddings only
};

}  // namespace turnpike::doors::llm
