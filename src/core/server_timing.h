// Per-phase timing of a request: the W3C Server-Timing response header and the phase
// histograms in /metrics, both from core::Phases.
//
//   Server-Timing: parse;dur=0.021, route;dur=0.002, upstream_connect;dur=0.310,
//                  upstream_ttfb;dur=41.7, to_client;dur=0.015
//
// Durations are milliseconds. A phase not reached (e.g. upstream_connect on a pooled
// connection) is left out. The header is built only when `server.server_timing` is on; off, it
// costs one branch per request.
#pragma once

#include <string>

#include "core/request_context.h"

namespace turnpike::core {

enum class Phase { kParse, kRoute, kUpstreamConnect, kUpstreamTtfb, kToClient, kCount };
std::string_view PhaseName(Phase phase);

// The phase's duration, or a negative duration if it was not reached.
core::Clock::duration PhaseDuration(const core::Phases& p, Phase phase);

// Every phase reached by the time the response head is written (the client head itself is
// taken as "now" for to_client).
std::string ServerTimingHeader(const core::Phases& phases, core::Clock::time_point now);

}  // namespace turnpike::core
