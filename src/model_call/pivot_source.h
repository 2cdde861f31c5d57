// PivotSource: the AttemptSource of a caller that holds only a pivot request (an OpenAI chat
// completion object, providers/provider.h), not a client's bytes: an agent turn, a guard's
// second opinion, a test door. Every attempt is translated (IsIdentity is false): each body is
// the deployment's dialect's BuildRequest of the pivot, so the call's sinks get pivot events
// (or a parsed whole answer), whatever the deployment speaks.
//
// Ownership: borrows the pivot, the window and the context, which outlive the call.
// Single-threaded.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <span>
#include <string>

#include "core/request_context.h"
#include "model_call/model_call.h"
#include "providers/provider.h"

namespace turnpike::model_call {

// One translated attempt's body: `dialect`'s BuildRequest of `pivot` for `target`, with the
// max_tokens a provider that requires one gets when the request gave none (the upstream model's
// max output from the request's governance snapshot, admin overrides included, else from config
// and the built-in table, pre-computed in the route table). Every translating source uses it.
Result<std::string> TranslatedBody(const boost::json::object& pivot, const DeploymentTarget& target,
                                   const providers::Provider& dialect,
                                   const core::RequestContext& ctx);

class PivotSource final : public AttemptSource {
 public:
  PivotSource(const boost::json::object& pivot, core::RequestContext& ctx)
      : pivot_(pivot), ctx_(ctx) {}
  // The pivot is `pivot` with `window` inserted into its messages before messages[at] (an
  // agent turn's window, each message with its JSON text): the body is the dialect's
  // BuildRequestWithWindow (providers/provider.h).
  PivotSource(const boost::json::object& pivot, size_t at,
              std::span<const providers::TextMessage> window, core::RequestContext& ctx)
      : pivot_(pivot), at_(at), window_(window), ctx_(ctx) {}

  // Offers `tools` (with `text`, their JSON) as the pivot's `tools`, which it does not hold (an
  // agent's, translated once: providers::UpstreamRequestOptions). Both borrowed for the call.
  void OfferTools(const boost::json::array& tools, std::string_view text) {
    tools_ = &tools;
    tools_text_ = text;
  }

  bool IsIdentity(const DeploymentTarget&) const override { return false; }
  Result<std::string> Body(const DeploymentTarget& target, const providers::Provider& dialect,
                           bool identity) override;

 private:
  const boost::json::object& pivot_;
  const size_t at_ = 0;
  const std::span<const providers::TextMessage> window_;
  core::RequestContext& ctx_;
  const boost::json::array* tools_ = nullptr;
  std::string_view tools_text_;
};

}  // namespace turnpike::model_call
