#include "doors/webhooks/feature.h"

#include "common/json_escape.h"
#include "doors/webhooks/outbox.h"
#include "doors/webhooks/webhook_store.h"
#include "observability/metrics.h"

namespace turnpike::webhooks {

namespace {

constexpr double kMicrosPerUsd = 1e6;

bool On(const config::Config& config) {
  return config.governance.enabled && config.webhooks.enabled;
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out += ",\"";
  out.append(name);
  out += "\":";
  AppendJsonQuoted(out, value);
}

// The event's `data`: the turn as the outbox announces it.
std::string TurnData(const agents::TurnEvent& e) {
  std::string data = "{\"response_id\":";
  AppendJsonQuoted(data, e.response_id);
  AppendField(data, "tenant", e.tenant);
  AppendField(data, "agent_id", e.agent_id);
  data += ",\"agent_version\":" + std::to_string(e.agent_version);
  if (!e.conversation_id.empty()) AppendField(data, "conversation_id", e.conversation_id);
  AppendField(data, "status", agents::TurnStatusName(e.status));
  data += ",\"usage\":{\"input_tokens\":" + std::to_string(e.usage.input_tokens) +
          ",\"output_tokens\":" + std::to_string(e.usage.output_tokens) + "}";
  data += ",\"cost_usd\":" + std::to_string(static_cast<double>(e.cost_micros) / kMicrosPerUsd);
  if (e.error != nullptr) {
    data += ",\"error\":{\"message\":";
    AppendJsonQuoted(data, e.error->message);
    data += "}";
  }
  data += "}";
  return data;
}

}  // namespace

app::Feature WebhooksFeature(std::shared_ptr<WebhooksShared> shared) {
  app::Feature feature;
  feature.role = [](const config::Config& config) -> std::optional<store::RoleSpec> {
    if (!On(config)) return std::nullopt;
    return WebhooksRole();
  };
  // No door: the start-up step that makes the outbox and starts its delivery loop.
  feature.door = [shared](const app::FeatureContext& context) -> std::optional<core::DoorSpec> {
    if (!On(context.config) || context.store == nullptr) return std::nullopt;
    shared->outbox = std::make_shared<Outbox>(*context.store, context.config.webhooks);
    Outbox* outbox = shared->outbox.get();
    if (context.budget_alerts != nullptr) {
      context.budget_alerts->SetSink(
          [outbox](const governance::BudgetCrossing& crossing) { outbox->OnCrossing(crossing); });
    }
    if (context.metrics != nullptr) {
      context.metrics->push_back(
          [outbox](observability::PrometheusWriter& w) { outbox->RenderMetrics(w); });
    }
    outbox->Start();
    return std::nullopt;
  };
  feature.admin_routes = [shared](const app::FeatureContext&) -> std::vector<core::AdminRoute> {
    if (shared->outbox == nullptr) return {};
    return WebhookAdminRoutes(*shared->outbox);
  };
  feature.stop = [shared] {
    if (shared->outbox != nullptr) shared->outbox->Stop();
  };
  return feature;
}

agents::TurnSubscriber TurnWebhooks(std::shared_ptr<WebhooksShared> shared) {
  return [shared](const agents::TurnEvent& event) {
    Outbox* outbox = shared->outbox.get();
    if (outbox == nullptr) return;
    std::string type = "response.";
    type.append(agents::TurnStatusName(event.status));
    outbox->Emit(event.tenant, type, TurnData(event));
  };
}

}  // namespace turnpike::webhooks
