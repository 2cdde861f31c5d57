// The rate-limit response headers, from a request's rate decisions (governance/rate_limit.h):
// OpenAI's x-ratelimit-limit-, -remaining- and -reset-requests and -tokens for the tighter of
// the key's and the tenant's limits, and Retry-After on a rate refusal that waiting can cure.
// A decision with no limit adds nothing. The governance filter adds them to the response as
// soon as it has decided (governance_filter.h), so every governed door's answers carry them,
// whatever the door's API and error shape (an Elasticsearch 429 as much as an OpenAI one).
//
// The six lines are formatted into one stack buffer and appended at once: this runs on every
// governed request.
#pragma once

#include <chrono>
#include <string_view>

#include "governance/rate_limit.h"
#include "http/response_headers.h"

namespace turnpike::core {

void AddRateLimitHeaders(http::ResponseHeaders& headers, const governance::RateDecision& requests,
                         const governance::RateDecision& tokens, bool rate_refused);

// OpenAI's reset format: "20ms", "1s", "6m0s".
std::string_view FormatRateReset(std::chrono::nanoseconds reset, char (&out)[32]);

}  // namespace turnpike::core
