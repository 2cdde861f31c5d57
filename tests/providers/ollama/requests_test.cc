// Request translation edge cases beyond the golden transcripts: what is refused, and by name;
// `stream` always explicit; how text parts and tool results are carried.
#include "providers/ollama/requests.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace turnpike::providers::ollama {
namespace {

namespace json = boost::json;

Result<std::string> FromChat(std::string_view chat) {
  UpstreamRequestOptions options;
  options.upstream_model = "llama3.2";
  options.default_max_tokens = 100;
  return BuildChatRequest(json::parse(chat).as_object(), options);
}

json::object Built(std::string_view chat) {
  Result<std::string> out = FromChat(chat);
  EXPECT_TRUE(out.ok()) << out.error().param << ": " << out.error().message;
  return out.ok() ? json::parse(out.value()).as_object() : json::object{};
}

struct Refusal {
  std::string name, body, param;
};

class OllamaRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(OllamaRefusalTest, NamesTheField) {
  Result<std::string> out = FromChat(GetParam().body);
  ASSERT_FALSE(out.ok()) << out.value();
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(out.error().param, GetParam().param);
  EXPECT_FALSE(out.error().message.empty());
}

const std::string kUser = R"("messages":[{"role":"user","content":"hi"}])";
const std::string kTool = R"("tools":[{"type":"function","function":{"name":"f"}}])";

INSTANTIATE_TEST_SUITE_P(
    Ollama, OllamaRefusalTest,
    ::testing::Values(
        Refusal{"n", R"({"model":"m",)" + kUser + R"(,"n":2})", "n"},
        Refusal{"user", R"({"model":"m",)" + kUser + R"(,"user":"u1"})", "user"},
        Refusal{"logprobs", R"({"model":"m",)" + kUser + R"(,"logprobs":true})", "logprobs"},
        Refusal{"tool_choice_named",
                R"({"model":"m",)" + kUser + "," + kTool +
                    R"(,"tool_choice":{"type":"function","function":{"name":"f"}}})",
                "tool_choice"},
        Refusal{"parallel_false",
                R"({"model":"m",)" + kUser + "," + kTool + R"(,"parallel_tool_calls":false})",
                "parallel_tool_calls"},
        Refusal{"strict_tool",
                R"({"model":"m",)" + kUser +
                    R"(,"tools":[{"type":"function","function":{"name":"f","strict":true}}]})",
                "tools[0].function.strict"},
        Refusal{"max_tokens_zero", R"({"model":"m",)" + kUser + R"(,"max_tokens":0})",
                "max_tokens"},
        Refusal{"seed_float", R"({"model":"m",)" + kUser + R"(,"seed":1.5})", "seed"},
        Refusal{"name", R"({"model":"m","messages":[{"role":"user","content":"a","name":"bob"}]})",
                "messages[0].name"},
        Refusal{"refusal",
                R"({"model":"m","messages":[{"role":"assistant","content":"a","refusal":"no"}]})",
                "messages[0].refusal"},
        Refusal{
            "audio_part",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]})",
            "messages[0].content[0].type"},
        Refusal{
            "image_in_system",
            R"({"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}]})",
            "messages[0].content[0].type"},
        Refusal{
            "image_not_base64",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,AA"}}]}]})",
            "messages[0].content[0].image_url.url"},
        Refusal{
            "image_detail",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA","detail":"low"}}]}]})",
            "messages[0].content[0].image_url.detail"},
        Refusal{"tool_result_without_call",
                R"({"model":"m","messages":[{"role":"tool","tool_call_id":"x","content":"1"}]})",
                "messages[0].tool_call_id"},
        Refusal{
            "arguments_array",
            R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})",
            "messages[0].tool_calls[0].function.arguments"},
        Refusal{"role", R"({"model":"m","messages":[{"role":"function","content":"a"}]})",
                "messages[0].role"},
        Refusal{"response_format",
                R"({"model":"m",)" + kUser + R"(,"response_format":{"type":"grammar"}})",
                "response_format.type"},
        Refusal{"schema_missing",
                R"({"model":"m",)" + kUser +
                    R"(,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}})",
                "response_format.json_schema.schema"},
        Refusal{"stop_number", R"({"model":"m",)" + kUser + R"(,"stop":[1]})", "stop"}),
    [](const ::testing::TestParamInfo<Refusal>& info) { return info.param.name; });

TEST(OllamaRequest, StreamIsAlwaysExplicit) {
  EXPECT_EQ(Built(R"({"model":"m",)" + kUser + "}").at("stream"), false);
  EXPECT_EQ(Built(R"({"model":"m",)" + kUser + R"(,"stream":false})").at("stream"), false);
  EXPECT_EQ(Built(R"({"model":"m",)" + kUser + R"(,"stream":true})").at("stream"), true);
}

TEST(OllamaRequest, ModelIsTheDeploymentsAndNoDefaultLimitIsSent) {
  const json::object out = Built(R"({"model":"client-name",)" + kUser + "}");
  EXPECT_EQ(out.at("model"), "llama3.2");
  EXPECT_FALSE(out.contains("options")) << json::serialize(out);
}

TEST(OllamaRequest, MaxCompletionTokensWinsOverMaxTokens) {
  const json::object out =
      Built(R"({"model":"m",)" + kUser + R"(,"max_completion_tokens":7,"max_tokens":9})");
  EXPECT_EQ(out.at("options").at("num_predict"), 7);
}

TEST(OllamaRequest, ToolChoiceNoneSendsNoTools) {
  const json::object none =
      Built(R"({"model":"m",)" + kUser + "," + kTool + R"(,"tool_choice":"none"})");
  EXPECT_FALSE(none.contains("tools"));
  const json::object automatic =
      Built(R"({"model":"m",)" + kUser + "," + kTool + R"(,"tool_choice":"auto"})");
  ASSERT_TRUE(automatic.contains("tools"));
  EXPECT_EQ(automatic.at("tools").at(0).at("function").at("name"), "f");
}

TEST(OllamaRequest, ToolResultTakesTheNameOfTheNearestEarlierCallWithItsId) {
  const json::object out = Built(R"({"model":"m","messages":[
    {"role":"assistant","tool_calls":[{"id":"call_0","type":"function","function":{"name":"first","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"call_0","content":"1"},
    {"role":"assistant","tool_calls":[{"id":"call_0","type":"function","function":{"name":"second","arguments":"{\"a\":1}"}}]},
    {"role":"tool","tool_call_id":"call_0","content":[{"type":"text","text":"2"},{"type":"text","text":"3"}]}]})");
  const json::array& messages = out.at("messages").as_array();
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[1].at("tool_name"), "first");
  EXPECT_EQ(messages[3].at("tool_name"), "second");
  EXPECT_EQ(messages[3].at("content"), "2\n3");
  EXPECT_EQ(messages[2].at("tool_calls").at(0).at("function").at("arguments"),
            (json::object{{"a", 1}}));
  EXPECT_EQ(messages[0].at("content"), "");
}

TEST(OllamaRequest, NullFieldsAreIgnored) {
  const json::object out =
      Built(R"({"model":"m",)" + kUser + R"(,"user":null,"logprobs":null,"temperature":null})");
  EXPECT_FALSE(out.contains("options"));
}

}  // namespace
}  // namespace turnpike::providers::ollama
