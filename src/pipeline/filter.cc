#include "pipeline/filter.h"

namespace turnpike::pipeline {

std::optional<Error> FilterChain::Request(RequestContext& context, size_t& ran) {
  ran = 0;
  for (auto& filter : filters_) {
    Error error{ErrorCode::kInternal, "", ""};
    ++ran;
    if (filter->OnRequest(context, error) == FilterStatus::kRespond) return error;
  }
  return std::nullopt;
}

void FilterChain::Complete(RequestContext& context, size_t ran) {
  for (size_t i = ran; i > 0; --i) filters_[i - 1]->OnComplete(context);
}

}  // namespace turnpike::pipeline
