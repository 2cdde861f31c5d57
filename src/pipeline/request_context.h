// What one request carries through the filter chain and the front door that runs it.
//
// Ownership: a front door creates one RequestContext per request on its coroutine frame and
// passes it by reference to each filter. Single-threaded (the connection's worker).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "governance/admission.h"
#include "governance/snapshot.h"
#include "pipeline/route_table.h"

namespace turnpike::pipeline {

using Clock = std::chrono::steady_clock;

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
// written to one (Anthropic only). -1 = not reported.
struct Usage {
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;
  int64_t cache_creation_tokens = -1;
};

struct RequestContext {
  // Set by the front door before the chain runs.
  std::string_view request_id;
  std::string model;  // the public model name the client asked for
  bool stream = false;
  Phases phases;
  std::string_view authorization;  // header values as received; empty if absent
  std::string_view x_api_key;
  int64_t prompt_bytes = 0;  // the request body's size (the prompt estimate's input)
  std::optional<int64_t> max_tokens;

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

  // Set by the route filter.
  const ModelEntry* model_entry = nullptr;
  AttemptPlan attempts;

  // Set by the front door as the request runs; read by OnComplete hooks.
  const DeploymentTarget* deployment = nullptr;  // the one that answered (last tried)
  int attempts_made = 0;
  int status = 0;  // what the client got (499 = the client went away first)
  int upstream_status = -1;
  std::optional<ErrorCode> error;
  Usage usage;
  // Content and tool-call argument bytes relayed to the client: the basis of the completion
  // estimate when the provider reports no usage.
  int64_t output_bytes = 0;
  std::string finish_reason;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

}  // namespace turnpike::pipeline
