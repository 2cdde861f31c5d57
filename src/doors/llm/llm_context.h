// The LLM door's extension of the core's request context: the model's route and the attempts
// planned over its deployments. The door finds the model entry once, before the filter chain
// (the governance filter prices by it); the route filter plans the attempts once the caller is
// admitted; the chat flow records the deployment each attempt goes to; the request's part in the
// response cache (cache_ticket.h).
//
// Ownership: on the door's request coroutine frame; the route table it points into outlives
// every request. Single-threaded.
#pragma once

#include "core/request_context.h"
#include "doors/llm/cache_ticket.h"
#include "model_call/route_table.h"

namespace turnpike::doors::llm {

// The model's route and deployments are the model call's (model_call/route_table.h).
using model_call::AttemptPlan;
using model_call::DeploymentTarget;
using model_call::ModelEntry;
using model_call::RouteTable;

struct LlmContext : core::RequestContext {
  const ModelEntry* model_entry = nullptr;   // nullptr: no such model (the route filter's 404)
  AttemptPlan attempts;                      // set by the route filter
  const DeploymentTarget* target = nullptr;  // the deployment of the current (last) attempt
  CacheTicket cache;
};

}  // namespace turnpike::doors::llm
