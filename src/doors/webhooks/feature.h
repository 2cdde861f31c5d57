// The webhooks feature (app/feature.h): the outbox's store role, its admin resources
// (admin_routes.cc), the delivery loop (delivery.h), the budget alerts' sink and the
// subscription to agent turns (`response.completed`, `response.incomplete`, `response.failed`,
// `response.cancelled`, to the agent's tenant's webhooks). On when governance is and
// webhooks.enabled.
//
// Ownership: the Feature's functions and the turn subscriber share one WebhooksShared; its
// outbox is made at start-up (the feature's door step, which returns no door) once the store
// thread exists, and stopped by the feature's stop step before the store's jobs close.
// Threads: start-up and stop on the main thread; the turn subscriber on any worker (it copies
// the event into a store job and returns: outbox.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/feature.h"
#include "core/admin_route.h"
#include "doors/agents/turn_events.h"

namespace turnpike::webhooks {

class Outbox;

struct WebhooksShared {
  std::shared_ptr<Outbox> outbox;  // null until start-up, or when the feature is off
};

app::Feature WebhooksFeature(std::shared_ptr<WebhooksShared> shared);

// The agents' turn-event subscriber that queues a turn's end for its tenant's webhooks.
agents::TurnSubscriber TurnWebhooks(std::shared_ptr<WebhooksShared> shared);

// A turn's end as its event's `data`: {"response_id", "tenant", "agent_id", "agent_version",
// "conversation_id" (when it had one), "status", "usage": {"input_tokens", "output_tokens"},
// "cost_usd" (six decimals), "error": {"message"} (when it has one)}.
std::string TurnEventData(const agents::TurnEvent& event);
// `micros` as US dollars with six decimals, as TurnEventData writes cost_usd ("0.001500").
void AppendUsd(std::string& out, int64_t micros);

// The admin resources (admin_routes.cc).
std::vector<core::AdminRoute> WebhookAdminRoutes(Outbox& outbox);

}  // namespace turnpike::webhooks
