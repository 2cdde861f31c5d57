// What the cache filter's semantic mode (cache_filter.h, semantic_index.h) needs besides the
// index: the question read from a client's request, and its embedding from the configured
// embeddings model (llm_cache.semantic.model).
//
// The question: the request's last message, when it is the user's and is text only (a string,
// or parts/blocks that are all {"type":"text"}), read from the client dialects whose bodies
// carry `messages` in that shape: OpenAI chat (/v1/chat/completions) and Anthropic Messages
// (/v1/messages). Every other client API (Responses, completions, Gemini, Cohere) skips semantic
// mode (exact lookups only), as does a last message that is not the user's (a tool result, an
// assistant prefill) or holds anything but text (an image: two questions about two images would
// read alike). Its context is the body without that last message: the filter digests it into
// the semantic namespace, so a question only matches questions asked after the same system
// prompt and turns, with the same parameters and tools.
//
// The embedding: one model call (model_call.h, Purpose::kRaw) over the embeddings model's
// deployments whose dialect has an EmbeddingsApi (others are skipped), with the same failover,
// backoff and upstream timeouts as any call, the body {"model":..,"input":<question>} built per
// deployment by the dialect's EmbeddingsApi. Any failure (no deployment answered, an error
// status, an answer without exactly one vector, a zero vector) is nullopt: the request then
// goes on as an exact-mode miss, never an error to the client. The call runs in its own request
// context, so the client's call-log row, usage and deployment are the chat call's alone.
//
// Cost: one embeddings call per request that missed every exact lookup under a plan with
// semantic mode, adding its latency (one upstream round trip) before the chat call of a miss.
// The tenant is not billed for it: it is the gateway's cost, counted in
// turnpike_cache_semantic_embeddings_total{result} (the embeddings provider's own bill says its
// price). A client that leaves during the embedding does not cancel it (its timeouts bound it).
//
// Ownership and threads: one SemanticLookup per worker (the cache filter's), borrowing the
// worker's model-call deps and the route table's entry of the embeddings model, which outlive
// it. Single-threaded. ReadQuestion is a pure function.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_call/model_call.h"
#include "model_call/route_table.h"

namespace turnpike::doors::llm {

struct SemanticQuestion {
  std::string text;     // the last user message's text (parts joined by "\n")
  std::string context;  // the body (JSON) without its last message
};

// The question of a request in client dialect `dialect` ("openai" chat or "anthropic"), or
// nullopt when semantic mode does not apply to it (see the top of this file).
std::optional<SemanticQuestion> ReadQuestion(std::string_view dialect, std::string_view body);

class SemanticLookup {
 public:
  // `model` is the route table's entry of llm_cache.semantic.model.
  SemanticLookup(const model_call::CallDeps& deps, const model_call::ModelEntry& model,
                 int max_attempts)
      : deps_(deps), model_(model), max_attempts_(max_attempts) {}

  // The unit-length embedding of `text`, or nullopt (see the top of this file). `request_id` is
  // sent upstream as the client request's id.
  boost::asio::awaitable<std::optional<std::vector<float>>> Embed(std::string_view text,
                                                                  std::string_view request_id);

 private:
  const model_call::CallDeps& deps_;
  const model_call::ModelEntry& model_;
  const int max_attempts_;
};

}  // namespace turnpike::doors::llm
