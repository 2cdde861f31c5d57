#include "doors/agents/agent_door.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <chrono>
#include <cstdio>
#include <future>

#include "common/clock.h"
#include "core/openai_errors.h"
#include "doors/agents/items.h"
#include "doors/agents/retention.h"
#include "governance/budget.h"
#include "observability/metrics.h"

namespace turnpike::agents {
namespace net = boost::asio;

namespace {

// GET /v1/responses/{id}?stream=true asks for the stream (resume.cc), not the object.
bool WantsStream(std::string_view target) {
  boost::system::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target);
  if (!url) return false;
  for (auto param : url->params()) {
    if (param.key == "stream") return param.value == "true";
  }
  return false;
}

// A stored response of a turn that was running when its process stopped, as failed.
std::string FailedBody(std::string_view body) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return std::string(body);
  boost::json::object& response = v.as_object();
  response["status"] = "failed";
  response["error"] = boost::json::object{{"code", "server_error"},
                                          {"message", "The gateway stopped while this turn ran."}};
  return boost::json::serialize(response);
}

// At start-up: the turns a stopped process left unended become failed (FailUnended).
class FailUnendedJob final : public store::StoreJob {
 public:
  void Run(store::Engine& engine) override {
    AgentStore* agents = engine.role<AgentStore>();
    if (agents == nullptr) return;
    Result<int64_t> failed = agents->FailUnended(FailedBody);
    if (!failed.ok()) {
      std::fprintf(stderr, "turnpike: agents: failing the unended turns: %s\n",
                   failed.error().message.c_str());
    }
  }
  void Refuse(const Error& error) override {
    std::fprintf(stderr, "turnpike: agents: failing the unended turns: %s\n",
                 error.message.c_str());
  }
};

// At start-up: each agent's spend this month, from the call log, into its budget counter.
// `done` is set once it ran or was refused.
class RestoreSpendJob final : public store::StoreJob {
 public:
  RestoreSpendJob(std::shared_ptr<AgentsShared> shared, std::shared_ptr<std::promise<void>> done)
      : shared_(std::move(shared)), done_(std::move(done)) {}
  void Run(store::Engine& engine) override {
    AgentStore* agents = engine.role<AgentStore>();
    if (agents == nullptr) return Refuse(Error{ErrorCode::kInternal, "no agents role", ""});
    const governance::MonthId month = governance::MonthOf(UnixSeconds());
    Result<std::vector<std::pair<std::string, int64_t>>> spend =
        agents->AgentSpend(governance::FormatMonth(month));
    if (!spend.ok()) return Refuse(spend.error());
    for (const auto& [agent, micros] : *spend) shared_->budgets.Restore(agent, month, micros);
    done_->set_value();
  }
  void Refuse(const Error& error) override {
    std::fprintf(stderr, "turnpike: agents: restoring the agents' spend: %s\n",
                 error.message.c_str());
    done_->set_value();
  }

 private:
  const std::shared_ptr<AgentsShared> shared_;
  const std::shared_ptr<std::promise<void>> done_;
};

// How long start-up waits for the agents' spend (a restore of a counter a turn already uses
// would lose that turn's reservation, so the door waits for it before it serves).
constexpr std::chrono::seconds kRestoreWait{60};

// The feature's /metrics series: turns by status, their store writes, what retention purged.
void RenderAgentMetrics(const AgentsShared& shared, observability::PrometheusWriter& w) {
  shared.turn_counts.RenderMetrics(w);
  shared.writer.RenderMetrics(w);
  constexpr std::string_view kPurged = "turnpike_agent_purged_total";
  w.Family(kPurged, "Stored responses and conversations purged by agents.retention",
           observability::MetricType::kCounter);
  w.Sample(kPurged, {{"kind", "response"}},
           static_cast<double>(shared.purged_responses.load(std::memory_order_relaxed)));
  w.Sample(kPurged, {{"kind", "conversation"}},
           static_cast<double>(shared.purged_conversations.load(std::memory_order_relaxed)));
}

}  // namespace

AgentDoor::AgentDoor(const app::FeatureContext& context, AgentsShared& shared, int worker,
                     core::WorkerCore& core)
    : context_(context),
      shared_(shared),
      core_(core),
      call_options_(model_call::CallOptionsFrom(context.config.upstream)),
      rng_(static_cast<uint32_t>(worker + 1)),
      call_deps_{core.pool(),
                 call_options_,
                 context.config.routing,
                 std::chrono::milliseconds{15'000},
                 context.config.upstream.max_response_bytes,
                 core.probe().retries,
                 rng_} {
  if (std::unique_ptr<core::Filter> governance = core.MakeGovernanceFilter()) {
    chain_.Add(std::move(governance));
  }
}

std::vector<core::RouteSpec> AgentDoor::Routes() {
  using core::Verb;
  return {
      {"/v1/conversations", {Verb::post}, "conversations", kConversations},
      {"/v1/conversations/{id}",
       {Verb::get, Verb::post, Verb::delete_},
       "conversations",
       kConversation},
      {"/v1/conversations/{id}/items", {Verb::get, Verb::post}, "conversations", kItems},
      {"/v1/conversations/{id}/items/{item}", {Verb::get, Verb::delete_}, "conversations", kItem},
      {"/v1/responses/{id}", {Verb::get, Verb::delete_}, "responses", kResponse},
      {"/v1/responses/{id}/input_items", {Verb::get}, "responses", kInputItems},
      {"/v1/responses/{id}/cancel", {Verb::post}, "responses", kCancel},
  };
}

core::ErrorReply AgentDoor::RenderError(int, const Error& error) const {
  // A turn refused because another holds its conversation (turn.cc).
  if (error.code == ErrorCode::kConflict && error.param == "conversation") {
    return {HttpStatus(error.code), core::OpenAiErrorBody(error, "conversation_busy")};
  }
  return {HttpStatus(error.code), core::OpenAiErrorBody(error)};
}

net::awaitable<void> AgentDoor::Refuse(http::Exchange& exchange, core::RequestContext& ctx,
                                       const Error& error, bool chain_ran) {
  co_await core_.RespondError(exchange, ctx, error.code, RenderError(-1, error));
  if (chain_ran) chain_.Complete(ctx);
  core_.Finish(exchange, ctx);
}

net::awaitable<void> AgentDoor::Handle(http::Exchange& exchange, core::RouteMatch match) {
  core::RequestContext ctx;
  core_.Start(exchange, match, ctx);
  core::WorkerCore::ReadCredentials(exchange, ctx);
  Result<governance::Principal> principal = core_.Authenticate(ctx);
  if (!principal.ok()) {
    const Error error = principal.error();
    co_await Refuse(exchange, ctx, error, false);
    co_return;
  }
  const std::string tenant = principal->tenant->tenant.id;
  if (match.route == kResponse && exchange.request().method() == core::Verb::get &&
      WantsStream(exchange.target())) {
    co_await ResumeStream(exchange, ctx, std::string(match.Param("id")), tenant);
    core_.Finish(exchange, ctx);
    co_return;
  }
  Result<core::AdminAnswer> answer = co_await Serve(exchange, match, tenant);
  if (!answer.ok()) {
    const Error error = answer.error();
    co_await Refuse(exchange, ctx, error, false);
    co_return;
  }
  co_await core_.Respond(exchange, ctx, answer->status, core::kJsonContentType,
                         std::move(answer->body));
  core_.Finish(exchange, ctx);
}

net::awaitable<Result<std::shared_ptr<const Agent>>> AgentDoor::FindAgent(std::string id,
                                                                          int64_t version,
                                                                          std::string tenant) {
  const std::string key = version == 0 ? id : id + "@" + std::to_string(version);
  const SteadyClock::time_point now = SteadyClock::now();
  std::shared_ptr<const Agent> agent = shared_.agents.Find(key, now);
  if (agent == nullptr) {
    auto read = [id, version](AgentStore& store) { return store.GetAgent(id, version); };
    Result<std::optional<Agent>> loaded = co_await WithAgentStore<std::optional<Agent>>(
        context_.store, std::move(read), store::JobLane::kRead);
    if (!loaded.ok()) co_return loaded.error();
    if (!loaded.value()) co_return std::shared_ptr<const Agent>();
    agent = std::make_shared<const Agent>(std::move(**loaded));
    shared_.agents.Put(key, agent, now);
  }
  if (agent->tenant != tenant) co_return std::shared_ptr<const Agent>();
  co_return agent;
}

net::awaitable<Result<std::shared_ptr<const Memory>>> AgentDoor::LoadMemory(std::string id,
                                                                            int64_t window,
                                                                            std::string tenant) {
  const SteadyClock::time_point now = SteadyClock::now();
  std::shared_ptr<const Memory> memory = shared_.conversations.FindMemory(id, now);
  if (memory != nullptr && (memory->complete || memory->limit >= window)) {
    if (memory->tenant != tenant) co_return std::shared_ptr<const Memory>();
    co_return memory;
  }
  struct Loaded {
    std::optional<ConversationRow> conversation;
    std::vector<ItemRow> items;
  };
  auto read = [id, window](AgentStore& store) -> Result<Loaded> {
    Result<std::optional<ConversationRow>> conversation = store.GetConversation(id);
    if (!conversation.ok()) return conversation.error();
    Loaded loaded{std::move(*conversation), {}};
    if (!loaded.conversation) return loaded;
    Result<std::vector<ItemRow>> items = store.LastItems(id, window + 1);
    if (!items.ok()) return items.error();
    loaded.items = std::move(*items);
    return loaded;
  };
  Result<Loaded> loaded =
      co_await WithAgentStore<Loaded>(context_.store, std::move(read), store::JobLane::kRead);
  if (!loaded.ok()) co_return loaded.error();
  if (!loaded->conversation || loaded->conversation->tenant != tenant) {
    co_return std::shared_ptr<const Memory>();
  }
  auto fresh = std::make_shared<Memory>();
  fresh->tenant = tenant;
  // One more than the window was read: fewer means the conversation has no more.
  fresh->complete = static_cast<int64_t>(loaded->items.size()) <= window;
  if (!fresh->complete) loaded->items.erase(loaded->items.begin());
  fresh->limit = window;
  for (ItemRow& row : loaded->items) fresh->items.push_back(MakeMemoryItem(std::move(row.json)));
  shared_.conversations.PutMemory(id, fresh, now);
  co_return std::shared_ptr<const Memory>(std::move(fresh));
}

}  // namespace turnpike::agents

namespace turnpike::agents {

namespace {

// What the other replicas send this one (fleet.h): a cancel of a turn running here, answered
// once it has stored its end; the answer to a cancel sent from here. On the fleet's thread.
Fleet::Inbox MakeInbox(const std::shared_ptr<AgentsShared>& shared) {
  std::weak_ptr<AgentsShared> weak = shared;
  Fleet::Inbox inbox;
  inbox.cancel = [weak](std::string response, std::string tenant, std::string from) {
    std::shared_ptr<AgentsShared> s = weak.lock();
    if (s == nullptr) return;
    auto answer = [weak, from, response](std::string body) {
      std::shared_ptr<AgentsShared> alive = weak.lock();
      if (alive != nullptr) alive->fleet->SendStopped(from, response, body);
    };
    s->turns.Cancel(response, tenant, std::move(answer));
  };
  inbox.stopped = [weak](std::string response, std::string body) {
    std::shared_ptr<AgentsShared> s = weak.lock();
    if (s != nullptr) s->remote_stops.Stopped(response, body);
  };
  return inbox;
}

}  // namespace

app::Feature AgentsFeature(FleetFactory make_fleet, std::vector<TurnSubscriber> subscribers) {
  // One per feature: every worker's door and the admin routes share it.
  auto shared = std::make_shared<AgentsShared>();
  for (TurnSubscriber& subscriber : subscribers) shared->events.Subscribe(std::move(subscriber));
  const auto on = [](const config::Config& config) {
    return config.governance.enabled && config.agents.enabled;
  };
  app::Feature feature;
  feature.role = [on](const config::Config& config) -> std::optional<store::RoleSpec> {
    if (!on(config)) return std::nullopt;
    return AgentsRole();
  };
  feature.door = [on, shared,
                  make_fleet](const app::FeatureContext& context) -> std::optional<core::DoorSpec> {
    if (!on(context.config)) return std::nullopt;
    shared->Configure(context.config.agents.cache_ttl, context.counters);
    if (context.metrics != nullptr) {
      context.metrics->push_back(
          [s = shared.get()](observability::PrometheusWriter& w) { RenderAgentMetrics(*s, w); });
    }
    // The agents' budgets start from this month's spend, before any turn: the main thread
    // waits for the job (the store thread runs by now: governance started it).
    if (context.store != nullptr && context.counters != nullptr) {
      auto done = std::make_shared<std::promise<void>>();
      std::future<void> restored = done->get_future();
      context.store->Post(std::make_unique<RestoreSpendJob>(shared, std::move(done)),
                          store::JobLane::kControl);
      if (restored.wait_for(kRestoreWait) != std::future_status::ready) {
        std::fprintf(stderr, "turnpike: agents: the agents' spend was not restored in time\n");
      }
    }
    if (make_fleet) shared->fleet = make_fleet(context);
    if (shared->fleet != nullptr) shared->fleet->Start(MakeInbox(shared));
    // Background turns of a process that stopped (a crash, a drain that timed out) end failed.
    // Only on SQLite, whose file one process owns: on PostgreSQL other replicas' turns run in
    // the same table, and in fleet mode the fleet loop's sweep fails them (fleet_loop.cc).
    if (context.store != nullptr &&
        context.config.store.engine == config::StoreConfig::Engine::kSqlite) {
      context.store->Post(std::make_unique<FailUnendedJob>(), store::JobLane::kControl);
    }
    core::DoorSpec spec;
    spec.routes = AgentDoor::Routes();
    const FleetLoopOptions loop{context.config.agents.fleet_owner_ttl,
                                context.config.agents.fleet_sweep_interval};
    spec.make = [context, shared, loop](int worker, net::io_context& io, core::WorkerCore& core) {
      if (worker == 0 && shared->fleet != nullptr) {
        net::co_spawn(io, RunFleetLoop(shared, context.store, loop), net::detached);
      }
      // One retention loop per process, on the first worker (retention.h).
      const config::AgentsConfig& options = context.config.agents;
      if (worker == 0 && context.store != nullptr && options.retention.count() > 0) {
        net::co_spawn(io,
                      PurgeLoop(context.store, shared,
                                RetentionOptions{options.retention, options.purge_interval}),
                      net::detached);
      }
      return std::make_unique<AgentDoor>(context, *shared, worker, core);
    };
    spec.model_prefixes = {std::string(kModelPrefix)};
    return spec;
  };
  feature.admin_routes = [on, shared](const app::FeatureContext& context) {
    if (!on(context.config)) return std::vector<core::AdminRoute>();
    return AgentAdminRoutes(context.store, *shared, &context.routes);
  };
  return feature;
}

}  // namespace turnpike::agents
