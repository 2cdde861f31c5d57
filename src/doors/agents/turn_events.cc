#include "doors/agents/turn_events.h"

#include "observability/metrics.h"

namespace turnpike::agents {

std::string_view TurnStatusName(TurnStatus status) {
  switch (status) {
    case TurnStatus::kCompleted:
      return "completed";
    case TurnStatus::kIncomplete:
      return "incomplete";
    case TurnStatus::kFailed:
      return "failed";
    case TurnStatus::kCancelled:
      return "cancelled";
  }
  return "failed";
}

void TurnCounters::RenderMetrics(observability::PrometheusWriter& w) const {
  constexpr std::string_view kName = "turnpike_agent_turns_total";
  w.Family(kName, "Agent turns ended, by how they ended", observability::MetricType::kCounter);
  for (size_t i = 0; i < kTurnStatuses; ++i) {
    const TurnStatus status = static_cast<TurnStatus>(i);
    w.Sample(kName, {{"status", TurnStatusName(status)}}, static_cast<double>(count(status)));
  }
}

}  // namespace turnpike::agents
