#include "doors/agents/budgets.h"

namespace turnpike::agents {

governance::BudgetCounter* AgentBudgets::Find(std::string_view agent_id) {
  if (counters_ == nullptr) return nullptr;
  std::lock_guard lock(mu_);
  auto [it, added] = scopes_.try_emplace(std::string(agent_id));
  if (added) it->second = counters_->MakeScope(governance::ScopeKind::kAgent, agent_id);
  return &it->second->budget;
}

governance::BudgetUsage AgentBudgets::Read(std::string_view agent_id, governance::MonthId month) {
  {
    std::lock_guard lock(mu_);
    auto it = scopes_.find(std::string(agent_id));
    if (it != scopes_.end()) return it->second->budget.Read(month);
  }
  return governance::BudgetUsage{month, 0, 0};
}

void AgentBudgets::Restore(std::string_view agent_id, governance::MonthId month, int64_t spent) {
  governance::BudgetCounter* budget = Find(agent_id);
  if (budget != nullptr) budget->Restore(month, spent);
}

}  // namespace turnpike::agents
