// The `webhooks` section (config/webhooks.cc): defaults, every key read, and refusals naming
// the key.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace turnpike::config {
namespace {

constexpr const char* kModels = R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)";

std::string With(const std::string& yaml) { return yaml + kModels; }

TEST(WebhooksConfigTest, Defaults) {
  const WebhooksConfig c = ParseConfig(With("")).webhooks;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.budget_alerts, (std::vector<int>{50, 80, 100}));
  EXPECT_EQ(c.poll_interval, Millis(30'000));
  EXPECT_EQ(c.max_attempts, 12);
}

TEST(WebhooksConfigTest, EveryKey) {
  const WebhooksConfig c =
      ParseConfig(With("webhooks: {enabled: false, budget_alerts: [100, 25, 25, 90], "
                       "poll_interval: 50ms, timeout: 2s, retry_base: 100ms, retry_max: 1s, "
                       "max_attempts: 3, max_age: 1h, batch: 4}"))
          .webhooks;
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.budget_alerts, (std::vector<int>{25, 90, 100}));  // sorted, once each
  EXPECT_EQ(c.poll_interval, Millis(50));
  EXPECT_EQ(c.timeout, Millis(2'000));
  EXPECT_EQ(c.retry_base, Millis(100));
  EXPECT_EQ(c.retry_max, Millis(1'000));
  EXPECT_EQ(c.max_attempts, 3);
  EXPECT_EQ(c.max_age, Millis(3'600'000));
  EXPECT_EQ(c.batch, 4);
  EXPECT_TRUE(ParseConfig(With("webhooks: {budget_alerts: []}")).webhooks.budget_alerts.empty());
}

TEST(WebhooksConfigTest, RefusalsNameTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"webhooks: {budget_alerts: [0]}", "webhooks.budget_alerts"},
      {"webhooks: {budget_alerts: 50}", "webhooks.budget_alerts"},
      {"webhooks: {budget_alerts: [half]}", "webhooks.budget_alerts"},
      {"webhooks: {retry_base: 1s, retry_max: 10ms}", "webhooks.retry_max"},
      {"webhooks: {max_attempts: 0}", "webhooks.max_attempts"},
      {"webhooks: {colour: red}", "webhooks.colour"},
  };
  for (const auto& [yaml, key] : cases) {
    try {
      ParseConfig(With(yaml));
      ADD_FAILURE() << "accepted: " << yaml;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace turnpike::config
