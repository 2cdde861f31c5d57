// The turn-event hook (doors/agents/turn_events.h): subscribers in registration order, each
// event once; the per-status counters and their /metrics series; and the agents' budgets
// (doors/agents/budgets.h) over the in-process counters engine.
#include "doors/agents/turn_events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "doors/agents/state.h"
#include "governance/local_counters.h"
#include "observability/metrics.h"

namespace turnpike::agents {
namespace {

TEST(TurnEventsTest, EverySubscriberSeesEachEventOnceInOrder) {
  TurnEvents events;
  std::vector<std::string> seen;
  events.Subscribe(
      [&seen](const TurnEvent& e) { seen.push_back("a:" + std::string(e.response_id)); });
  events.Subscribe(
      [&seen](const TurnEvent& e) { seen.push_back("b:" + std::string(e.response_id)); });
  TurnEvent event;
  event.response_id = "resp_1";
  events.Publish(event);
  event.response_id = "resp_2";
  events.Publish(event);
  EXPECT_EQ(seen, (std::vector<std::string>{"a:resp_1", "b:resp_1", "a:resp_2", "b:resp_2"}));
}

TEST(TurnEventsTest, TheSharedStateCountsTurnsByStatusForMetrics) {
  AgentsShared shared;
  shared.Configure(std::chrono::milliseconds(0), nullptr);
  shared.Configure(std::chrono::milliseconds(0), nullptr);  // again: still one counter
  std::vector<TurnStatus> statuses;
  shared.events.Subscribe([&statuses](const TurnEvent& e) { statuses.push_back(e.status); });
  for (TurnStatus s : {TurnStatus::kCompleted, TurnStatus::kCompleted, TurnStatus::kFailed,
                       TurnStatus::kCancelled}) {
    TurnEvent event;
    event.status = s;
    shared.events.Publish(event);
  }
  EXPECT_EQ(statuses.size(), 4u);
  EXPECT_EQ(shared.turn_counts.count(TurnStatus::kCompleted), 2u);
  EXPECT_EQ(shared.turn_counts.count(TurnStatus::kIncomplete), 0u);
  EXPECT_EQ(shared.turn_counts.count(TurnStatus::kFailed), 1u);
  EXPECT_EQ(shared.turn_counts.count(TurnStatus::kCancelled), 1u);
  observability::PrometheusWriter w;
  shared.turn_counts.RenderMetrics(w);
  const std::string text = w.Take();
  EXPECT_NE(text.find("turnpike_agent_turns_total{status=\"completed\"} 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("turnpike_agent_turns_total{status=\"incomplete\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_agent_turns_total{status=\"cancelled\"} 1\n"), std::string::npos);
}

TEST(AgentBudgetsTest, OneCounterPerAgentRestoredAndRead) {
  governance::LocalCounters counters;
  AgentBudgets budgets;
  EXPECT_EQ(budgets.Find("a"), nullptr);  // no engine: no budget
  budgets.set_counters(&counters);
  const governance::MonthId month = 660;
  budgets.Restore("a", month, 1'000);
  governance::BudgetCounter* a = budgets.Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(budgets.Find("a"), a);
  EXPECT_NE(budgets.Find("b"), a);
  EXPECT_EQ(budgets.Read("a", month).spent, 1'000);
  EXPECT_EQ(budgets.Read("never", month).spent, 0);
  governance::ReserveResult held = a->Reserve(month, 500, 1'400);
  EXPECT_FALSE(held);  // 1,000 spent + 500 > 1,400
  governance::ReserveResult fits = a->Reserve(month, 400, 1'400);
  ASSERT_TRUE(fits);
  fits->Settle(300);
  EXPECT_EQ(budgets.Read("a", month).spent, 1'300);
}

}  // namespace
}  // namespace turnpike::agents
