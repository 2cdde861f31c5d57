// The agents' monthly budgets: one governance budget scope per agent (ScopeKind::kAgent), made
// by the gateway's counters engine (governance/counters.h) on the agent's first turn in this
// process, so an agent's budget is enforced exactly as a tenant's is: reserved before the turn
// is admitted (the governance filter, with the key's and the tenant's: AdmissionRequest::
// scope_budget), settled once at its end, in-process atomics on one node and leases of the
// shared Redis ledger in fleet mode (keyed "a:<agent id>", so every replica draws on one
// ledger).
//
// A scope is kept for the life of the process once made (an admitted turn's reservation points
// at its counter, and an agent deleted and created again keeps its spend): one small object
// per agent that ran a turn here. The cap is the agent's (Agent::monthly_budget_micros) as the
// turn read it, so an update is in force from the next turn that reads the new version.
//
// Persistence: the spend of the current month is read back at start-up, before the door
// serves, from the call log (every turn's record carries its agent and cost:
// AgentStore::AgentSpend; a row the call log dropped is missing from it); in fleet mode the
// Redis ledger holds the fleet's, and the call log's restores this replica's counter as it does
// a tenant's.
//
// Thread safety: every method is safe from any thread; Find takes a short lock over one hash
// lookup (and, the first time, the engine's MakeScope: an allocation, and a mutex in fleet
// mode), never across I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "governance/budget.h"
#include "governance/counters.h"

namespace turnpike::agents {

class AgentBudgets {
 public:
  // At start-up, before any worker runs; null (no governance): Find answers null.
  void set_counters(governance::Counters* counters) { counters_ = counters; }

  // The agent's budget counter, made on first use; null without a counters engine. Valid for
  // the life of this object.
  governance::BudgetCounter* Find(std::string_view agent_id);
  // This month's spend as this replica sees it (zeros for an agent that never ran here).
  governance::BudgetUsage Read(std::string_view agent_id, governance::MonthId month);
  // Start-up, before any turn: the persisted spend of `month`.
  void Restore(std::string_view agent_id, governance::MonthId month, int64_t spent);

 private:
  governance::Counters* counters_ = nullptr;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<governance::ScopeCounters>> scopes_;
};

}  // namespace turnpike::agents
