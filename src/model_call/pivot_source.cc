#include "model_call/pivot_source.h"

#include "governance/snapshot.h"

namespace turnpike::model_call {

int64_t DefaultMaxTokens(const core::RequestContext& ctx, const DeploymentTarget& target) {
  if (ctx.snapshot) {
    const governance::ModelPrice* price = ctx.snapshot->FindPrice(target.upstream_model);
    if (price != nullptr && price->max_output_tokens > 0) return price->max_output_tokens;
  }
  return target.default_max_tokens;
}

Result<std::string> PivotSource::Body(const DeploymentTarget& target,
                                      const providers::Provider& dialect, bool identity) {
  providers::UpstreamRequestOptions options;
  options.upstream_model = target.upstream_model;
  options.default_max_tokens = DefaultMaxTokens(ctx_, target);
  return dialect.BuildRequest(pivot_, options);
}

}  // namespace turnpike::model_call
