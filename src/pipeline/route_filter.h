// The route filter: model name -> the model's deployments and the order to try them in.
// Answers 404 (OpenAI code "model_not_found") for a model the table does not have.
#pragma once

#include <memory>
#include <random>

#include "config/config.h"
#include "pipeline/filter.h"
#include "pipeline/route_table.h"

namespace turnpike::pipeline {

class RouteFilter : public Filter {
 public:
  RouteFilter(std::shared_ptr<const RouteTable> table, const config::RoutingConfig& routing,
              uint32_t seed)
      : table_(std::move(table)), routing_(routing), rng_(seed) {}

  FilterStatus OnRequest(RequestContext& context, Error& error) override;

 private:
  std::shared_ptr<const RouteTable> table_;
  const config::RoutingConfig& routing_;
  std::minstd_rand rng_;  // per worker
};

}  // namespace turnpike::pipeline
