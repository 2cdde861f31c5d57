#include "doors/webhooks/feature.h"

#include <charconv>
#include <string>

#include "common/json_escape.h"
#include "doors/webhooks/outbox.h"
#include "doors/webhooks/webhook_store.h"
#include "observability/metrics.h"

namespace turnpike::webhooks {

namespace {

bool On(const config::Config& config) {
  return config.governance.enabled && config.webhooks.enabled;
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(",\"").append(name).append("\":");
  AppendJsonQuoted(out, value);
}

void AppendInteger(std::string& out, int64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end);
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

void AppendUsd(std::string& out, int64_t micros) {
  // Written from the integer: the same text as std::to_string(micros / 1e6) ("%f"), which is
  // exact while the quotient's double is within half a millionth of it (|micros| < 10^12).
  constexpr int64_t kMicrosPerUsd = 1'000'000;
  constexpr int64_t kExactBelow = 1'000'000'000'000;
  if (micros <= -kExactBelow || micros >= kExactBelow) {
    out.append(std::to_string(static_cast<double>(micros) / static_cast<double>(kMicrosPerUsd)));
    return;
  }
  if (micros < 0) out.push_back('-');
  const int64_t magnitude = micros < 0 ? -micros : micros;
  AppendInteger(out, magnitude / kMicrosPerUsd);
  char fraction[7] = {'.', '0', '0', '0', '0', '0', '0'};
  int64_t rest = magnitude % kMicrosPerUsd;
  for (int i = 6; i >= 1; --i, rest /= 10) fraction[i] = static_cast<char>('0' + rest % 10);
  out.append(fraction, sizeof(fraction));
}

std::string TurnEventData(const agents::TurnEvent& e) {
  std::string data;
  constexpr size_t kUsualSize = 256;
  data.reserve(kUsualSize);
  data.append("{\"response_id\":");
  AppendJsonQuoted(data, e.response_id);
  AppendField(data, "tenant", e.tenant);
  AppendField(data, "agent_id", e.agent_id);
  data.append(",\"agent_version\":");
  AppendInteger(data, e.agent_version);
  if (!e.conversation_id.empty()) AppendField(data, "conversation_id", e.conversation_id);
  AppendField(data, "status", agents::TurnStatusName(e.status));
  data.append(",\"usage\":{\"input_tokens\":");
  AppendInteger(data, e.usage.input_tokens);
  data.append(",\"output_tokens\":");
  AppendInteger(data, e.usage.output_tokens);
  data.append("},\"cost_usd\":");
  AppendUsd(data, e.cost_micros);
  if (e.error != nullptr) {
    data.append(",\"error\":{\"message\":");
    AppendJsonQuoted(data, e.error->message);
    data.push_back('}');
  }
  data.push_back('}');
  return data;
}

agents::TurnSubscriber TurnWebhooks(std::shared_ptr<WebhooksShared> shared) {
  return [shared](const agents::TurnEvent& event) {
    Outbox* outbox = shared->outbox.get();
    if (outbox == nullptr) return;
    std::string type = "response.";
    type.append(agents::TurnStatusName(event.status));
    outbox->Emit(event.tenant, type, TurnEventData(event));
  };
}

}  // namespace turnpike::webhooks
