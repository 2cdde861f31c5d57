// The route filter: the model's deployments and the order to try them in, once the caller is
// admitted. Answers 404 (OpenAI code "model_not_found") for a model the table does not have
// (the door looked the model up before the chain: LlmContext::model_entry), and gives the
// request its model's metrics slot.
//
// Ownership and threads: one per worker in the LLM door's chain; the routing config outlives it.
#pragma once

#include <random>

#include "config/config.h"
#include "core/filter.h"
#include "model_call/route_table.h"

namespace turnpike::doors::llm {

class RouteFilter : public core::Filter {
 public:
  RouteFilter(const config::RoutingConfig& routing, uint32_t seed)
      : routing_(routing), rng_(seed) {}

  // `context` is an LlmContext (this filter runs only in the LLM door's chain).
  core::FilterStatus OnRequest(core::RequestContext& context) override;

 private:
  const config::RoutingConfig& routing_;
  std::minstd_rand rng_;  // per worker
};

}  // namespace turnpike::doors::llm
