#include "model_call/route_table.h"

#include <gtest/gtest.h>

#include <map>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"

namespace turnpike::model_call {
namespace {

const providers::Registry& Dialects() {
  static const providers::Registry* const registry = [] {
    auto* r = new providers::Registry;
    r->Add(std::make_unique<providers::openai::OpenAiProvider>());
    r->Add(std::make_unique<providers::anthropic::AnthropicProvider>());
    r->Add(std::make_unique<providers::openai_responses::ResponsesProvider>());
    return r;
  }();
  return *registry;
}

config::Config TwoModels() {
  config::Config c;
  config::ModelRoute a;
  a.name = "alpha";
  config::Deployment d1;
  d1.base_url = "http://127.0.0.1:9001/v1";
  d1.weight = 3;
  d1.api_key = "sk-1";
  config::Deployment d2;
  d2.base_url = "https://example.test/openai/v1";
  d2.model = "alpha-upstream";
  d2.weight = 1;
  a.deployments = {d1, d2};
  config::ModelRoute b;
  b.name = "beta";
  config::Deployment d3;
  d3.base_url = "http://[::1]:8000";
  b.deployments = {d3};
  c.models = {a, b};
  return c;
}

TEST(RouteTableTest, BuildsTargetsWithPathsAndAuthorization) {
  auto table = RouteTable::Build(TwoModels(), Dialects());
  const ModelEntry* alpha = table->Find("alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha->index, 0u);
  EXPECT_EQ(alpha->total_weight, 4u);
  ASSERT_EQ(alpha->deployments.size(), 2u);
  EXPECT_EQ(alpha->deployments[0].chat_path, "/v1/chat/completions");
  EXPECT_EQ(alpha->deployments[0].stream_path, "/v1/chat/completions");
  EXPECT_EQ(alpha->deployments[0].authorization, "Bearer sk-1");
  EXPECT_EQ(alpha->deployments[0].upstream_model, "alpha");
  EXPECT_EQ(alpha->deployments[1].chat_path, "/openai/v1/chat/completions");
  EXPECT_TRUE(alpha->deployments[1].origin.tls);
  EXPECT_EQ(alpha->deployments[1].origin.port, 443);
  EXPECT_EQ(alpha->deployments[1].upstream_model, "alpha-upstream");
  EXPECT_EQ(alpha->deployments[1].authorization, "");
  const ModelEntry* beta = table->Find("beta");
  ASSERT_NE(beta, nullptr);
  EXPECT_EQ(beta->deployments[0].chat_path, "/chat/completions");
  EXPECT_EQ(table->Find("gamma"), nullptr);
  EXPECT_EQ(table->Find(""), nullptr);
}

TEST(RouteTableTest, AnthropicDeploymentsGetTheMessagesPathAndTheirHeaders) {
  config::Config c = TwoModels();
  config::Deployment claude;
  claude.provider = "anthropic";
  claude.base_url = "https://api.anthropic.com";
  claude.api_key = "sk-ant-1";
  claude.model = "claude-3-5-haiku-latest";  // in the built-in price table
  config::Deployment keyless = claude;
  keyless.base_url = "http://127.0.0.1:9002/proxy";
  keyless.api_key = "";
  keyless.model = "claude-private";  // priced by config only
  config::Deployment unpriced = keyless;
  unpriced.model = "claude-unknown";
  c.models[1].deployments = {claude, keyless, unpriced};
  c.prices.push_back(config::PriceConfig{"claude-private", 1, 2, 0, 1234});
  auto table = RouteTable::Build(c, Dialects());
  const ModelEntry* beta = table->Find("beta");
  ASSERT_NE(beta, nullptr);
  ASSERT_EQ(beta->deployments.size(), 3u);
  const DeploymentTarget& a = beta->deployments[0];
  EXPECT_EQ(a.provider, "anthropic");
  EXPECT_EQ(a.chat_path, "/v1/messages");
  EXPECT_EQ(a.stream_path, "/v1/messages");
  EXPECT_EQ(a.dialect, Dialects().Find("anthropic"));
  EXPECT_EQ(a.authorization, "");
  EXPECT_EQ(a.extra_headers, "x-api-key: sk-ant-1\r\nanthropic-version: 2023-06-01");
  EXPECT_EQ(a.default_max_tokens, 8192);
  const DeploymentTarget& b = beta->deployments[1];
  EXPECT_EQ(b.chat_path, "/proxy/v1/messages");
  EXPECT_EQ(b.extra_headers, "anthropic-version: 2023-06-01");
  EXPECT_EQ(b.default_max_tokens, 1234);
  EXPECT_EQ(beta->deployments[2].default_max_tokens, kDefaultMaxTokens);
  // OpenAI deployments keep Authorization and get no extra header.
  EXPECT_EQ(table->Find("alpha")->deployments[0].extra_headers, "");
}

TEST(RouteTableTest, RejectsAnUnparseableBaseUrlNamingTheKey) {
  config::Config c = TwoModels();
  c.models[1].deployments[0].base_url = "ftp://nope";
  try {
    RouteTable::Build(c, Dialects());
    FAIL() << "expected ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("models[1].deployments[0].base_url"), std::string::npos)
        << e.what();
  }
}

TEST(RouteTableTest, RejectsAProviderNoDialectSpeaksNamingTheKnownOnes) {
  config::Config c = TwoModels();
  c.models[0].deployments[1].provider = "nonesuch";
  try {
    RouteTable::Build(c, Dialects());
    FAIL() << "expected ConfigError";
  } catch (const config::ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "models[0].deployments[1].provider: unsupported provider \"nonesuch\" "
                 "(supported: openai, anthropic, openai_responses)");
  }
}

TEST(RouteTableTest, ApiResponsesPicksTheResponsesDialect) {
  config::Config c = TwoModels();
  c.models[0].deployments[0].api = "responses";
  auto table = RouteTable::Build(c, Dialects());
  const DeploymentTarget& responses = table->Find("alpha")->deployments[0];
  EXPECT_EQ(responses.provider, "openai_responses");
  ASSERT_NE(responses.dialect, nullptr);
  EXPECT_EQ(responses.dialect->name(), "openai_responses");
  EXPECT_EQ(responses.chat_path, responses.origin.base_path + "/responses");
  EXPECT_EQ(responses.stream_path, responses.chat_path);
  // The other deployment keeps chat completions.
  EXPECT_EQ(table->Find("alpha")->deployments[1].provider, "openai");
}

TEST(PlanAttemptsTest, FirstPickFollowsWeightsAndEveryDeploymentAppearsOnce) {
  auto table = RouteTable::Build(TwoModels(), Dialects());
  const ModelEntry& alpha = *table->Find("alpha");
  std::minstd_rand rng(7);
  std::map<int, int> first;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    AttemptPlan plan = PlanAttempts(alpha, 2, rng);
    ASSERT_EQ(plan.count, 2);
    ASSERT_NE(plan.order[0], plan.order[1]);
    ++first[plan.order[0]];
  }
  // Weights 3:1 -> 75% first picks for deployment 0 (within 2 points over 20k draws).
  EXPECT_NEAR(first[0] / double(kDraws), 0.75, 0.02);
}

TEST(PlanAttemptsTest, MoreAttemptsThanDeploymentsCycles) {
  auto table = RouteTable::Build(TwoModels(), Dialects());
  std::minstd_rand rng(1);
  AttemptPlan plan = PlanAttempts(*table->Find("beta"), 3, rng);
  ASSERT_EQ(plan.count, 3);
  EXPECT_EQ(plan.order[0], 0);
  EXPECT_EQ(plan.order[1], 0);
  EXPECT_EQ(plan.order[2], 0);
  AttemptPlan capped = PlanAttempts(*table->Find("alpha"), 99, rng);
  EXPECT_EQ(capped.count, kMaxAttempts);
}

TEST(BackoffTest, GrowsExponentiallyWithJitterAndCaps) {
  std::minstd_rand rng(3);
  using std::chrono::milliseconds;
  for (int i = 0; i < 200; ++i) {
    const auto first = Backoff(1, milliseconds(100), milliseconds(1000), rng);
    EXPECT_GE(first.count(), 50);
    EXPECT_LE(first.count(), 100);
    const auto third = Backoff(3, milliseconds(100), milliseconds(1000), rng);
    EXPECT_GE(third.count(), 200);
    EXPECT_LE(third.count(), 400);
    const auto capped = Backoff(9, milliseconds(100), milliseconds(1000), rng);
    EXPECT_GE(capped.count(), 500);
    EXPECT_LE(capped.count(), 1000);
  }
}

TEST(RetryAfterTest, ParsesDeltaSecondsOnly) {
  EXPECT_EQ(ParseRetryAfterSeconds("3"), 3);
  EXPECT_EQ(ParseRetryAfterSeconds(" 20"), 20);
  EXPECT_EQ(ParseRetryAfterSeconds("0"), 0);
  EXPECT_EQ(ParseRetryAfterSeconds(""), -1);
  EXPECT_EQ(ParseRetryAfterSeconds("-1"), -1);
  EXPECT_EQ(ParseRetryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
}

}  // namespace
}  // namespace turnpike::model_call
