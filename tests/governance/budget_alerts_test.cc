// Budget alerts (governance/budget_alerts.h): which thresholds a settle announces, once each per
// tenant and month in a process, lowest first; none without a budget.
#include "governance/budget_alerts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "governance/local_counters.h"
#include "governance/snapshot.h"

namespace turnpike::governance {
namespace {

constexpr MonthId kMonth = 683;
constexpr int64_t kBudget = 1'000'000;

class BudgetAlertsTest : public ::testing::Test {
 protected:
  BudgetAlertsTest() : alerts_({80, 50, 100}) {
    plan_.id = "p";
    plan_.monthly_budget_micros = kBudget;
    alerts_.SetSink([this](const BudgetCrossing& c) {
      fired_.push_back(std::string(c.tenant) + ":" + std::to_string(c.month) + ":" +
                       std::to_string(c.percent));
    });
  }
  TenantEntry Tenant(const std::string& id) {
    TenantEntry t;
    t.tenant.id = id;
    t.plan = &plan_;
    t.counters = counters_.MakeScope(ScopeKind::kTenant, id);
    return t;
  }

  LocalCounters counters_;
  Plan plan_;
  BudgetAlerts alerts_;
  std::vector<std::string> fired_;
};

TEST_F(BudgetAlertsTest, EachThresholdOnceLowestFirst) {
  TenantEntry t = Tenant("t1");
  t.counters->budget.Restore(kMonth, 499'999);
  alerts_.Check(t);
  EXPECT_TRUE(fired_.empty());
  t.counters->budget.Restore(kMonth, 500'000);
  alerts_.Check(t);
  alerts_.Check(t);
  EXPECT_EQ(fired_, (std::vector<std::string>{"t1:683:50"}));
  // One settle past two thresholds announces both, lowest first.
  t.counters->budget.Restore(kMonth, 1'200'000);
  alerts_.Check(t);
  alerts_.Check(t);
  EXPECT_EQ(fired_, (std::vector<std::string>{"t1:683:50", "t1:683:80", "t1:683:100"}));
}

TEST_F(BudgetAlertsTest, ANewMonthStartsAgainAndTenantsAreApart) {
  TenantEntry a = Tenant("a");
  TenantEntry b = Tenant("b");
  a.counters->budget.Restore(kMonth, 900'000);
  alerts_.Check(a);
  b.counters->budget.Restore(kMonth, 600'000);
  alerts_.Check(b);
  a.counters->budget.Restore(kMonth + 1, 500'000);
  alerts_.Check(a);
  EXPECT_EQ(fired_, (std::vector<std::string>{"a:683:50", "a:683:80", "b:683:50", "a:684:50"}));
}

TEST_F(BudgetAlertsTest, NothingWithoutABudgetOrThresholds) {
  TenantEntry t = Tenant("t");
  t.counters->budget.Restore(kMonth, 5 * kBudget);
  plan_.monthly_budget_micros.reset();
  alerts_.Check(t);
  EXPECT_TRUE(fired_.empty());
  plan_.monthly_budget_micros = kBudget;
  BudgetAlerts none({});
  none.SetSink([this](const BudgetCrossing&) { fired_.push_back("x"); });
  none.Check(t);
  EXPECT_TRUE(fired_.empty());
  alerts_.Check(t);
  EXPECT_EQ(fired_.size(), 3u);
}

TEST_F(BudgetAlertsTest, APlansOwnThresholdsReplaceTheGatewaysAndNoneIsNone) {
  TenantEntry t = Tenant("t");
  plan_.budget_alerts = std::vector<int>{10, 90};
  t.counters->budget.Restore(kMonth, 600'000);
  alerts_.Check(t);
  EXPECT_EQ(fired_, (std::vector<std::string>{"t:683:10"}));
  t.counters->budget.Restore(kMonth, 950'000);
  alerts_.Check(t);
  EXPECT_EQ(fired_, (std::vector<std::string>{"t:683:10", "t:683:90"}));
  plan_.budget_alerts = std::vector<int>{};
  t.counters->budget.Restore(kMonth + 1, 5 * kBudget);
  alerts_.Check(t);
  EXPECT_EQ(fired_.size(), 2u);
  // The gateway's own list is empty: a plan with thresholds still alerts.
  BudgetAlerts gateway_none({});
  gateway_none.SetSink(
      [this](const BudgetCrossing& c) { fired_.push_back(std::to_string(c.percent)); });
  plan_.budget_alerts = std::vector<int>{300};
  gateway_none.Check(t);
  EXPECT_EQ(fired_.back(), "300");
}

TEST_F(BudgetAlertsTest, ThresholdsChangedMidMonthAnnounceThoseAboveTheHighestAnnounced) {
  TenantEntry t = Tenant("t");
  t.counters->budget.Restore(kMonth, 850'000);
  alerts_.Check(t);  // the gateway's 50 and 80
  EXPECT_EQ(fired_, (std::vector<std::string>{"t:683:50", "t:683:80"}));
  plan_.budget_alerts = std::vector<int>{60, 85, 90};
  alerts_.Check(t);  // 85 is crossed and above 80; 60 is below the 80 announced: not announced
  EXPECT_EQ(fired_, (std::vector<std::string>{"t:683:50", "t:683:80", "t:683:85"}));
  t.counters->budget.Restore(kMonth, 900'000);
  alerts_.Check(t);
  alerts_.Check(t);
  EXPECT_EQ(fired_.back(), "t:683:90");
  EXPECT_EQ(fired_.size(), 4u);
}

}  // namespace
}  // namespace turnpike::governance
