#include "core/server_timing.h"

#include <charconv>

namespace turnpike::core {
namespace {
using TimePoint = core::Clock::time_point;
constexpr core::Clock::duration kNotReached{-1};

core::Clock::duration Between(TimePoint from, TimePoint to) {
  if (from == TimePoint{} || to == TimePoint{} || to < from) return kNotReached;
  return to - from;
}
}  // namespace

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kParse:
      return "parse";
    case Phase::kRoute:
      return "route";
    case Phase::kUpstreamConnect:
      return "upstream_connect";
    case Phase::kUpstreamTtfb:
      return "upstream_ttfb";
    case Phase::kToClient:
      return "to_client";
    case Phase::kCount:
      break;
  }
  return "unknown";
}

core::Clock::duration PhaseDuration(const core::Phases& p, Phase phase) {
  switch (phase) {
    case Phase::kParse:
      return Between(p.received, p.parsed);
    case Phase::kRoute:
      return Between(p.parsed, p.admitted);
    case Phase::kUpstreamConnect:
      return Between(p.admitted, p.upstream_connected);
    case Phase::kUpstreamTtfb:
      return Between(p.upstream_sent, p.upstream_head);
    case Phase::kToClient:
      return Between(p.upstream_head, p.client_head);
    case Phase::kCount:
      break;
  }
  return kNotReached;
}

std::string ServerTimingHeader(const core::Phases& phases, TimePoint now) {
  core::Phases p = phases;
  if (p.client_head == TimePoint{}) p.client_head = now;
  std::string out;
  for (int i = 0; i < static_cast<int>(Phase::kCount); ++i) {
    const auto phase = static_cast<Phase>(i);
    const auto d = PhaseDuration(p, phase);
    if (d < core::Clock::duration::zero()) continue;
    if (!out.empty()) out.append(", ");
    out.append(PhaseName(phase)).append(";dur=");
    char buf[32];
    const double ms = std::chrono::duration<double, std::milli>(d).count();
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), ms, std::chars_format::fixed, 3);
    out.append(buf, end);
  }
  return out;
}

}  // namespace turnpike::core
