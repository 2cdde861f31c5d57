#include "loadgen/run_stats.h"

namespace turnpike::loadgen {

uint64_t RunStats::failed() const {
  uint64_t total = 0;
  for (int i = 0; i < kOutcomeCount; ++i) {
    if (i != static_cast<int>(Outcome::kOk)) total += outcomes[i];
  }
  return total;
}

void RunStats::Merge(const RunStats& other) {
  latency.Merge(other.latency);
  ttft.Merge(other.ttft);
  for (int i = 0; i < kOutcomeCount; ++i) outcomes[i] += other.outcomes[i];
  for (const auto& [status, n] : other.statuses) statuses[status] += n;
  streams_ok += other.streams_ok;
  body_bytes += other.body_bytes;
  conversations += other.conversations;
}

}  // namespace turnpike::loadgen
