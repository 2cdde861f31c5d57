// The governance filter on the door-neutral context: no model route, no LLM extension. What is
// billed comes from RequestContext::billing only.
#include "core/governance_filter.h"

#include <gtest/gtest.h>

#include "../governance/fixtures.h"
#include "http/response_headers.h"
#include "run_on_loop.h"

namespace turnpike::core {
namespace {
namespace net = boost::asio;
namespace gt = governance::testing;

governance::SnapshotPtr MustBuild(governance::SnapshotData data) {
  Result<governance::SnapshotPtr> built =
      governance::GovernanceSnapshot::Build(std::move(data), nullptr, gt::TestCounters());
  EXPECT_TRUE(built.ok());
  return built.value();
}

governance::SecretVerifier MustVerifier() {
  Result<governance::SecretVerifier> verifier = governance::SecretVerifier::Create();
  EXPECT_TRUE(verifier.ok());
  return std::move(verifier.value());
}

// One filter, the way its chain runs it.
net::awaitable<FilterStatus> RunLikeADoor(Filter& filter, RequestContext& ctx) {
  FilterStatus status = filter.OnRequest(ctx);
  if (status == FilterStatus::kSuspend) status = co_await filter.Resume(ctx);
  co_return status;
}

net::awaitable<Status> Publish(governance::SnapshotCell* cell, const governance::SnapshotData* data,
                               int* reloads) {
  ++*reloads;
  cell->Publish(MustBuild(*data));
  co_return Ok{};
}

net::awaitable<Status> FailToReload() { co_return Error{ErrorCode::kInternal, "store down", ""}; }

class GovernanceFilterTest : public ::testing::Test {
 protected:
  GovernanceFilterTest() : fixture_(gt::MakeFixture()), cell_(MustBuild(fixture_.data)) {
    bearer_ = "Bearer " + fixture_.active_key;
  }

  gt::Fixture fixture_;
  governance::SnapshotCell cell_;
  std::string bearer_;
};

TEST_F(GovernanceFilterTest, NoCredentialIsA401BeforeAnythingElse) {
  GovernanceFilter filter(cell_, MustVerifier());
  RequestContext ctx;
  EXPECT_EQ(filter.OnRequest(ctx), FilterStatus::kRespond);
  ASSERT_TRUE(ctx.refusal);
  EXPECT_EQ(ctx.refusal->code, ErrorCode::kUnauthorized);
  EXPECT_EQ(ctx.principal.tenant, nullptr);
}

TEST_F(GovernanceFilterTest, ADoorBillingTokensIsAdmittedAndSettledFromItsUsage) {
  GovernanceFilter filter(cell_, MustVerifier());
  RequestContext ctx;
  ctx.authorization = bearer_;
  ctx.billing.model = gt::kModel;
  ctx.billing.prompt_bytes = 300;
  ctx.billing.max_tokens = 100;
  ASSERT_EQ(filter.OnRequest(ctx), FilterStatus::kContinue);
  ASSERT_NE(ctx.principal.tenant, nullptr);
  EXPECT_EQ(ctx.principal.tenant->tenant.id, "acme");
  EXPECT_TRUE(ctx.admission.active());
  const int64_t reserved =
      ctx.principal.tenant->counters->budget.Read(governance::MonthOf(ctx.now_unix)).committed;
  EXPECT_GT(reserved, 0) << "the estimate is reserved at admission";

  ctx.usage = {1000, 1000, 0, 0};
  filter.OnComplete(ctx);
  // 1,000 tokens each at kPrice (micro-USD per million tokens).
  EXPECT_EQ(ctx.cost_micros,
            (1000 * gt::kPrice.input_micros_per_mtok + 1000 * gt::kPrice.output_micros_per_mtok) /
                1'000'000);
  EXPECT_FALSE(ctx.unpriced);
  EXPECT_FALSE(ctx.admission.active()) << "settled exactly once";
}

TEST_F(GovernanceFilterTest, ADoorWithoutAModelIsAuthenticatedAndNothingIsChargedForNothing) {
  GovernanceFilter filter(cell_, MustVerifier());
  RequestContext ctx;
  ctx.x_api_key = fixture_.active_key;  // the other header works the same
  ASSERT_EQ(filter.OnRequest(ctx), FilterStatus::kContinue);
  EXPECT_EQ(ctx.principal.key->key.tenant_id, "acme");
  filter.OnComplete(ctx);  // no usage, no output: released
  EXPECT_EQ(ctx.cost_micros, 0);
  EXPECT_EQ(
      ctx.principal.tenant->counters->budget.Read(governance::MonthOf(ctx.now_unix)).committed, 0);
}

TEST_F(GovernanceFilterTest, ARevokedKeyIsRefusedWithoutAReservation) {
  GovernanceFilter filter(cell_, MustVerifier());
  RequestContext ctx;
  const std::string bearer = "Bearer " + fixture_.revoked_key;
  ctx.authorization = bearer;
  EXPECT_EQ(filter.OnRequest(ctx), FilterStatus::kRespond);
  EXPECT_EQ(ctx.refusal->code, ErrorCode::kUnauthorized);
  EXPECT_FALSE(ctx.admission.active());
}

// The suspension's real case: read-through. A key created after the worker's snapshot is
// admitted once the refresh (the store's reload) has published the snapshot that has it.
TEST_F(GovernanceFilterTest, ReadThroughSuspendsOnTheReloadAndAdmitsUnderTheFreshSnapshot) {
  governance::GeneratedKey fresh = gt::MustGenerate();
  governance::SnapshotData next = fixture_.data;
  next.keys.push_back(gt::MakeKey(fresh, "acme"));
  int reloads = 0;
  // Coroutines take their state as parameters (GCC 12 and capturing coroutine lambdas).
  SnapshotRefresh refresh = [this, &next, &reloads] { return Publish(&cell_, &next, &reloads); };
  GovernanceFilter filter(cell_, MustVerifier(), refresh);
  RequestContext ctx;
  const std::string bearer = "Bearer " + fresh.key;
  ctx.authorization = bearer;
  EXPECT_EQ(filter.OnRequest(ctx), FilterStatus::kSuspend) << "nothing decided before the reload";
  EXPECT_EQ(reloads, 0);
  EXPECT_EQ(testing::RunOnLoop(RunLikeADoor(filter, ctx)), FilterStatus::kContinue);
  EXPECT_EQ(reloads, 1);
  ASSERT_NE(ctx.principal.key, nullptr);
  EXPECT_EQ(ctx.principal.key->key.public_id, fresh.public_id);
  filter.OnComplete(ctx);
}

TEST_F(GovernanceFilterTest, AFailedReloadIsTheRequestsAnswer) {
  SnapshotRefresh refresh = [] { return FailToReload(); };
  GovernanceFilter filter(cell_, MustVerifier(), refresh);
  RequestContext ctx;
  ctx.authorization = bearer_;
  EXPECT_EQ(testing::RunOnLoop(RunLikeADoor(filter, ctx)), FilterStatus::kRespond);
  ASSERT_TRUE(ctx.refusal);
  EXPECT_EQ(ctx.refusal->message, "store down");
  EXPECT_FALSE(ctx.admission.active());
}

// The rate decisions go on the response once admission has decided, also when it decided
// after a suspension, and exactly once: the headers of the fresh snapshot's plan.
TEST_F(GovernanceFilterTest, RateHeadersGoOnTheResponseOnceWhenAdmissionDecides) {
  governance::SnapshotData next = fixture_.data;
  next.plans[0].rpm = 5;
  int reloads = 0;
  SnapshotRefresh refresh = [this, &next, &reloads] { return Publish(&cell_, &next, &reloads); };
  GovernanceFilter filter(cell_, MustVerifier(), refresh);
  http::ResponseHeaders headers;
  RequestContext ctx;
  ctx.response_headers = &headers;
  ctx.authorization = bearer_;
  EXPECT_EQ(filter.OnRequest(ctx), FilterStatus::kSuspend);
  EXPECT_TRUE(headers.empty()) << "nothing decided before the reload";
  EXPECT_EQ(testing::RunOnLoop(RunLikeADoor(filter, ctx)), FilterStatus::kContinue);
  EXPECT_EQ(headers.Find("x-ratelimit-limit-requests"), "5");
  EXPECT_EQ(headers.Find("x-ratelimit-remaining-requests"), "4");
  const std::string_view lines = headers.lines();
  EXPECT_EQ(lines.find("x-ratelimit-limit-requests"), lines.rfind("x-ratelimit-limit-requests"))
      << "added once: " << lines;
  EXPECT_FALSE(ctx.refusal);
  filter.OnComplete(ctx);

  http::ResponseHeaders refused;
  RequestContext none;
  none.response_headers = &refused;
  EXPECT_EQ(testing::RunOnLoop(RunLikeADoor(filter, none)), FilterStatus::kRespond);
  EXPECT_TRUE(refused.empty()) << "no key, no limits: nothing to say";
}

}  // namespace
}  // namespace turnpike::core
