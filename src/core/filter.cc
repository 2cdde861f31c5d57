#include "core/filter.h"

namespace turnpike::core {
namespace net = boost::asio;

net::awaitable<FilterStatus> Filter::Resume(RequestContext& context) {
  co_return FilterStatus::kContinue;
}

FilterStatus FilterChain::Run(RequestContext& context) {
  while (context.filters_ran < filters_.size()) {
    Filter& filter = *filters_[context.filters_ran++];
    const FilterStatus status = filter.OnRequest(context);
    if (status != FilterStatus::kContinue) return status;
  }
  return FilterStatus::kContinue;
}

net::awaitable<FilterStatus> FilterChain::Resume(RequestContext& context) {
  FilterStatus status = FilterStatus::kSuspend;
  while (status == FilterStatus::kSuspend) {
    // The suspended filter is the last one that ran.
    Filter& suspended = *filters_[context.filters_ran - 1];
    status = co_await suspended.Resume(context);
    if (status == FilterStatus::kContinue) status = Run(context);
  }
  co_return status;
}

void FilterChain::Complete(RequestContext& context) {
  for (size_t i = context.filters_ran; i > 0; --i) filters_[i - 1]->OnComplete(context);
  context.filters_ran = 0;
}

}  // namespace turnpike::core
