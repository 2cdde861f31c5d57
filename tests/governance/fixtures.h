// Shared test data: a snapshot with one plan, two tenants and keys in every status, whose
// full keys (generated, so realistic) are kept for the tests to present.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "governance/keys.h"
#include "governance/local_counters.h"
#include "governance/snapshot.h"

namespace turnpike::governance::testing {

inline constexpr int64_t kNow = 1'717'200'000;  // 2024-06-01T00:00:00Z
inline constexpr char kModel[] = "gpt-4o-mini";
inline constexpr char kOtherModel[] = "gpt-4o";
inline constexpr ModelPrice kPrice{150'000, 600'000, 75'000, 16'384};

struct Fixture {
  SnapshotData data;
  std::string active_key;     // tenant "acme", active
  std::string revoked_key;    // tenant "acme", revoked
  std::string expired_key;    // tenant "acme", expired at kNow
  std::string suspended_key;  // tenant "dormant" (suspended), active key
};

// The in-process counters role for snapshots the tests build (the process's, as app/ has one).
inline LocalCounters& TestCounters() {
  static LocalCounters counters;
  return counters;
}

inline Key MakeKey(const GeneratedKey& generated, std::string tenant) {
  Key key;
  key.public_id = generated.public_id;
  key.tenant_id = std::move(tenant);
  key.name = "test";
  key.secret_hash = generated.secret_hash;
  return key;
}

inline GeneratedKey MustGenerate() {
  Result<GeneratedKey> key = GenerateKey();
  EXPECT_TRUE(key.ok());
  return key.value();
}

inline Fixture MakeFixture() {
  Fixture f;
  Plan plan;
  plan.id = "pro";
  plan.monthly_budget_micros = 100'000'000;
  f.data.plans.push_back(plan);
  f.data.tenants.push_back({"acme", "Acme", TenantStatus::kActive, "pro"});
  f.data.tenants.push_back({"dormant", "Dormant", TenantStatus::kSuspended, "pro"});

  GeneratedKey active = MustGenerate();
  GeneratedKey revoked = MustGenerate();
  GeneratedKey expired = MustGenerate();
  GeneratedKey suspended = MustGenerate();
  f.data.keys.push_back(MakeKey(active, "acme"));
  f.data.keys.push_back(MakeKey(revoked, "acme"));
  f.data.keys.back().status = KeyStatus::kRevoked;
  f.data.keys.push_back(MakeKey(expired, "acme"));
  f.data.keys.back().expires_at = kNow;
  f.data.keys.push_back(MakeKey(suspended, "dormant"));
  f.active_key = active.key;
  f.revoked_key = revoked.key;
  f.expired_key = expired.key;
  f.suspended_key = suspended.key;
  f.data.prices.push_back({kModel, kPrice});
  return f;
}

}  // namespace turnpike::governance::testing
