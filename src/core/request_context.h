// What one request carries through the core and the door that answers it: door-neutral (request
// id, principal, timings, cost reservation, the call record being built), extended by each
// door with its own fields (doors/llm/llm_context.h: the model's route and attempts).
//
// Ownership: a door creates its context (this, or a struct derived from it) on its request
// coroutine's frame, starts it with WorkerCore::Start, passes it by reference to each filter
// and ends it with WorkerCore::Finish. A door's own filters may static_cast it to the door's
// extension: a filter is only ever installed in the chain of the door it belongs to.
// Single-threaded (the connection's worker).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "core/answer.h"
#include "governance/admission.h"
#include "governance/snapshot.h"
#include "observability/trace_context.h"
#include "store/call_record.h"

namespace turnpike::http {
class ResponseHeaders;
}

namespace turnpike::core {

using Clock = std::chrono::steady_clock;

inline constexpr size_t kUnknownModel = static_cast<size_t>(-1);

// Timestamps of a request's phases; default-constructed = not reached.
struct Phases {
  Clock::time_point received;            // first byte of the request read
  Clock::time_point parsed;              // body read and the fields the gateway needs extracted
  Clock::time_point admitted;            // the filter chain said continue
  Clock::time_point upstream_connected;  // a new upstream connection is ready (absent if reused)
  Clock::time_point upstream_sent;       // the request was written upstream (last attempt)
  Clock::time_point upstream_head;       // the upstream response head arrived
  Clock::time_point client_head;         // the response head was written to the client
  Clock::time_point first_token;         // the first content or tool-call delta was forwarded
  Clock::time_point done;                // the response ended
};

// The provider's usage in the governance convention (OpenAI's): prompt_tokens counts every
// input token, cached_tokens the part read from a prompt cache, cache_creation_tokens the part
// written to one (Anthropic only); reasoning_tokens the part of completion_tokens spent
// reasoning (priced as output unless the price has its own reasoning price). -1 = not
// reported.
struct Usage {
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;
  int64_t cache_creation_tokens = -1;
  int64_t reasoning_tokens = -1;
};

// What the door bills and how: the inputs of admission's cost estimate and of the model-access
// check, set by the door before the filter chain runs.
struct Billing {
  // Checked against the plan's and key's model lists and priced under this name (the public
  // model name for the LLM door).
  std::string_view model;
  // Priced under this name when `model` has no price of its own (the LLM door: the upstream
  // model of the model's first deployment).
  std::string_view price_fallback;
  int64_t prompt_bytes = 0;  // the input's size (the prompt estimate's input)
  std::optional<int64_t> max_tokens;
  // The request is one query (the search door): when the plan has a price per query
  // (Plan::search_query_price_micros) it is reserved at admission and settled as exactly that
  // price, whatever the tokens; else it is priced by tokens like any call.
  bool per_query = false;
  // A third budget scope the door bills besides the key and the tenant (an agent's; the agent
  // door sets it): reserved and settled with them (governance::AdmissionRequest::scope_budget).
  governance::BudgetCounter* scope_budget = nullptr;
  int64_t scope_cap = governance::kUnlimitedBudget;
  std::string_view scope_whose;
};

// An agent turn's facts for its call record (the agent door sets them; empty otherwise).
struct TurnFacts {
  std::string agent_id;
  int64_t agent_version = 0;
  std::string response_id;  // the response id the client was given
  int64_t guard_replacements = 0;
};

struct RequestContext {
  // Set by WorkerCore::Start before the door runs.
  std::string_view request_id;
  Phases phases;
  uint64_t bytes_in = 0;
  uint16_t route_slot = 0;         // the router's metrics slot
  std::string_view authorization;  // header values as received; empty if absent
  std::string_view x_api_key;
  // The exchange's response headers, for what a filter adds to every answer (the governance
  // filter's x-ratelimit-*); the exchange outlives the context. Null: nowhere to add (tests).
  http::ResponseHeaders* response_headers = nullptr;

  // Set by the door before the chain runs.
  Billing billing;
  // Set by the filter that answered kRespond (filter.h): one of the two.
  std::optional<Error> refusal;  // an error, in the door's shape
  std::optional<Answer> answer;  // a success (answer.h)
  size_t filters_ran = 0;        // FilterChain's count, for Complete

  // Set by the governance filter (when governance is on). The snapshot is held to the end:
  // the admission and the principal point into it.
  governance::SnapshotPtr snapshot;
  governance::Principal principal;  // tenant and key once the key authenticated
  governance::Admission admission;
  governance::RateDecision rate_requests;  // for x-ratelimit-*-requests (limit 0: none)
  governance::RateDecision rate_tokens;    // for x-ratelimit-*-tokens
  int64_t now_unix = 0;                    // the wall clock at admission
  // Settled by the governance filter's OnComplete.
  int64_t cost_micros = 0;
  bool usage_estimated = false;
  bool unpriced = false;

  // The call record, filled by the door as the request runs; read by OnComplete hooks and by
  // WorkerCore::Finish (metrics, access log, call log).
  std::string model;                  // what the client asked for (the public model name)
  size_t model_slot = kUnknownModel;  // the metrics' model slot
  bool stream = false;
  std::string_view deployment;  // the upstream that answered (last tried); outlives the request
  int attempts_made = 0;
  int status = 0;  // what the client got (499 = the client went away first)
  int upstream_status = -1;
  std::optional<ErrorCode> error;
  Usage usage;
  // Content and tool-call argument bytes relayed to the client: the basis of the completion
  // estimate when the provider reports no usage.
  int64_t output_bytes = 0;
  std::string finish_reason;
  // Set by a response cache (the LLM door's): what it did (call_log.cache_status). A hit and a
  // coalesced follower made no upstream call of their own and bill nothing (the governance
  // filter releases their reservation; the call that answered them bills its own key once).
  store::CacheStatus cache_status = store::CacheStatus::kNone;
  TurnFacts turn;
  // OpenTelemetry (observability/trace_context.h): set by WorkerCore::Start when tracing is
  // on (trace.on), the upstream attempts by the model call; untouched when it is off.
  observability::TraceState trace;
};

}  // namespace turnpike::core
