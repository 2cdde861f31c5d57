#include "pipeline/route_filter.h"

namespace turnpike::pipeline {

FilterStatus RouteFilter::OnRequest(RequestContext& context, Error& error) {
  const ModelEntry* entry = table_->Find(context.model);
  if (entry == nullptr) {
    error =
        Error{ErrorCode::kNotFound,
              "The model `" + context.model + "` does not exist or you do not have access to it.",
              "model"};
    return FilterStatus::kRespond;
  }
  context.model_entry = entry;
  context.attempts = PlanAttempts(*entry, routing_.max_attempts, rng_);
  return FilterStatus::kContinue;
}

}  // namespace turnpike::pipeline
