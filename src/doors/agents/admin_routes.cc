// /admin/v1/agents[/{id}]: the agents' admin resources (core/admin_route.h). A tenant's admin
// token sees only its own agents (the tenant comes from the body on create, from ?tenant=
// otherwise, which the admin door fills in for a tenant's token); another tenant's agent is a
// 404 like a missing one. Every answer adds the agent's `spend` this month (agent.h). Every write
// is a new version and bumps the agents' generation, so this replica's workers read the new config
// on their next turn. Read-only: /admin/v1/agents/{id}/versions (every version, newest first)
// and /admin/v1/conversations?tenant=&limit= (the newest conversations, for the console).
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>

#include "common/clock.h"
#include "doors/agents/agent_door.h"
#include "governance/budget.h"

namespace turnpike::agents {
namespace net = boost::asio;
namespace json = boost::json;

namespace {

using Answer = Result<core::AdminAnswer>;

Error NoAgent(std::string_view id) {
  return Error{ErrorCode::kNotFound, "No agent " + std::string(id) + ".", "id"};
}

// The agent as the admin API answers it: the stored form and its spend this month (this
// replica's view: its counter, restored at start-up and settled by every turn it ran).
std::string Render(const Agent& agent, AgentBudgets& budgets) {
  json::object o = AgentObject(agent);
  const governance::MonthId month = governance::MonthOf(UnixSeconds());
  const governance::BudgetUsage usage = budgets.Read(agent.id, month);
  constexpr double kMicrosPerUsd = 1e6;
  o["spend"] = json::object{{"month", governance::FormatMonth(month)},
                            {"spent_usd", static_cast<double>(usage.spent) / kMicrosPerUsd}};
  return json::serialize(o);
}

Result<json::object> ObjectBody(std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) {
    return Error{ErrorCode::kInvalidRequest, "The body must be a JSON object.", ""};
  }
  return std::move(v.as_object());
}

Status CheckModel(const model_call::RouteTable* routes, const std::string& model) {
  if (routes != nullptr && routes->Find(model) == nullptr) {
    return Error{ErrorCode::kInvalidRequest, "No model `" + model + "` is configured.", "model"};
  }
  return Ok{};
}

net::awaitable<Answer> Create(store::StoreThread* store, AgentsShared* shared,
                              const model_call::RouteTable* routes, std::string body) {
  Result<json::object> object = ObjectBody(body);
  if (!object.ok()) co_return object.error();
  Result<Agent> agent = AgentFromCreate(*object);
  if (!agent.ok()) co_return agent.error();
  if (Status s = CheckModel(routes, agent->model); !s.ok()) co_return s.error();
  if (agent->id.empty()) agent->id = MintId("agt_");
  agent->version = 1;
  agent->created_at = agent->updated_at = UnixSeconds();
  auto put = [a = *agent](AgentStore& s) -> Result<bool> {
    Status put = s.PutAgent(a);
    if (!put.ok()) return put.error();
    return true;
  };
  Result<bool> done =
      co_await WithAgentStore<bool>(store, std::move(put), store::JobLane::kControl);
  if (!done.ok()) {
    if (done.error().code == ErrorCode::kConflict) {
      co_return Error{ErrorCode::kConflict, "An agent " + agent->id + " exists already.", "id"};
    }
    co_return done.error();
  }
  shared->agents.Bump();
  co_return core::AdminAnswer{201, Render(*agent, shared->budgets)};
}

net::awaitable<Answer> List(store::StoreThread* store, AgentsShared* shared, std::string tenant) {
  auto list = [tenant](AgentStore& s) { return s.ListAgents(tenant); };
  Result<std::vector<Agent>> agents =
      co_await WithAgentStore<std::vector<Agent>>(store, std::move(list), store::JobLane::kRead);
  if (!agents.ok()) co_return agents.error();
  std::string body = "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < agents->size(); ++i) {
    if (i > 0) body.push_back(',');
    body.append(Render((*agents)[i], shared->budgets));
  }
  body.append("]}");
  co_return core::AdminAnswer{200, std::move(body)};
}

// GET, POST (update) and DELETE of one agent.
net::awaitable<Answer> One(store::StoreThread* store, AgentsShared* shared,
                           const model_call::RouteTable* routes, core::Verb method, std::string id,
                           std::string tenant, std::string body) {
  std::optional<json::object> update;
  if (method == core::Verb::post) {
    Result<json::object> object = ObjectBody(body);
    if (!object.ok()) co_return object.error();
    update = std::move(*object);
  }
  const int64_t now = UnixSeconds();
  const bool del = method == core::Verb::delete_;
  // Read, check the tenant, and write in one job on the control lane.
  auto run = [id, tenant, update, now, del, routes](AgentStore& s) -> Result<std::optional<Agent>> {
    Result<std::optional<Agent>> current = s.GetAgent(id, 0);
    if (!current.ok() || !current.value()) return current;
    if (!tenant.empty() && (*current)->tenant != tenant) return std::optional<Agent>();
    if (del) {
      Result<bool> deleted = s.DeleteAgent(id, now);
      if (!deleted.ok()) return deleted.error();
      return current;
    }
    if (!update) return current;
    Result<Agent> next = AgentFromUpdate(**current, *update);
    if (!next.ok()) return next.error();
    if (Status m = CheckModel(routes, next->model); !m.ok()) return m.error();
    next->version = (*current)->version + 1;
    next->updated_at = now;
    if (Status put = s.PutAgent(*next); !put.ok()) return put.error();
    return std::optional<Agent>(std::move(*next));
  };
  const store::JobLane lane =
      method == core::Verb::get ? store::JobLane::kRead : store::JobLane::kControl;
  Result<std::optional<Agent>> agent =
      co_await WithAgentStore<std::optional<Agent>>(store, std::move(run), lane);
  if (!agent.ok()) co_return agent.error();
  if (!agent.value()) co_return NoAgent(id);
  if (method != core::Verb::get) shared->agents.Bump();
  if (del) {
    co_return core::AdminAnswer{200, "{\"id\":" + json::serialize(json::string(id)) +
                                         ",\"object\":\"agent.deleted\",\"deleted\":true}"};
  }
  co_return core::AdminAnswer{200, Render(**agent, shared->budgets)};
}

constexpr int64_t kDefaultConversations = 50;
constexpr int64_t kMaxConversations = 500;

net::awaitable<Answer> Versions(store::StoreThread* store, std::string id, std::string tenant) {
  auto list = [id](AgentStore& s) { return s.ListVersions(id); };
  Result<std::vector<Agent>> versions =
      co_await WithAgentStore<std::vector<Agent>>(store, std::move(list), store::JobLane::kRead);
  if (!versions.ok()) co_return versions.error();
  if (versions->empty() || (!tenant.empty() && versions->front().tenant != tenant)) {
    co_return NoAgent(id);
  }
  json::array data;
  for (const Agent& a : versions.value()) data.push_back(AgentObject(a));
  co_return core::AdminAnswer{
      200, json::serialize(json::object{{"object", "list"}, {"data", std::move(data)}})};
}

net::awaitable<Answer> Conversations(store::StoreThread* store, std::string tenant,
                                     std::string limit_text) {
  int64_t limit = kDefaultConversations;
  if (!limit_text.empty()) {
    char* end = nullptr;
    const long long v = std::strtoll(limit_text.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > kMaxConversations) {
      co_return Error{ErrorCode::kInvalidRequest,
                      "limit must be from 1 to " + std::to_string(kMaxConversations), "limit"};
    }
    limit = v;
  }
  auto list = [tenant, limit](AgentStore& s) { return s.ListConversations(tenant, limit); };
  Result<std::vector<ConversationRow>> rows = co_await WithAgentStore<std::vector<ConversationRow>>(
      store, std::move(list), store::JobLane::kRead);
  if (!rows.ok()) co_return rows.error();
  json::array data;
  for (const ConversationRow& c : rows.value()) {
    boost::system::error_code ec;
    json::value metadata = json::parse(c.metadata, ec);
    data.push_back(json::object{{"id", c.id},
                                {"object", "conversation"},
                                {"tenant", c.tenant},
                                {"metadata", ec ? json::value(json::object{}) : metadata},
                                {"created_at", c.created_at}});
  }
  co_return core::AdminAnswer{
      200, json::serialize(json::object{{"object", "list"}, {"data", std::move(data)}})};
}

}  // namespace

std::vector<core::AdminRoute> AgentAdminRoutes(store::StoreThread* store, AgentsShared& shared,
                                               const model_call::RouteTable* routes) {
  using core::Verb;
  AgentsShared* s = &shared;
  std::vector<core::AdminRoute> out;
  out.push_back({"/admin/v1/agents",
                 {Verb::post},
                 core::TenantFrom::Body("tenant"),
                 [store, s, routes](const core::AdminCall& call) {
                   return Create(store, s, routes, std::string(call.body));
                 }});
  out.push_back({"/admin/v1/agents",
                 {Verb::get},
                 core::TenantFrom::Query("tenant"),
                 [store, s](const core::AdminCall& call) { return List(store, s, call.tenant); }});
  const Verb methods[] = {Verb::get, Verb::post, Verb::delete_};
  for (Verb method : methods) {
    out.push_back({"/admin/v1/agents/{id}",
                   {method},
                   core::TenantFrom::Query("tenant"),
                   [store, s, routes, method](const core::AdminCall& call) {
                     return One(store, s, routes, method, std::string(call.Param("id")),
                                call.tenant, std::string(call.body));
                   }});
  }
  out.push_back({"/admin/v1/agents/{id}/versions",
                 {Verb::get},
                 core::TenantFrom::Query("tenant"),
                 [store](const core::AdminCall& call) {
                   return Versions(store, std::string(call.Param("id")), call.tenant);
                 }});
  out.push_back({"/admin/v1/conversations",
                 {Verb::get},
                 core::TenantFrom::Query("tenant"),
                 [store](const core::AdminCall& call) {
                   return Conversations(store, call.tenant, std::string(call.Query("limit")));
                 }});
  return out;
}

}  // namespace turnpike::agents
