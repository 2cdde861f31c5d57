#include "model_call/pivot_source.h"

#include "governance/snapshot.h"

namespace turnpike::model_call {

namespace {
int64_t DefaultMaxTokens(const core::RequestContext& ctx, const DeploymentTarget& target) {
  if (ctx.snapshot) {
    const governance::ModelPrice* price = ctx.snapshot->FindPrice(target.upstream_model);
    if (price != nullptr && price->max_output_tokens > 0) return price->max_output_tokens;
  }
  return target.default_max_tokens;
}

providers::UpstreamRequestOptions RequestOptions(const DeploymentTarget& target,
                                                 const core::RequestContext& ctx) {
  providers::UpstreamRequestOptions options;
  options.upstream_model = target.upstream_model;
  options.default_max_tokens = DefaultMaxTokens(ctx, target);
  return options;
}
}  // namespace

Result<std::string> TranslatedBody(const boost::json::object& pivot, const DeploymentTarget& target,
                                   const providers::Provider& dialect,
                                   const core::RequestContext& ctx) {
  return dialect.BuildRequest(pivot, RequestOptions(target, ctx));
}

Result<std::string> PivotSource::Body(const DeploymentTarget& target,
                                      const providers::Provider& dialect, bool identity) {
  if (window_.empty() && tools_ == nullptr) return TranslatedBody(pivot_, target, dialect, ctx_);
  providers::UpstreamRequestOptions options = RequestOptions(target, ctx_);
  options.tools = tools_;
  options.tools_text = tools_text_;
  return dialect.BuildRequestWithWindow(pivot_, options, at_, window_);
}

}  // namespace turnpike::model_call
