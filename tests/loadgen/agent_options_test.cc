// `turnpike bench --agent`: its options as the command line gives them, and the requests an
// agent-turn run sends (agent_template.h).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "loadgen/agent_template.h"
#include "loadgen/bench_command.h"
#include "loadgen/driver.h"
#include "loadgen/request_template.h"

namespace turnpike::loadgen {
namespace {

// Parses `args` (without the program name) as the bench subcommand's options.
BenchOptions Parse(std::vector<std::string> args, std::string* body_file = nullptr) {
  CLI::App app("bench");
  BenchOptions options;
  std::string file;
  AddBenchOptions(app, options, file);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  if (body_file != nullptr) *body_file = file;
  return options;
}

TEST(AgentOptionsTest, AgentTurnsAndInput) {
  const BenchOptions o =
      Parse({"--url", "http://127.0.0.1:8080", "--agent", "agt_1", "--turns", "3", "--input",
             "Hi there", "-H", "Authorization: Bearer k", "--stream-every", "2"});
  EXPECT_EQ(o.agent, "agt_1");
  EXPECT_EQ(o.turns, 3);
  EXPECT_EQ(o.input, "Hi there");
  EXPECT_EQ(o.stream_every, 2);
  ASSERT_EQ(o.headers.size(), 1u);
  EXPECT_NO_THROW(ValidateOptions(o));
}

TEST(AgentOptionsTest, Defaults) {
  const BenchOptions o = Parse({"--url", "http://h:1/v1/chat/completions"});
  EXPECT_EQ(o.agent, "");
  EXPECT_EQ(o.turns, 10);
  EXPECT_EQ(o.input, "");
}

TEST(AgentOptionsTest, Refusals) {
  EXPECT_THROW(Parse({"--url", "http://h:1", "--agent", "a", "--turns", "0"}), CLI::ParseError);
  BenchOptions distinct = Parse({"--url", "http://h:1", "--agent", "a", "--distinct", "4"});
  EXPECT_THROW(ValidateOptions(distinct), std::invalid_argument);
  std::string body_file;
  const BenchOptions with_body =
      Parse({"--url", "http://h:1", "--agent", "a", "--body", "/nonexistent"}, &body_file);
  EXPECT_THROW(WithBody(with_body, body_file), CLI::ValidationError);
  EXPECT_EQ(WithBody(Parse({"--url", "http://h:1", "--agent", "a"}), "").body, kDefaultBody);
}

TEST(AgentTemplateTest, Paths) {
  EXPECT_EQ(AgentPathsOf("/").responses, "/v1/responses");
  EXPECT_EQ(AgentPathsOf("/").conversations, "/v1/conversations");
  EXPECT_EQ(AgentPathsOf("/gw/v1/responses").conversations, "/gw/v1/conversations");
  EXPECT_THROW(AgentPathsOf("/v1/chat/completions"), std::invalid_argument);
  EXPECT_THROW(AgentPathsOf("/v1/responses?x=1"), std::invalid_argument);
}

TEST(AgentTemplateTest, TurnBodyStreamsAndEscapes) {
  const std::string body = TurnBody("agt_1", "conv_9", "say \"hi\"");
  EXPECT_EQ(body, R"({"model":"agent:agt_1","conversation":"conv_9","input":"say \"hi\"",)"
                  R"("stream":false})");
  EXPECT_NE(StreamingBody(body).find(R"("stream":true)"), std::string::npos);
}

TEST(AgentTemplateTest, ConversationId) {
  EXPECT_EQ(ConversationIdOf(R"({"id":"conv_ab","object":"conversation"})"), "conv_ab");
  EXPECT_EQ(ConversationIdOf(R"({"object":"conversation", "id" : "conv_x"})"), "conv_x");
  EXPECT_EQ(ConversationIdOf(R"({"metadata":{},"ids":1,"id":"c"})"), "c");
  EXPECT_EQ(ConversationIdOf(R"({"error":{"message":"no"}})"), std::nullopt);
  EXPECT_EQ(ConversationIdOf(R"({"id":""})"), std::nullopt);
  EXPECT_EQ(ConversationIdOf(""), std::nullopt);
}

}  // namespace
}  // namespace turnpike::loadgen
