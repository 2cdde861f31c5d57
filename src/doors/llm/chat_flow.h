// One model request, from the parsed body to the last byte sent: parse, filter chain, a model
// call (model_call/model_call.h: the attempts over the planned deployments with backoff and
// Retry-After, the answer delivered to sinks), and the client's encoder sink (client_sink.h)
// writing the answer to the Exchange. Serves the LLM APIs: OpenAI POST /v1/chat/completions,
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
//                                           spliced in; frames untouched (the chunk scanner taps)
//   Anthropic client, anthropic deployment  identity as well (the Anthropic decoder taps usage)
//   Responses client, Responses deployment  identity as well (`api: responses`): the body from
//                                           the dialect's IdentityBody (model, store:false
//                                           spliced)
//   any other pair                          translated through providers/: the client's
//                                           ParseRequest (once) -> the upstream's BuildRequest;
//                                           answers through ParseResponse / ParseError and the
//                                           client's RenderWholeResponse / RenderError; streams
//                                           as pivot events into the client's StreamEncoder
//
// Failover: a connect error, a timeout before the response head, a 5xx or a 429 moves on to
// the next planned attempt, as long as nothing reached the client. Once the stream started, an
// upstream failure becomes an in-stream error event (the client's dialect) and the stream ends.
// Errors: every error the client gets is in its API's shape (OpenAI's envelope, or Anthropic's
// {"type":"error","error":{...}}), with that API's status; a request the deployment's dialect
// cannot express is a 400 naming the field.
//
// Ownership: lives on the door's coroutine frame for one request, and holds the request's model
// call and its sink there (a ModelCall is ~4 KiB: on Attempts' own frame it would cost a malloc
// per request, model_call.h); borrows what the door lends it (FlowDeps: its chain, the core, the
// model call's deps over the worker's pool), the exchange, the context and the client's
// Provider. Single-threaded.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/filter.h"
#include "core/worker_core.h"
#include "doors/llm/client_sink.h"
#include "doors/llm/llm_context.h"
#include "http/exchange.h"
#include "model_call/model_call.h"
#include "model_call/route_table.h"
#include "observability/metrics.h"
#include "providers/embeddings.h"
#include "providers/openai/chat_request.h"
#include "providers/provider.h"

namespace turnpike::doors::llm {

// What a flow borrows from its door's worker; all of it outlives the flow.
struct FlowDeps {
  const config::Config& config;
  const RouteTable& routes;
  core::WorkerCore& core;  // Respond (Server-Timing), the request probe
  core::FilterChain& chain;
  const model_call::CallDeps& call;  // the worker's upstream pool, options, backoff jitter
  bool response_cache = false;       // the chain has the cache filter (cache_filter.h)
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

// A whole upstream answer as it came, kept for the flow to read (embeddings, token counts).
struct WholeReply {
  unsigned status = 0;
  std::string_view content_type;  // the upstream's header, while the call runs
  std::string body;
};

class ChatFlow;

// A whole answer of Purpose::kRaw (embeddings, token counts), read and answered by the flow in
// the sink's Flush, while the upstream exchange (whose header the content type views) lives.
class RawAnswerSink final : public model_call::AnswerSink {
 public:
  explicit RawAnswerSink(ChatFlow& flow) : flow_(flow) {}
  void OnWhole(const model_call::WholeAnswer& answer) override;
  boost::asio::awaitable<bool> Flush() override;

 private:
  ChatFlow& flow_;
  WholeReply reply_;
  std::string* storage_ = nullptr;
};

class ChatFlow : private model_call::AttemptSource {
 public:
  // `client` is the Provider of the client's dialect (openai for kOpenAiChat).
  ChatFlow(const FlowDeps& deps, http::Exchange& exchange, LlmContext& ctx, ClientApi api,
           const providers::Provider& client, PathRequest path = {})
      : deps_(deps), exchange_(exchange), ctx_(ctx), api_(api), client_(client), path_(path) {}

  // The client's body as the door already parsed it (a /v1/responses body read for a hand-off,
  // core/handoff.h): the pivot is translated from it rather than parsed again. Before Run;
  // `document` outlives the flow.
  void UseDocument(const boost::json::object& document) { document_ = &document; }

  boost::asio::awaitable<void> Run();
  // Answers `error` in the client's shape.
  boost::asio::awaitable<void> Fail(const Error& error);

 private:
  // info_ and pivot_ for the pivot-only APIs (Responses, completions, Gemini, Cohere): the
  // client's body translated once, before the filter chain (which needs the model), with what
  // the URL says (path_) spliced in.
  Status ParsePivot();
  // The attempts and the answer, through a model call (model_call/model_call.h): the client's
  // encoder sink for chat, the whole answer for embeddings and token counts.
  boost::asio::awaitable<void> Attempts();
  // model_call::AttemptSource: what each attempt sends.
  bool Accepts(const DeploymentTarget& target) const override;
  bool IsIdentity(const DeploymentTarget& target) const override;
  Result<std::string> Body(const DeploymentTarget& target, const providers::Provider& dialect,
                           bool identity) override;
  std::string_view Path(const DeploymentTarget& target, bool stream) const override;
  // A translated attempt's body, from the pivot (chat_flow_dialects.cc).
  Result<std::string> TranslateRequest(const DeploymentTarget& target,
                                       const providers::Provider& upstream);
  // Token counts (chat_flow_count_tokens.cc): the request read for its model; the answer
  // forwarded from a deployment of the client's dialect, or else the gateway's estimate.
  bool counting_tokens() const {
    return api_ == ClientApi::kAnthropicCountTokens || api_ == ClientApi::kGeminiCountTokens;
  }
  Status ParseCountTokens();
  boost::asio::awaitable<void> CountTokens();
  boost::asio::awaitable<void> AnswerTokenEstimate();
  boost::asio::awaitable<void> RelayCountTokens(WholeReply& answer);
  // A whole answer of an embeddings or token-count call (from RawAnswerSink, chat_flow.cc).
  boost::asio::awaitable<void> RelayRaw(WholeReply& reply);
  friend class RawAnswerSink;
  // Embeddings (chat_flow_embeddings.cc): embeddings_, info_.model and the prompt estimate's
  // input from the client's body; the body for a deployment; its whole answer relayed.
  bool embedding() const {
    return api_ == ClientApi::kOpenAiEmbeddings || api_ == ClientApi::kGeminiEmbed ||
           api_ == ClientApi::kGeminiBatchEmbed || api_ == ClientApi::kCohereEmbed;
  }
  // The call as an EmbeddingsClient sees it (not kOpenAiEmbeddings).
  providers::EmbeddingsCall EmbeddingsCallOf() const;
  Status ParseEmbeddings();
  Result<std::string> BuildEmbeddings(const DeploymentTarget& target,
                                      const providers::Provider& upstream, bool identity) const;
  boost::asio::awaitable<void> RelayEmbeddings(WholeReply& reply,
                                               const providers::Provider& upstream, bool identity);
  // Usage for settlement; without a reported count, the admission's prompt estimate, flagged.
  void SetEmbeddingsUsage(int64_t prompt_tokens);
  // An error in the client's shape and the status its API uses for it.
  providers::ErrorReply ClientError(const Error& error) const;
  // No attempt answered: the failure in the client's shape (a passed-on upstream answer as it
  // came when it is already the client's).
  boost::asio::awaitable<void> GiveUp(model_call::CallFailure failure);
  // Gemini's credentials (x-goog-api-key, ?key=) as the context's x_api_key.
  void ReadGoogleApiKey();
  // What the cache filter reads of a chat answer's request (cache_ticket.h).
  void OfferToCache();

  const FlowDeps& deps_;
  http::Exchange& exchange_;
  LlmContext& ctx_;
  const ClientApi api_;
  const providers::Provider& client_;
  const PathRequest path_;
  providers::openai::ChatRequestInfo info_;
  std::optional<boost::json::object> pivot_;  // the parsed request, once a translation needs it
  const boost::json::object* document_ = nullptr;           // UseDocument
  std::optional<providers::EmbeddingsRequest> embeddings_;  // kOpenAiEmbeddings only
  // Attempts' call and its one sink (see Ownership above).
  std::optional<model_call::ModelCall> call_;
  std::optional<ClientSink> client_sink_;  // chat
  std::optional<RawAnswerSink> raw_sink_;  // embeddings, token counts
};

}  // namespace turnpike::doors::llm
