// Agents as the admin API takes them, and items as the Conversations API takes them
// (doors/agents/agent.h, items.h): what is accepted, what each refusal names.
#include "doors/agents/agent.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "doors/agents/items.h"

namespace turnpike::agents {
namespace {
namespace json = boost::json;

json::object Obj(std::string_view text) { return json::parse(text).as_object(); }

TEST(AgentTest, ACreateBodyBecomesAnAgentAndRoundTripsThroughItsStoredForm) {
  Result<Agent> agent = AgentFromCreate(Obj(R"({"tenant":"t1","model":"chat",
      "instructions":"Be brief.","max_output_tokens":64,"history":{"items":4,"tokens":900},
      "tools":[{"type":"function","name":"lookup","parameters":{"type":"object"}}],
      "metadata":{"team":"a"}})"));
  ASSERT_TRUE(agent.ok()) << agent.error().message;
  EXPECT_EQ(agent->tool_names, std::vector<std::string>{"lookup"});
  EXPECT_TRUE(agent->AllowsTool("lookup"));
  EXPECT_FALSE(agent->AllowsTool("other"));
  agent->id = "agt_1";
  agent->version = 3;
  Result<Agent> back = AgentFromStored(RenderAgent(*agent));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(RenderAgent(*back), RenderAgent(*agent));
  EXPECT_EQ(back->history_items, 4);
  EXPECT_EQ(back->history_tokens, 900);
  EXPECT_EQ(back->max_output_tokens, 64);
}

TEST(AgentTest, RefusalsNameTheirField) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"model":"chat"})", "tenant"},
      {R"({"tenant":"t"})", "model"},
      {R"({"tenant":"t","model":"chat","id":"has space"})", "id"},
      {R"({"tenant":"t","model":"chat","max_output_tokens":0})", "max_output_tokens"},
      {R"({"tenant":"t","model":"chat","history":{"items":0}})", "history.items"},
      {R"({"tenant":"t","model":"chat","history":{"depth":1}})", "history.depth"},
      {R"({"tenant":"t","model":"chat","metadata":{"k":1}})", "metadata.k"},
      {R"({"tenant":"t","model":"chat","tools":[{"type":"web_search"}]})", "tools[0].type"},
      {R"({"tenant":"t","model":"chat","colour":"red"})", "colour"},
  };
  for (const auto& [body, param] : cases) {
    Result<Agent> agent = AgentFromCreate(Obj(body));
    ASSERT_FALSE(agent.ok()) << body;
    EXPECT_EQ(agent.error().code, ErrorCode::kInvalidRequest) << body;
    EXPECT_EQ(agent.error().param, param) << body;
  }
  // Two tools of one name.
  Result<Agent> twice = AgentFromCreate(Obj(R"({"tenant":"t","model":"m","tools":[
      {"type":"function","name":"a"},{"type":"function","name":"a"}]})"));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().param, "tools");
}

TEST(AgentTest, AnUpdateKeepsWhatItDoesNotNameAndCannotMoveTheAgent) {
  Result<Agent> base = AgentFromCreate(Obj(R"({"tenant":"t","model":"m","instructions":"a"})"));
  ASSERT_TRUE(base.ok());
  Result<Agent> next = AgentFromUpdate(*base, Obj(R"({"instructions":"b"})"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->instructions, "b");
  EXPECT_EQ(next->model, "m");
  Result<Agent> moved = AgentFromUpdate(*base, Obj(R"({"tenant":"other"})"));
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().param, "tenant");
}

TEST(ItemsTest, InputBecomesItemsWithIdsInTheApiShape) {
  Result<std::vector<NewItem>> one = NormalizeItems(json::value("Hi"), "input");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  json::object item = json::parse(one->front().json).as_object();
  EXPECT_EQ(item.at("id").as_string(), one->front().id);
  EXPECT_TRUE(one->front().id.starts_with("msg_"));
  EXPECT_EQ(item.at("role").as_string(), "user");
  EXPECT_EQ(item.at("status").as_string(), "completed");
  EXPECT_EQ(item.at("content").at(0).at("type").as_string(), "input_text");

  Result<std::vector<NewItem>> many = NormalizeItems(json::parse(R"([
      {"role":"assistant","content":"Sure"},
      {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
      {"type":"function_call_output","call_id":"c1","output":"42"}])"),
                                                     "items");
  ASSERT_TRUE(many.ok()) << many.error().message;
  ASSERT_EQ(many->size(), 3u);
  EXPECT_EQ(json::parse((*many)[0].json).at("content").at(0).at("type").as_string(), "output_text");
  EXPECT_TRUE((*many)[1].id.starts_with("fc_"));
  EXPECT_TRUE((*many)[2].id.starts_with("fco_"));
}

TEST(ItemsTest, AMalformedItemIsRefusedInTheCallersNames) {
  Result<std::vector<NewItem>> bad = NormalizeItems(json::parse(R"([{"type":"bogus"}])"), "items");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.error().param.starts_with("items")) << bad.error().param;
  EXPECT_FALSE(NormalizeItems(json::value(3), "input").ok());
}

TEST(ItemsTest, MetadataIsBoundedLikeTheApis) {
  EXPECT_TRUE(CheckMetadata(json::parse(R"({"a":"b"})"), "metadata").ok());
  EXPECT_TRUE(CheckMetadata(json::value(nullptr), "metadata").ok());
  json::object many;
  for (int i = 0; i < 17; ++i) many[std::to_string(i)] = "v";
  EXPECT_FALSE(CheckMetadata(many, "metadata").ok());
  EXPECT_FALSE(CheckMetadata(json::parse(R"({"a":"x"})").as_object().at("a"), "m").ok());
  EXPECT_FALSE(CheckMetadata(json::object{{"a", std::string(513, 'x')}}, "m").ok());
}

}  // namespace
}  // namespace turnpike::agents
