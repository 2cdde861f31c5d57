#include "mock/mock_stats.h"

#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace turnpike::mock {
namespace {

constexpr std::array<std::string_view, kCounterCount> kCounterNames = {
    "requests", "streams_started", "streams_completed", "client_disconnects", "completion_tokens"};

}  // namespace

StatsValues WorkerStats::Load() const {
  StatsValues values{};
  for (size_t i = 0; i < kStatSlots; ++i) values[i] = slots_[i].load(std::memory_order_relaxed);
  return values;
}

StatsBoard::StatsBoard(int workers) {
  const int n = std::max(1, workers);
  for (int i = 0; i < n; ++i) workers_.push_back(std::make_unique<WorkerStats>());
}

StatsValues StatsBoard::Sum() const {
  StatsValues sum{};
  for (const auto& worker : workers_) {
    const StatsValues values = worker->Load();
    for (size_t i = 0; i < kStatSlots; ++i) sum[i] += values[i];
  }
  return sum;
}

StatsValues StatsBoard::Read() const {
  const StatsValues sum = Sum();
  std::lock_guard<std::mutex> lock(mu_);
  StatsValues result{};
  // A count racing with Reset() may be read before the baseline includes it: clamp at zero.
  for (size_t i = 0; i < kStatSlots; ++i) {
    result[i] = sum[i] >= baseline_[i] ? sum[i] - baseline_[i] : 0;
  }
  return result;
}

void StatsBoard::Reset() {
  const StatsValues sum = Sum();
  std::lock_guard<std::mutex> lock(mu_);
  baseline_ = sum;
}

std::string StatsBoard::RenderJson(const StatsValues& values, const Http2Seen* http2) {
  boost::json::object doc;
  for (size_t i = 0; i < kCounterCount; ++i) doc[kCounterNames[i]] = values[i];
  boost::json::object faults;
  for (size_t k = 1; k < kFaultKindCount; ++k) {
    faults[FaultName(static_cast<FaultKind>(k))] = values[kCounterCount + k];
  }
  doc["faults_injected"] = std::move(faults);
  if (http2 != nullptr) {
    doc["http2"] = boost::json::object{{"connections", http2->connections},
                                       {"streams", http2->streams},
                                       {"resets", http2->resets}};
  }
  return boost::json::serialize(doc);
}

}  // namespace turnpike::mock
