#include "doors/llm/route_filter.h"

#include "doors/llm/llm_context.h"

namespace turnpike::doors::llm {

core::FilterStatus RouteFilter::OnRequest(core::RequestContext& context) {
  auto& ctx = static_cast<LlmContext&>(context);
  if (ctx.model_entry == nullptr) {
    ctx.refusal = Error{
        ErrorCode::kNotFound,
        "The model `" + ctx.model + "` does not exist or you do not have access to it.", "model"};
    return core::FilterStatus::kRespond;
  }
  ctx.model_slot = ctx.model_entry->index;
  ctx.attempts = PlanAttempts(*ctx.model_entry, routing_.max_attempts, rng_);
  return core::FilterStatus::kContinue;
}

}  // namespace turnpike::doors::llm
