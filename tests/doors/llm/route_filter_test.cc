#include "doors/llm/route_filter.h"

#include <gtest/gtest.h>

#include "doors/llm/llm_context.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::doors::llm {
namespace {

TEST(RouteFilterTest, UnknownModelIsA404OnParamModel) {
  providers::Registry dialects;
  dialects.Add(std::make_unique<providers::openai::OpenAiProvider>());
  config::Config c;
  config::ModelRoute alpha;
  alpha.name = "alpha";
  config::Deployment deployment;
  deployment.base_url = "http://127.0.0.1:9001/v1";
  alpha.deployments = {deployment};
  c.models = {alpha};
  auto table = RouteTable::Build(c, dialects);
  config::RoutingConfig routing;
  RouteFilter filter(routing, 1);
  LlmContext ctx;
  ctx.model = "nope";
  ctx.model_entry = table->Find(ctx.model);
  EXPECT_EQ(filter.OnRequest(ctx), core::FilterStatus::kRespond);
  ASSERT_TRUE(ctx.refusal.has_value());
  EXPECT_EQ(ctx.refusal->code, ErrorCode::kNotFound);
  EXPECT_EQ(ctx.refusal->param, "model");
  EXPECT_EQ(ctx.model_slot, core::kUnknownModel);
  ctx.model = "alpha";
  ctx.model_entry = table->Find(ctx.model);
  EXPECT_EQ(filter.OnRequest(ctx), core::FilterStatus::kContinue);
  EXPECT_EQ(ctx.model_slot, table->Find("alpha")->index);
  EXPECT_EQ(ctx.attempts.count, routing.max_attempts);
}

}  // namespace
}  // namespace turnpike::doors::llm
