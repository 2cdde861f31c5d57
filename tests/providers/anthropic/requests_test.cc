// Request translation edge cases beyond the golden transcripts: what is refused, and by name.
#include "providers/anthropic/requests.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace turnpike::providers::anthropic {
namespace {

namespace json = boost::json;

Result<std::string> FromChat(std::string_view chat, int64_t default_max_tokens = 100) {
  UpstreamRequestOptions options;
  options.upstream_model = "claude-x";
  options.default_max_tokens = default_max_tokens;
  return BuildMessagesRequest(json::parse(chat).as_object(), options);
}

struct Refusal {
  std::string name, body, param;
};

class ChatRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(ChatRefusalTest, NamesTheField) {
  Result<std::string> out = FromChat(GetParam().body);
  ASSERT_FALSE(out.ok()) << out.value();
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(out.error().param, GetParam().param);
  EXPECT_FALSE(out.error().message.empty());
}

const std::string kUser = R"("messages":[{"role":"user","content":"hi"}])";

INSTANTIATE_TEST_SUITE_P(
    Anthropic, ChatRefusalTest,
    ::testing::Values(
        Refusal{"n", R"({"model":"m",)" + kUser + R"(,"n":2})", "n"},
        Refusal{"temperature", R"({"model":"m",)" + kUser + R"(,"temperature":1.5})",
                "temperature"},
        Refusal{"json_mode",
                R"({"model":"m",)" + kUser + R"(,"response_format":{"type":"json_object"}})",
                "response_format"},
        Refusal{"penalty", R"({"model":"m",)" + kUser + R"(,"presence_penalty":0.5})",
                "presence_penalty"},
        Refusal{
            "late_system",
            R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"system","content":"b"}]})",
            "messages[1].role"},
        Refusal{"name", R"({"model":"m","messages":[{"role":"user","content":"a","name":"bob"}]})",
                "messages[0].name"},
        Refusal{
            "audio_part",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]})",
            "messages[0].content[0].type"},
        Refusal{
            "image_detail",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]}]})",
            "messages[0].content[0].image_url.detail"},
        Refusal{
            "bad_arguments",
            R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{oops"}}]}]})",
            "messages[0].tool_calls[0].function.arguments"},
        Refusal{"strict_tool",
                R"({"model":"m",)" + kUser +
                    R"(,"tools":[{"type":"function","function":{"name":"f","strict":true}}]})",
                "tools[0].function.strict"}),
    [](const auto& info) { return info.param.name; });

TEST(ChatToMessages, NoMaxTokensAndNoDefaultIsRefused) {
  Result<std::string> out = FromChat(R"({"model":"m",)" + kUser + "}", 0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().param, "max_completion_tokens");
}

TEST(ChatToMessages, NullFieldsCountAsAbsent) {
  Result<std::string> out =
      FromChat(R"({"model":"m",)" + kUser + R"(,"logprobs":null,"stop":null,"tools":null})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  const json::object body = json::parse(out.value()).as_object();
  EXPECT_FALSE(body.contains("stop_sequences"));
  EXPECT_FALSE(body.contains("tools"));
  EXPECT_EQ(body.at("max_tokens"), 100);
}

TEST(ChatToMessages, NamedToolChoiceAndConsecutiveToolResultsMerge) {
  Result<std::string> out = FromChat(R"({"model":"m","messages":[
      {"role":"assistant","tool_calls":[
        {"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},
        {"id":"b","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
      {"role":"tool","tool_call_id":"a","content":"1"},
      {"role":"tool","tool_call_id":"b","content":[{"type":"text","text":"2"}]}],
      "tools":[{"type":"function","function":{"name":"f"}}],
      "tool_choice":{"type":"function","function":{"name":"f"}}})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  const json::value body = json::parse(out.value());
  EXPECT_EQ(body.at("tool_choice"), json::parse(R"({"type":"tool","name":"f"})"));
  EXPECT_EQ(body.at("tools").at(0).at("input_schema"), json::parse(R"({"type":"object"})"));
  const json::array& messages = body.at("messages").as_array();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].at("content").as_array().size(), 2u);
  EXPECT_EQ(messages[1].at("role"), "user");
  EXPECT_EQ(messages[1].at("content").as_array().size(), 2u);
  EXPECT_EQ(messages[1].at("content").at(1).at("tool_use_id"), "b");
}

class MessagesRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(MessagesRefusalTest, NamesTheField) {
  Result<json::object> out = ParseMessagesRequest(GetParam().body);
  ASSERT_FALSE(out.ok()) << json::serialize(out.value());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(out.error().param, GetParam().param);
}

const std::string kAnthropicUser = R"("max_tokens":8,"messages":[{"role":"user","content":"hi"}])";

INSTANTIATE_TEST_SUITE_P(
    OpenAi, MessagesRefusalTest,
    ::testing::Values(
        Refusal{"top_k", R"({"model":"m",)" + kAnthropicUser + R"(,"top_k":3})", "top_k"},
        Refusal{"thinking_adaptive",
                R"({"model":"m",)" + kAnthropicUser + R"(,"thinking":{"type":"adaptive"}})",
                "thinking.type"},
        Refusal{"thinking_budget",
                R"({"model":"m",)" + kAnthropicUser +
                    R"(,"thinking":{"type":"enabled","budget_tokens":"many"}})",
                "thinking.budget_tokens"},
        Refusal{"no_max_tokens", R"({"model":"m","messages":[]})", "max_tokens"},
        Refusal{"server_tool",
                R"({"model":"m",)" + kAnthropicUser +
                    R"(,"tools":[{"type":"web_search_20250305","name":"web_search"}]})",
                "tools.0.type"},
        Refusal{
            "tool_error_flag",
            R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","is_error":true}]}]})",
            "messages.0.content.0.is_error"},
        Refusal{
            "document_block",
            R"({"model":"m","max_tokens":8,"messages":[{"role":"user","content":[{"type":"document","source":{}}]}]})",
            "messages.0.content.0.type"},
        Refusal{"too_many_stops",
                R"({"model":"m",)" + kAnthropicUser + R"(,"stop_sequences":["a","b","c","d","e"]})",
                "stop_sequences"},
        Refusal{"metadata_field",
                R"({"model":"m",)" + kAnthropicUser + R"(,"metadata":{"other":"x"}})",
                "metadata.other"}),
    [](const auto& info) { return info.param.name; });

TEST(MessagesToChat, CacheControlIsAcceptedAndNotForwarded) {
  Result<json::object> out = ParseMessagesRequest(
      R"({"model":"m","max_tokens":8,"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],
          "messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(json::value(out.value()), json::parse(R"({"model":"m","messages":[
      {"role":"system","content":"S"},
      {"role":"user","content":[{"type":"text","text":"hi"}]}],"max_completion_tokens":8})"));
}

TEST(MessagesToChat, InvalidJsonIsA400) {
  Result<json::object> out = ParseMessagesRequest("{\"model\":");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
}

}  // namespace
}  // namespace turnpike::providers::anthropic
