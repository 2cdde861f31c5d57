// What GovernanceService's admin operations (governance_service.h) take and return, beside the
// records themselves (governance/snapshot.h, store/records.h, store/call_log.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "governance/snapshot.h"
#include "store/call_log.h"

namespace turnpike::control {

struct TenantPatch {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> plan_id;
  std::optional<governance::TenantStatus> status;
  std::optional<bool> log_bodies;
};

struct CreatedKey {
  governance::Key key;
  std::string secret_key;  // the full "tp-..." key: shown once, never stored
};

enum class PriceSource { kBuiltIn, kConfig, kAdmin };
std::string_view PriceSourceName(PriceSource source);

struct PriceInfo {
  std::string model;
  governance::ModelPrice price;
  PriceSource source = PriceSource::kBuiltIn;
};

struct SpendInfo {
  store::SpendScope scope = store::SpendScope::kTenant;
  std::string scope_id;
  std::string tenant_id;
  std::string month;
  int64_t spent_micros = 0;
  int64_t reserved_micros = 0;           // live requests' reservations (this month only)
  std::optional<int64_t> budget_micros;  // the scope's monthly cap, if any
};

struct ReconcileReport {
  int64_t drift_micros = 0;  // sum of |log - persisted| over scopes and months
  int64_t scopes_corrected = 0;
};

}  // namespace turnpike::control
