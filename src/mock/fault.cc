#include "mock/fault.h"

#include <array>

namespace turnpike::mock {
namespace {

struct FaultEntry {
  FaultKind kind;
  std::string_view name;
};

constexpr std::array<FaultEntry, kFaultKindCount - 1> kFaults = {{
    {FaultKind::kHttp500, "500"},
    {FaultKind::kHttp503, "503"},
    {FaultKind::kHttp429, "429"},
    {FaultKind::kReset, "reset"},
    {FaultKind::kResetBeforeHead, "reset-before-head"},
    {FaultKind::kSlowHeaders, "slow-headers"},
    {FaultKind::kCloseWithoutDone, "close-without-done"},
}};

}  // namespace

std::string_view FaultName(FaultKind kind) {
  for (const FaultEntry& entry : kFaults) {
    if (entry.kind == kind) return entry.name;
  }
  return {};
}

std::optional<FaultKind> ParseFault(std::string_view value) {
  for (const FaultEntry& entry : kFaults) {
    if (entry.name == value) return entry.kind;
  }
  return std::nullopt;
}

FaultKind DrawFault(const MockOptions& options, bool stream, std::mt19937_64& random) {
  const double total = options.fail_rate + options.rate_limit_rate + options.reset_rate;
  if (total <= 0) return FaultKind::kNone;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double draw = uniform(random);
  if (draw < options.fail_rate) return FaultKind::kHttp500;
  if (draw < options.fail_rate + options.rate_limit_rate) return FaultKind::kHttp429;
  if (stream && draw < total) return FaultKind::kReset;
  return FaultKind::kNone;
}

}  // namespace turnpike::mock
