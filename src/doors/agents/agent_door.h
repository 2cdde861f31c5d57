// The agent door: OpenAI's Responses and Conversations APIs over agents a tenant defines.
//
//   POST /v1/responses {"model": "agent:<id>[@<version>]", ...}   a turn (turn.cc, turn_run.cc),
//        handed over by the LLM door (the "agent:" prefix, core/handoff.h); with
//        "background": true it answers at once and runs detached from the client (with
//        "stream": true too, the answer is the turn's stream, followed live from its log: a
//        client that leaves it does not cancel the turn, and may resume it)
//   GET /v1/responses/{id}?stream=true[&starting_after=N]          a background turn's stream
//        from event N + 1: live on the replica running it, else from the store (resume.cc)
//   POST /v1/conversations; GET|POST|DELETE /v1/conversations/{id};
//   GET|POST /v1/conversations/{id}/items; GET|DELETE /v1/conversations/{id}/items/{item}
//   GET|DELETE /v1/responses/{id}; GET /v1/responses/{id}/input_items;
//   POST /v1/responses/{id}/cancel                                  (conversations.cc)
//
// Every route takes a virtual key; a conversation, response or agent of another tenant is a 404,
// the same as one that does not exist. Errors are OpenAI's envelope with its statuses.
// The conversation and stored-response routes authenticate only (WorkerCore::Authenticate: no
// budget, no rate charge, not in the call log); a turn runs the governance filter like any model
// call and is logged with its agent, version and response id.
//
// Ownership and threads: one door per worker (core/door.h), on its worker's thread; the shared
// state (state.h) and the FeatureContext outlive it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "app/feature.h"
#include "core/door.h"
#include "core/filter.h"
#include "core/worker_core.h"
#include "doors/agents/agent_store.h"
#include "doors/agents/state.h"
#include "model_call/model_call.h"

namespace turnpike::agents {

inline constexpr std::string_view kModelPrefix = "agent:";

enum Route : int {
  kConversations,
  kConversation,
  kItems,
  kItem,
  kResponse,
  kInputItems,
  kCancel,
};

class AgentDoor final : public core::Door {
 public:
  AgentDoor(const app::FeatureContext& context, AgentsShared& shared, int worker,
            core::WorkerCore& core);

  static std::vector<core::RouteSpec> Routes();

  boost::asio::awaitable<void> Handle(http::Exchange& exchange, core::RouteMatch match) override;
  core::ErrorReply RenderError(int route, const Error& error) const override;
  boost::asio::awaitable<void> Receive(http::Exchange& exchange, core::RouteMatch match,
                                       core::HandedRequest request) override;

 private:
  struct Turn;  // turn.h

  // The answer's start (turn_run.cc): the encoder, the sink (to `exchange`; for a background
  // turn, nullptr, to its log), the guard; the turn registered for cancel (and resume); a
  // stream's first events. False: the client has gone.
  boost::asio::awaitable<bool> OpenTurn(Turn& turn, http::Exchange* exchange);
  // The call and the end (turn_run.cc): stores the turn, answers a foreground turn's client on
  // `exchange`, and accounts the request (a background turn's from turn.answered).
  boost::asio::awaitable<void> RunTurn(std::unique_ptr<Turn> turn, http::Exchange* exchange);
  // The turn's end to the subscribers of shared_.events (turn_events.h), once it is accounted.
  void PublishEnd(const Turn& turn) const;
  // A background turn's quick answer and its detached run (turn_run.cc).
  boost::asio::awaitable<void> StartBackground(std::unique_ptr<Turn> turn,
                                               http::Exchange& exchange);
  // GET /v1/responses/{id}?stream=true (resume.cc): answers the stream, or an error.
  boost::asio::awaitable<void> ResumeStream(http::Exchange& exchange, core::RequestContext& ctx,
                                            std::string id, std::string tenant);
  // A background turn's live `log` on `exchange` (its stream started), from event `after` + 1
  // through the turn's end (resume.cc). False: the client left.
  static boost::asio::awaitable<bool> FollowLog(http::Exchange& exchange,
                                                std::shared_ptr<EventLog> log, int64_t after);

  // Conversations and stored responses (conversations.cc): the answer or an error.
  boost::asio::awaitable<Result<core::AdminAnswer>> Serve(http::Exchange& exchange,
                                                          const core::RouteMatch& match,
                                                          const std::string& tenant);
  boost::asio::awaitable<Result<core::AdminAnswer>> CancelTurn(const std::string& id,
                                                               const std::string& tenant);

  // The agent `id` (at `version`; 0: the latest) of `tenant`, from this worker's cache or the
  // store; nullptr when it does not exist or is another tenant's.
  boost::asio::awaitable<Result<std::shared_ptr<const Agent>>> FindAgent(std::string id,
                                                                         int64_t version,
                                                                         std::string tenant);
  // The conversation's memory (the last `window` items at least), from the shared table or the
  // store; nullptr when the conversation does not exist or is another tenant's.
  boost::asio::awaitable<Result<std::shared_ptr<const Memory>>> LoadMemory(std::string id,
                                                                           int64_t window,
                                                                           std::string tenant);

  // Fleet mode (fleet.cc): the conversation's memory with its slot here and its lock in the
  // fleet (one round trip; a store read when the cached memory is stale): kConflict when busy,
  // nullptr when not the tenant's. The end: the lock released and, when `wrote`, the version
  // bumped; `written` (the memory after the turn) cached at it; the slot released.
  boost::asio::awaitable<Result<std::shared_ptr<const Memory>>> ClaimMemory(
      std::string id, int64_t window, std::string tenant, std::string response_id);
  boost::asio::awaitable<void> EndClaim(std::string id, std::string response_id, bool wrote,
                                        std::shared_ptr<Memory> written);
  // A conversation written outside a turn: its fleet version bumped (nothing in embedded mode).
  boost::asio::awaitable<void> BumpConversation(std::string id);
  // A cancel for a turn running on another replica: its stopped response once its owner has
  // stored it (within `wait`), or nothing (no owner, not the tenant's, no answer).
  boost::asio::awaitable<std::optional<std::string>> CancelElsewhere(std::string id,
                                                                     std::string tenant,
                                                                     std::chrono::seconds wait);

  boost::asio::awaitable<void> Refuse(http::Exchange& exchange, core::RequestContext& ctx,
                                      const Error& error, bool chain_ran);

  const app::FeatureContext context_;
  AgentsShared& shared_;
  core::WorkerCore& core_;
  core::FilterChain chain_;
  const upstream::CallOptions call_options_;
  std::minstd_rand rng_;
  const model_call::CallDeps call_deps_;
};

// A turn refused because another holds its conversation (409 conversation_busy).
Error BusyError(const std::string& conversation);

// What app/ hands the feature to reach the other replicas: the fleet of a gateway in fleet mode,
// nullptr otherwise (doors/agents/redis/redis_fleet.h MakeRedisFleet).
using FleetFactory = std::function<std::unique_ptr<Fleet>(const app::FeatureContext&)>;

// The feature as app/ registers it: the store role, the door (model prefix "agent:") and the
// agents' admin routes (admin_routes.cc), its /metrics series, the agents' spend restored at
// start-up (budgets.h) and the retention loop (retention.h). On when governance is and
// agents.enabled. With a
// fleet, worker 0 also runs the fleet loop (fleet_loop.cc).
// `subscribers`: other features' turn-event subscribers (turn_events.h), registered at once.
app::Feature AgentsFeature(FleetFactory make_fleet = {},
                           std::vector<TurnSubscriber> subscribers = {});

struct FleetLoopOptions {
  std::chrono::milliseconds owner_ttl{15'000};
  std::chrono::milliseconds sweep_interval{10'000};
};
// Renews the running turns' fleet keys and sweeps turns whose replica is gone (fleet_loop.cc),
// until its executor stops.
boost::asio::awaitable<void> RunFleetLoop(std::shared_ptr<AgentsShared> shared,
                                          store::StoreThread* store, FleetLoopOptions options);

// The admin resources /admin/v1/agents[/{id}] (admin_routes.cc).
std::vector<core::AdminRoute> AgentAdminRoutes(store::StoreThread* store, AgentsShared& shared,
                                               const model_call::RouteTable* routes);

// A job on the store thread with the session's AgentStore (kInternal when the role is missing).
template <typename T, typename Fn>
boost::asio::awaitable<Result<T>> WithAgentStore(store::StoreThread* store, Fn fn,
                                                 store::JobLane lane) {
  if (store == nullptr) co_return Error{ErrorCode::kUnavailable, "the store is not open", ""};
  auto job = [fn = std::move(fn)](store::Engine& engine) -> Result<T> {
    AgentStore* agents = engine.role<AgentStore>();
    if (agents == nullptr) return Error{ErrorCode::kInternal, "the agents role is missing", ""};
    return fn(*agents);
  };
  co_return co_await store->Call<T>(std::move(job), lane);
}

}  // namespace turnpike::agents
