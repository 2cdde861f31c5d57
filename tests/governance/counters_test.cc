// The counters interface seen from its users: a fake engine injected through
// GovernanceSnapshot::Build is asked for every new scope once, and a pending answer from any of
// its counters makes Admit refuse with every earlier step undone.
#include "governance/counters.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "governance/admission.h"
#include "governance/snapshot.h"

namespace turnpike::governance {
namespace {

using testing::kNow;

constexpr Nanos kT0 = std::chrono::hours(1000);
constexpr int64_t kPromptBytes = 3'000;
constexpr int64_t kMaxTokens = 500;
constexpr int64_t kLimit = 1'000'000;

// Plain amounts (the tests are single-threaded); answers pending while `pending` is set, and
// unavailable (a leased engine with its ledger unreachable) while `unavailable` is set, then
// admits a fail-open try against the same amounts.
struct FakeBudget final : BudgetCounter {
  ReserveResult Reserve(MonthId month, int64_t estimate, int64_t cap) override {
    if (pending) return ReserveStatus::kPending;
    if (unavailable) return ReserveStatus::kUnavailable;
    return Local(month, estimate, cap);
  }
  ReserveResult ReserveFailOpen(MonthId month, int64_t estimate, int64_t cap) override {
    ++fail_open_tries;
    return Local(month, estimate, cap);
  }
  ReserveResult Local(MonthId month, int64_t estimate, int64_t cap) {
    if (committed + estimate > cap) return ReserveStatus::kRefused;
    committed += estimate;
    return Hold(month, estimate);
  }
  BudgetUsage Read(MonthId month) const override { return {month, spent, committed}; }
  void Restore(MonthId, int64_t amount) override { spent = committed = amount; }
  void Correct(MonthId, int64_t delta) override {
    spent += delta;
    committed += delta;
  }
  void Settle(MonthId, int64_t estimate, int64_t actual) override {
    committed += actual - estimate;
    spent += actual;
  }
  void Release(MonthId, int64_t estimate) override { committed -= estimate; }

  bool pending = false;
  bool unavailable = false;
  int fail_open_tries = 0;
  int64_t committed = 0;
  int64_t spent = 0;
};

// Counts the units charged; answers pending while `pending` is set.
struct FakeRate final : RateCounter {
  RateDecision Check(Nanos, int64_t cost, int64_t limit) override {
    RateDecision decision;
    decision.limit = limit;
    if (pending) {
      decision.pending = true;
      return decision;
    }
    charged += cost;
    decision.allowed = true;
    decision.remaining = limit - charged;
    return decision;
  }
  void Correct(int64_t was, int64_t actual, int64_t) override { charged += actual - was; }

  bool pending = false;
  int64_t charged = 0;
};

struct FakeScope {
  FakeBudget budget;
  FakeRate requests;
  FakeRate tokens;
  ScopeCounters view{budget, requests, tokens};
};

using ScopeName = std::pair<ScopeKind, std::string>;

class FakeCounters final : public Counters {
 public:
  std::shared_ptr<ScopeCounters> MakeScope(ScopeKind kind, std::string_view id) override {
    made_.emplace_back(kind, std::string(id));
    auto scope = std::make_shared<FakeScope>();
    scopes_[made_.back()] = scope;
    ScopeCounters* view = &scope->view;
    return std::shared_ptr<ScopeCounters>(std::move(scope), view);
  }

  const std::vector<ScopeName>& made() const { return made_; }
  FakeScope& scope(ScopeKind kind, const std::string& id) { return *scopes_.at({kind, id}); }

 private:
  std::vector<ScopeName> made_;
  std::map<ScopeName, std::shared_ptr<FakeScope>> scopes_;
};

SnapshotPtr MustBuild(const SnapshotData& data, const GovernanceSnapshot* previous,
                      Counters& counters) {
  Result<SnapshotPtr> built = GovernanceSnapshot::Build(data, previous, counters);
  EXPECT_TRUE(built.ok()) << built.error().message;
  return built.ok() ? built.value() : nullptr;
}

TEST(CountersTest, BuildAsksTheFactoryForEveryTenantAndKey) {
  testing::Fixture f = testing::MakeFixture();
  FakeCounters counters;
  SnapshotPtr snapshot = MustBuild(f.data, nullptr, counters);
  ASSERT_NE(snapshot, nullptr);
  std::vector<ScopeName> expected = {{ScopeKind::kTenant, "acme"}, {ScopeKind::kTenant, "dormant"}};
  for (const Key& key : f.data.keys) expected.emplace_back(ScopeKind::kKey, key.public_id);
  EXPECT_EQ(counters.made(), expected);
  const KeyEntry* key = snapshot->FindKey(f.data.keys[0].public_id);
  EXPECT_EQ(&key->counters->budget,
            &counters.scope(ScopeKind::kKey, f.data.keys[0].public_id).budget);
  EXPECT_EQ(&snapshot->FindTenant("acme")->counters->tokens,
            &counters.scope(ScopeKind::kTenant, "acme").tokens);
}

TEST(CountersTest, ScopesOfThePreviousSnapshotAreCarriedNotRemade) {
  testing::Fixture f = testing::MakeFixture();
  FakeCounters counters;
  SnapshotPtr first = MustBuild(f.data, nullptr, counters);
  ASSERT_NE(first, nullptr);
  size_t made_first = counters.made().size();

  SnapshotData next = f.data;
  next.keys.pop_back();  // a key removed
  GeneratedKey added = testing::MustGenerate();
  next.keys.push_back(testing::MakeKey(added, "acme"));
  next.tenants.push_back({"newco", "NewCo", TenantStatus::kActive, "pro"});
  SnapshotPtr second = MustBuild(next, first.get(), counters);
  ASSERT_NE(second, nullptr);

  std::vector<ScopeName> remade(counters.made().begin() + made_first, counters.made().end());
  std::vector<ScopeName> expected = {{ScopeKind::kTenant, "newco"},
                                     {ScopeKind::kKey, added.public_id}};
  EXPECT_EQ(remade, expected);
  EXPECT_EQ(second->FindTenant("acme")->counters, first->FindTenant("acme")->counters);
  for (size_t i = 0; i + 1 < f.data.keys.size(); ++i) {
    const std::string& id = f.data.keys[i].public_id;
    EXPECT_EQ(second->FindKey(id)->counters, first->FindKey(id)->counters) << id;
  }
}

// Each counter Admit consults, in Admit's order.
enum class Step { kKeyBudget, kTenantBudget, kKeyRpm, kTenantRpm, kKeyTpm, kTenantTpm };

class PendingTest : public ::testing::TestWithParam<Step> {
 protected:
  void SetUp() override {
    fixture_ = testing::MakeFixture();
    fixture_.data.plans[0].rpm = kLimit;
    fixture_.data.plans[0].tpm = kLimit;
    fixture_.data.keys[0].rpm = kLimit;
    fixture_.data.keys[0].tpm = kLimit;
    snapshot_ = MustBuild(fixture_.data, nullptr, counters_);
    ASSERT_NE(snapshot_, nullptr);
    Result<SecretVerifier> verifier = SecretVerifier::Create();
    ASSERT_TRUE(verifier.ok());
    verifier_.emplace(std::move(verifier.value()));
  }

  FakeScope& Key() { return counters_.scope(ScopeKind::kKey, fixture_.data.keys[0].public_id); }
  FakeScope& Tenant() { return counters_.scope(ScopeKind::kTenant, "acme"); }

  AdmitResult AdmitOne() {
    AdmissionRequest request{
        fixture_.active_key, testing::kModel, kPromptBytes, kMaxTokens, kNow, kT0, {}};
    return Admit(*snapshot_, *verifier_, request);
  }

  // No budget held or spent, no tokens charged, `requests` requests counted.
  void ExpectNothingHeld(int64_t requests) {
    for (FakeScope* scope : {&Key(), &Tenant()}) {
      EXPECT_EQ(scope->budget.committed, 0);
      EXPECT_EQ(scope->budget.spent, 0);
      EXPECT_EQ(scope->requests.charged, requests);
      EXPECT_EQ(scope->tokens.charged, 0);
    }
  }

  testing::Fixture fixture_;
  FakeCounters counters_;
  SnapshotPtr snapshot_;
  std::optional<SecretVerifier> verifier_;
};

TEST_P(PendingTest, PendingIsRefusedAndEveryEarlierStepUndone) {
  {
    // Sanity: without pending, every counter is charged.
    AdmitResult admitted = AdmitOne();
    ASSERT_FALSE(admitted.refusal) << admitted.refusal->message;
    EXPECT_GT(Key().budget.committed, 0);
    EXPECT_EQ(Tenant().requests.charged, 1);
    EXPECT_GT(Tenant().tokens.charged, 0);
  }
  // Released and refunded when the admission went away; an admitted request still counts.
  ExpectNothingHeld(1);

  switch (GetParam()) {
    case Step::kKeyBudget:
      Key().budget.pending = true;
      break;
    case Step::kTenantBudget:
      Tenant().budget.pending = true;
      break;
    case Step::kKeyRpm:
      Key().requests.pending = true;
      break;
    case Step::kTenantRpm:
      Tenant().requests.pending = true;
      break;
    case Step::kKeyTpm:
      Key().tokens.pending = true;
      break;
    case Step::kTenantTpm:
      Tenant().tokens.pending = true;
      break;
  }
  AdmitResult refused = AdmitOne();
  ASSERT_TRUE(refused.refusal);
  EXPECT_EQ(refused.refusal->code, ErrorCode::kRateLimited);
  EXPECT_FALSE(refused.admission.active());
  ExpectNothingHeld(1);
}

// A plan's fail_open: only an unavailable ledger is retried against the replica's own count,
// only for a plan that chose it; a default plan answers 503 (kUnavailable).
using FailOpenTest = PendingTest;

TEST_P(FailOpenTest, AnUnavailableLedgerFailsClosedUnlessThePlanFailsOpen) {
  FakeBudget& budget = GetParam() == Step::kKeyBudget ? Key().budget : Tenant().budget;
  budget.unavailable = true;
  AdmitResult closed = AdmitOne();
  ASSERT_TRUE(closed.refusal);
  EXPECT_EQ(closed.refusal->code, ErrorCode::kUnavailable);
  EXPECT_EQ(budget.fail_open_tries, 0);
  ExpectNothingHeld(0);

  fixture_.data.plans[0].fail_open = true;
  snapshot_ = MustBuild(fixture_.data, snapshot_.get(), counters_);
  ASSERT_NE(snapshot_, nullptr);
  {
    AdmitResult open = AdmitOne();
    ASSERT_FALSE(open.refusal) << open.refusal->message;
    EXPECT_EQ(budget.fail_open_tries, 1);
    EXPECT_GT(budget.committed, 0);
  }
  ExpectNothingHeld(1);
  // Still refused by its own count past the cap; a pending ledger is never failed open.
  if (GetParam() == Step::kKeyBudget) {
    fixture_.data.keys[0].monthly_budget_micros = 1;
  } else {
    fixture_.data.plans[0].monthly_budget_micros = 1;
  }
  snapshot_ = MustBuild(fixture_.data, snapshot_.get(), counters_);
  AdmitResult over = AdmitOne();
  ASSERT_TRUE(over.refusal);
  EXPECT_EQ(over.refusal->code, ErrorCode::kQuotaExceeded);
  budget.unavailable = false;
  budget.pending = true;
  const int tries = budget.fail_open_tries;
  AdmitResult pending = AdmitOne();
  ASSERT_TRUE(pending.refusal);
  EXPECT_EQ(pending.refusal->code, ErrorCode::kRateLimited);
  EXPECT_EQ(budget.fail_open_tries, tries);
}

std::string StepName(const ::testing::TestParamInfo<Step>& info) {
  constexpr const char* kNames[] = {"KeyBudget", "TenantBudget", "KeyRpm",
                                    "TenantRpm", "KeyTpm",       "TenantTpm"};
  return kNames[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(EveryStep, PendingTest,
                         ::testing::Values(Step::kKeyBudget, Step::kTenantBudget, Step::kKeyRpm,
                                           Step::kTenantRpm, Step::kKeyTpm, Step::kTenantTpm),
                         StepName);

INSTANTIATE_TEST_SUITE_P(EveryBudget, FailOpenTest,
                         ::testing::Values(Step::kKeyBudget, Step::kTenantBudget), StepName);

}  // namespace
}  // namespace turnpike::governance
