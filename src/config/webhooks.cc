// The `webhooks` section (config.h shows its YAML shape): the outbox's delivery schedule and the
// budget alerts' thresholds.
#include <algorithm>

#include "config/config.h"
#include "config/yaml_map.h"

namespace turnpike::config {

namespace {

constexpr int64_t kMaxThresholdPercent = 1000;
constexpr int64_t kMaxBatch = 1000;
constexpr int64_t kMaxAttempts = 1000;

std::vector<int> ParseThresholds(const YamlMap& m, std::vector<int> fallback) {
  const YAML::Node list = m.Child("budget_alerts");
  if (!list.IsDefined() || list.IsNull()) return fallback;
  if (!list.IsSequence()) FailAt(m.KeyPath("budget_alerts"), "expected a list of percents", list);
  std::vector<int> percents;
  for (const YAML::Node& item : list) {
    int64_t value = 0;
    try {
      value = item.as<int64_t>();
    } catch (const YAML::Exception&) {
      FailAt(m.KeyPath("budget_alerts"), "expected whole percents (e.g. [50, 80, 100])", item);
    }
    if (value < 1 || value > kMaxThresholdPercent) {
      FailAt(m.KeyPath("budget_alerts"), "each percent must be from 1 to 1000", item);
    }
    percents.push_back(static_cast<int>(value));
  }
  std::sort(percents.begin(), percents.end());
  percents.erase(std::unique(percents.begin(), percents.end()), percents.end());
  return percents;
}

}  // namespace

WebhooksConfig ParseWebhooks(const YamlMap& root) {
  WebhooksConfig c;
  const YAML::Node node = root.Child("webhooks");
  if (!node.IsDefined() || node.IsNull()) return c;
  YamlMap m(node, root.KeyPath("webhooks"),
            {"enabled", "budget_alerts", "poll_interval", "timeout", "retry_base", "retry_max",
             "max_attempts", "max_age", "batch"});
  c.enabled = m.Bool("enabled", c.enabled);
  c.budget_alerts = ParseThresholds(m, c.budget_alerts);
  c.poll_interval = m.Duration("poll_interval", c.poll_interval);
  if (c.poll_interval < Millis(10)) FailAt(m.KeyPath("poll_interval"), "must be at least 10ms");
  c.timeout = m.Duration("timeout", c.timeout);
  if (c.timeout < Millis(100)) FailAt(m.KeyPath("timeout"), "must be at least 100ms");
  c.retry_base = m.Duration("retry_base", c.retry_base);
  if (c.retry_base < Millis(10)) FailAt(m.KeyPath("retry_base"), "must be at least 10ms");
  c.retry_max = m.Duration("retry_max", c.retry_max);
  if (c.retry_max < c.retry_base) FailAt(m.KeyPath("retry_max"), "must be at least retry_base");
  c.max_attempts = static_cast<int>(m.Int("max_attempts", c.max_attempts, 1, kMaxAttempts));
  c.max_age = m.Duration("max_age", c.max_age);
  if (c.max_age < Millis(1'000)) FailAt(m.KeyPath("max_age"), "must be at least 1s");
  c.batch = m.Int("batch", c.batch, 1, kMaxBatch);
  return c;
}

}  // namespace turnpike::config
