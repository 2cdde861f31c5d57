// One request's part in the LLM response cache (response_cache.h): what the chat flow tells the
// cache filter about the request before the chain runs, and what the filter decided and holds
// until the request ends (the entry it answers from, the call it follows, or the call it leads).
//
//   flow, before the chain:  ticket.request = {client dialect, the request, its form}
//   cache filter:            a hit, a follower (both answered by the filter) or a lead; in
//                            semantic mode a lead keeps its question's embedding
//   flow, leading:           call.AddSink(*ticket.fan_out); the client sink records into
//                            ticket.fan_out->recording()
//   cache filter OnComplete: EndLead (stores the answer; the embedding goes into the semantic
//                            index under the stored entry's id), counts what a hit saved
//
// Ownership: a member of the LLM door's request context (llm_context.h), on the door's frame;
// the views point into the request, which outlives it. Single-threaded (the request's worker);
// the recording and follower it holds are shared with other workers as fan_out.h says.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/key.h"
#include "doors/llm/response_cache.h"
#include "http/exchange.h"
#include "model_call/fan_out.h"
#include "providers/provider.h"

namespace turnpike::doors::llm {

// What the flow says of the request, for the filter (null `client`: not a cacheable API). The
// filter reads the body and headers only when the cache is on for the request.
struct CacheableRequest {
  const providers::Provider* client = nullptr;  // the client dialect (part of the key)
  const http::Request* http = nullptr;          // the client's request: JSON body, headers
  bool stream = false;                          // the client asked for a stream
  bool include_usage = false;                   // an OpenAI stream's usage chunk was asked for
};

struct CacheTicket {
  enum class Pending : uint8_t { kNone, kReadL2, kFollow, kSemantic };

  CacheableRequest request;
  // Set by the filter. A registered lead views key.id (response_cache.h StartLead) until
  // OnComplete ends the lead; `lead` is declared after it, so is destroyed first.
  cache::CacheKey key;
  Pending pending = Pending::kNone;
  bool no_store = false;
  bool tool_calls = false;  // the plan stores answers that call tools
  std::chrono::milliseconds ttl{0};
  std::optional<StoredAnswer> hit;                 // answered from an entry
  std::unique_ptr<model_call::Follower> follower;  // answered from a call in flight
  bool joined_finished = false;  // that call had ended complete: the answer counts as a hit
  ResponseCache::Lead lead;      // leads the call: the flow adds fan_out
  std::optional<model_call::FanOut> fan_out;
  // Semantic mode (semantic_index.h): the question's namespace and, for a lead, its embedding.
  std::string semantic_ns;
  std::vector<float> semantic_vector;

  bool leading() const { return fan_out.has_value(); }
};

}  // namespace turnpike::doors::llm
