#include "governance/admission.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace turnpike::governance {
namespace {

using testing::kNow;

constexpr MonthId kMonth = (2024 - 1970) * 12 + 5;
constexpr Nanos kT0 = std::chrono::hours(1000);
constexpr int64_t kPromptBytes = 3'000;  // 1000 estimated prompt tokens
constexpr int64_t kMaxTokens = 500;
// 1000 * 0.15 + 500 * 0.6 = 450 micro-USD at the fixture's gpt-4o-mini price.
constexpr int64_t kEstimateMicros = 450;
constexpr int64_t kEstimateTokens = 1'500;

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = testing::MakeFixture();
    Rebuild();
    Result<SecretVerifier> verifier = SecretVerifier::Create();
    ASSERT_TRUE(verifier.ok());
    verifier_.emplace(std::move(verifier.value()));
  }

  void Rebuild() {
    Result<SnapshotPtr> built =
        GovernanceSnapshot::Build(fixture_.data, snapshot_.get(), testing::TestCounters());
    ASSERT_TRUE(built.ok()) << built.error().message;
    snapshot_ = built.value();
  }

  AdmitResult AdmitOne(Nanos now = kT0) {
    AdmissionRequest request{
        fixture_.active_key, testing::kModel, kPromptBytes, kMaxTokens, kNow, now, {}};
    return Admit(*snapshot_, *verifier_, request);
  }

  BudgetUsage TenantBudget() {
    return snapshot_->FindTenant("acme")->counters->budget.Read(kMonth);
  }
  BudgetUsage KeyBudget() {
    return snapshot_->FindKey(fixture_.data.keys[0].public_id)->counters->budget.Read(kMonth);
  }

  testing::Fixture fixture_;
  SnapshotPtr snapshot_;
  std::optional<SecretVerifier> verifier_;
};

TEST_F(AdmissionTest, AdmitsReservesAndSettlesOnCompletion) {
  AdmitResult result = AdmitOne();
  ASSERT_FALSE(result.refusal) << result.refusal->message;
  ASSERT_TRUE(result.admission.active());
  EXPECT_EQ(result.admission.estimate().micros, kEstimateMicros);
  EXPECT_EQ(TenantBudget().committed, kEstimateMicros);
  EXPECT_EQ(KeyBudget().committed, kEstimateMicros);
  // 100 prompt + 10 completion tokens: 15 + 6 = 21 micro-USD.
  result.admission.Complete({100, 10, 0});
  EXPECT_EQ(TenantBudget().spent, 21);
  EXPECT_EQ(TenantBudget().committed, 21);
  EXPECT_EQ(KeyBudget().spent, 21);
  result.admission.Complete({100'000, 10, 0});  // second completion: no-op
  EXPECT_EQ(TenantBudget().spent, 21);
}

TEST_F(AdmissionTest, AbandonedAdmissionReleasesItsReservations) {
  {
    AdmitResult result = AdmitOne();
    ASSERT_FALSE(result.refusal);
    EXPECT_EQ(TenantBudget().committed, kEstimateMicros);
  }
  EXPECT_EQ(TenantBudget().committed, 0);
  EXPECT_EQ(KeyBudget().committed, 0);
}

TEST_F(AdmissionTest, AuthenticationFailuresAreRefusals) {
  AdmissionRequest request{fixture_.revoked_key, testing::kModel, 0, std::nullopt, kNow, kT0, {}};
  AdmitResult result = Admit(*snapshot_, *verifier_, request);
  ASSERT_TRUE(result.refusal);
  EXPECT_EQ(result.refusal->code, ErrorCode::kUnauthorized);
  EXPECT_FALSE(result.admission.active());
}

TEST_F(AdmissionTest, SpentBudgetIs429AndNothingStaysReserved) {
  fixture_.data.plans[0].monthly_budget_micros = kEstimateMicros * 2;
  Rebuild();
  AdmitResult first = AdmitOne();
  AdmitResult second = AdmitOne();
  ASSERT_FALSE(first.refusal);
  ASSERT_FALSE(second.refusal);
  AdmitResult third = AdmitOne();
  ASSERT_TRUE(third.refusal);
  EXPECT_EQ(third.refusal->code, ErrorCode::kQuotaExceeded);
  EXPECT_NE(third.refusal->message.find("budget"), std::string::npos);
  EXPECT_EQ(KeyBudget().committed, 2 * kEstimateMicros);  // the key's part was released
}

TEST_F(AdmissionTest, PerKeyBudgetRefusesBeforeTheTenants) {
  fixture_.data.keys[0].monthly_budget_micros = kEstimateMicros - 1;
  Rebuild();
  AdmitResult result = AdmitOne();
  ASSERT_TRUE(result.refusal);
  EXPECT_NE(result.refusal->message.find("API key"), std::string::npos);
  EXPECT_EQ(TenantBudget().committed, 0);
}

TEST_F(AdmissionTest, PerRequestCostCapIs400OnMaxTokens) {
  fixture_.data.plans[0].max_request_cost_micros = kEstimateMicros - 1;
  Rebuild();
  AdmitResult result = AdmitOne();
  ASSERT_TRUE(result.refusal);
  EXPECT_EQ(result.refusal->code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(result.refusal->param, "max_tokens");
}

TEST_F(AdmissionTest, RateRefusalUndoesEarlierChargesAndReportsRetryAfter) {
  fixture_.data.keys[0].rpm = 100;
  fixture_.data.plans[0].rpm = 1;
  Rebuild();
  AdmitResult first = AdmitOne();
  ASSERT_FALSE(first.refusal);
  EXPECT_EQ(first.requests.limit, 1);  // the tighter of key (99 left) and tenant (0 left)
  EXPECT_EQ(first.requests.remaining, 0);
  AdmitResult second = AdmitOne();
  ASSERT_TRUE(second.refusal);
  EXPECT_EQ(second.refusal->code, ErrorCode::kRateLimited);
  EXPECT_EQ(second.requests.retry_after, std::chrono::minutes(1));
  EXPECT_EQ(TenantBudget().committed, kEstimateMicros);  // only the first one's
  // The key's RPM charge of the refused request was refunded: this check leaves 98, not 97.
  RateCounter& key_requests =
      snapshot_->FindKey(fixture_.data.keys[0].public_id)->counters->requests;
  EXPECT_EQ(key_requests.Check(kT0, 1, 100).remaining, 98);
}

TEST_F(AdmissionTest, TokensPerMinuteAreCorrectedToActualUsage) {
  fixture_.data.plans[0].tpm = kEstimateTokens + 100;
  Rebuild();
  AdmitResult first = AdmitOne();
  ASSERT_FALSE(first.refusal);
  EXPECT_EQ(first.tokens.remaining, 100);
  AdmitResult refused = AdmitOne();
  ASSERT_TRUE(refused.refusal);
  EXPECT_FALSE(refused.tokens.allowed);
  first.admission.Complete({50, 50, 0});  // 100 tokens used, 1400 given back
  AdmitResult after = AdmitOne();
  ASSERT_FALSE(after.refusal) << after.refusal->message;
  EXPECT_EQ(after.tokens.remaining, 0);
}

TEST_F(AdmissionTest, UnpricedModelIsAdmittedAndFlagged) {
  AdmissionRequest request{fixture_.active_key, "unpriced-model", 30, 10, kNow, kT0, {}};
  AdmitResult result = Admit(*snapshot_, *verifier_, request);
  ASSERT_FALSE(result.refusal);
  EXPECT_TRUE(result.admission.estimate().unpriced);
  EXPECT_EQ(result.admission.price(), nullptr);
}

// A per-query request (the search door) under a plan with a price per query: the price is the
// reservation and the settlement, whatever the tokens, and the model needs no price entry.
constexpr int64_t kQueryPriceMicros = 1'000;

AdmissionRequest QueryRequest(std::string_view key, bool per_query) {
  AdmissionRequest request{key, "search", kPromptBytes, std::nullopt, kNow, kT0, {}};
  request.per_query = per_query;
  return request;
}

TEST_F(AdmissionTest, PerQueryPriceIsReservedAndSettledExactlyOnce) {
  fixture_.data.plans[0].search_query_price_micros = kQueryPriceMicros;
  Rebuild();
  AdmitResult result = Admit(*snapshot_, *verifier_, QueryRequest(fixture_.active_key, true));
  ASSERT_FALSE(result.refusal) << result.refusal->message;
  ASSERT_EQ(result.admission.query_price(), kQueryPriceMicros);
  EXPECT_EQ(TenantBudget().committed, kQueryPriceMicros);
  EXPECT_EQ(KeyBudget().committed, kQueryPriceMicros);
  const CostResult cost = result.admission.Complete({100'000, 100'000, 0});
  EXPECT_EQ(cost.micros, kQueryPriceMicros);
  EXPECT_FALSE(cost.unpriced);
  EXPECT_EQ(TenantBudget().spent, kQueryPriceMicros);
  EXPECT_EQ(TenantBudget().committed, kQueryPriceMicros);
  EXPECT_EQ(KeyBudget().spent, kQueryPriceMicros);
  result.admission.Complete({1, 1, 0});  // second completion: no-op
  EXPECT_EQ(TenantBudget().spent, kQueryPriceMicros);
}

TEST_F(AdmissionTest, PerQueryPriceAppliesOnlyToPerQueryRequests) {
  fixture_.data.plans[0].search_query_price_micros = kQueryPriceMicros;
  Rebuild();
  AdmitResult tokens = AdmitOne();  // an LLM call under the same plan: priced by tokens
  ASSERT_FALSE(tokens.refusal);
  EXPECT_FALSE(tokens.admission.query_price());
  EXPECT_EQ(tokens.admission.estimate().micros, kEstimateMicros);
  tokens.admission.Release();
  AdmitResult unpriced = Admit(*snapshot_, *verifier_, QueryRequest(fixture_.active_key, false));
  ASSERT_FALSE(unpriced.refusal);
  EXPECT_FALSE(unpriced.admission.query_price());
  EXPECT_EQ(unpriced.admission.Complete({10, 0, 0}).unpriced, true);
}

TEST_F(AdmissionTest, PerQueryWithoutAPlanPriceIsPricedByTokens) {
  AdmitResult result = Admit(*snapshot_, *verifier_, QueryRequest(fixture_.active_key, true));
  ASSERT_FALSE(result.refusal);
  EXPECT_FALSE(result.admission.query_price());
  EXPECT_TRUE(result.admission.estimate().unpriced);  // "search" has no price entry
}

TEST_F(AdmissionTest, PerQueryPriceExhaustsTheBudgetAtTheNthQuery) {
  constexpr int kQueries = 3;
  fixture_.data.plans[0].search_query_price_micros = kQueryPriceMicros;
  fixture_.data.plans[0].monthly_budget_micros = kQueries * kQueryPriceMicros;
  Rebuild();
  for (int i = 0; i < kQueries; ++i) {
    AdmitResult r = Admit(*snapshot_, *verifier_, QueryRequest(fixture_.active_key, true));
    ASSERT_FALSE(r.refusal) << i;
    r.admission.Complete({});
  }
  EXPECT_EQ(TenantBudget().spent, kQueries * kQueryPriceMicros);
  AdmitResult refused = Admit(*snapshot_, *verifier_, QueryRequest(fixture_.active_key, true));
  ASSERT_TRUE(refused.refusal);
  EXPECT_EQ(refused.refusal->code, ErrorCode::kQuotaExceeded);
  EXPECT_EQ(TenantBudget().committed, kQueries * kQueryPriceMicros);
}

TEST_F(AdmissionTest, PerQueryPriceAboveThePerRequestCapIsRefused) {
  fixture_.data.plans[0].search_query_price_micros = kQueryPriceMicros;
  fixture_.data.plans[0].max_request_cost_micros = kQueryPriceMicros - 1;
  Rebuild();
  AdmitResult r = Admit(*snapshot_, *verifier_, QueryRequest(fixture_.active_key, true));
  ASSERT_TRUE(r.refusal);
  EXPECT_EQ(r.refusal->code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(TenantBudget().committed, 0);
}

TEST_F(AdmissionTest, NegativeQueryPriceIsRejectedBySnapshotBuild) {
  fixture_.data.plans[0].search_query_price_micros = -1;
  Result<SnapshotPtr> built =
      GovernanceSnapshot::Build(fixture_.data, snapshot_.get(), testing::TestCounters());
  EXPECT_FALSE(built.ok());
}

}  // namespace
}  // namespace turnpike::governance

namespace turnpike::governance {
namespace {

// A door's extra budget scope (an agent's): reserved after the key's and the tenant's, under
// its own cap; its refusal undoes the others'; settled and released with them, exactly once.
class ScopeBudgetTest : public AdmissionTest {
 protected:
  AdmitResult AdmitScoped(int64_t cap) {
    AdmissionRequest request{
        fixture_.active_key, testing::kModel, kPromptBytes, kMaxTokens, kNow, kT0, {}};
    request.scope_budget = &scope_->budget;
    request.scope_cap = cap;
    request.scope_whose = "this agent";
    return Admit(*snapshot_, *verifier_, request);
  }
  BudgetUsage ScopeBudget() { return scope_->budget.Read(kMonth); }

  std::shared_ptr<ScopeCounters> scope_ =
      testing::TestCounters().MakeScope(ScopeKind::kAgent, "agt_1");
};

TEST_F(ScopeBudgetTest, TheScopeIsReservedAndSettledWithTheOthers) {
  AdmitResult result = AdmitScoped(kUnlimitedBudget);
  ASSERT_FALSE(result.refusal) << result.refusal->message;
  EXPECT_EQ(ScopeBudget().committed, kEstimateMicros);
  result.admission.Complete({100, 10, 0});
  EXPECT_EQ(ScopeBudget().spent, 21);
  EXPECT_EQ(ScopeBudget().committed, 21);
  result.admission.Complete({100'000, 10, 0});  // settled once
  EXPECT_EQ(ScopeBudget().spent, 21);
  EXPECT_EQ(TenantBudget().spent, 21);
}

TEST_F(ScopeBudgetTest, ASpentScopeIs429NamingItAndUndoesTheKeysAndTheTenants) {
  AdmitResult first = AdmitScoped(kEstimateMicros * 2);
  AdmitResult second = AdmitScoped(kEstimateMicros * 2);
  ASSERT_FALSE(first.refusal);
  ASSERT_FALSE(second.refusal);
  AdmitResult third = AdmitScoped(kEstimateMicros * 2);
  ASSERT_TRUE(third.refusal);
  EXPECT_EQ(third.refusal->code, ErrorCode::kQuotaExceeded);
  EXPECT_NE(third.refusal->message.find("this agent"), std::string::npos);
  EXPECT_FALSE(third.admission.active());
  EXPECT_EQ(ScopeBudget().committed, 2 * kEstimateMicros);
  EXPECT_EQ(TenantBudget().committed, 2 * kEstimateMicros);  // the third's part was released
  EXPECT_EQ(KeyBudget().committed, 2 * kEstimateMicros);
}

TEST_F(ScopeBudgetTest, AnAbandonedAdmissionReleasesTheScope) {
  {
    AdmitResult result = AdmitScoped(kUnlimitedBudget);
    ASSERT_FALSE(result.refusal);
    EXPECT_EQ(ScopeBudget().committed, kEstimateMicros);
  }
  EXPECT_EQ(ScopeBudget().committed, 0);
  EXPECT_EQ(ScopeBudget().spent, 0);
}

TEST_F(ScopeBudgetTest, TheTenantRefusingFirstLeavesTheScopeUntouched) {
  fixture_.data.plans[0].monthly_budget_micros = kEstimateMicros - 1;
  Rebuild();
  AdmitResult result = AdmitScoped(kUnlimitedBudget);
  ASSERT_TRUE(result.refusal);
  EXPECT_NE(result.refusal->message.find("organization"), std::string::npos);
  EXPECT_EQ(ScopeBudget().committed, 0);
}

}  // namespace
}  // namespace turnpike::governance
