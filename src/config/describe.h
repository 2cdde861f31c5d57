// A short human-readable summary of a Config, for the start-up log and `turnpike check`.
//
// Multi-line text: listen address, workers, access log, routing, then each model and its
// deployments (provider, base URL, upstream model, weight). Secrets never appear: API keys
// are shown only as "set"/"none" and credentials embedded in a base URL are masked.
// Thread safety: a pure function of its argument.
#pragma once

#include <string>

#include "config/config.h"

namespace turnpike::config {

std::string DescribeConfig(const Config& config);

}  // namespace turnpike::config
