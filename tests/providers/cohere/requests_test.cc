// Request translation edge cases beyond the golden transcripts: what is refused, and by name;
// what maps where.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/cohere/cohere_provider.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

const CohereProvider kCohere;

Result<std::string> FromChat(std::string_view chat) {
  UpstreamRequestOptions options;
  options.upstream_model = "command-x";
  options.default_max_tokens = 4096;  // for dialects that require a limit; Cohere does not
  return kCohere.BuildRequest(json::parse(chat).as_object(), options);
}

json::object Built(std::string_view chat) {
  Result<std::string> out = FromChat(chat);
  EXPECT_TRUE(out.ok()) << out.error().param << ": " << out.error().message;
  return out.ok() ? json::parse(out.value()).as_object() : json::object{};
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
const std::string kTool =
    R"({"type":"function","function":{"name":"f","parameters":{"type":"object"}}})";

INSTANTIATE_TEST_SUITE_P(
    Cohere, ChatRefusalTest,
    ::testing::Values(
        Refusal{"n", R"({"model":"m",)" + kUser + R"(,"n":2})", "n"},
        Refusal{"logprobs", R"({"model":"m",)" + kUser + R"(,"logprobs":true})", "logprobs"},
        Refusal{"top_logprobs", R"({"model":"m",)" + kUser + R"(,"top_logprobs":2})",
                "top_logprobs"},
        Refusal{"audio", R"({"model":"m",)" + kUser + R"(,"audio":{"voice":"x"}})", "audio"},
        Refusal{"modalities", R"({"model":"m",)" + kUser + R"(,"modalities":["text"]})",
                "modalities"},
        Refusal{"named_tool_choice",
                R"({"model":"m",)" + kUser + R"(,"tools":[)" + kTool +
                    R"(],"tool_choice":{"type":"function","function":{"name":"f"}}})",
                "tool_choice"},
        Refusal{"serial_tools",
                R"({"model":"m",)" + kUser + R"(,"tools":[)" + kTool +
                    R"(],"parallel_tool_calls":false})",
                "parallel_tool_calls"},
        Refusal{"mixed_strict",
                R"({"model":"m",)" + kUser + R"(,"tools":[)" + kTool +
                    R"(,{"type":"function","function":{"name":"g","strict":true}}]})",
                "tools[1].function.strict"},
        Refusal{"audio_part",
                R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio",)"
                R"("input_audio":{"data":"AAAA","format":"wav"}}]}]})",
                "messages[0].content[0].type"},
        Refusal{"image_in_system",
                R"({"model":"m","messages":[{"role":"system","content":[{"type":"image_url",)"
                R"("image_url":{"url":"https://x/y.png"}}]}]})",
                "messages[0].content[0].type"},
        Refusal{"image_detail",
                R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url",)"
                R"("image_url":{"url":"https://x/y.png","detail":"huge"}}]}]})",
                "messages[0].content[0].image_url.detail"},
        Refusal{"message_name",
                R"({"model":"m","messages":[{"role":"user","name":"bob","content":"hi"}]})",
                "messages[0].name"},
        Refusal{"function_role", R"({"model":"m","messages":[{"role":"function","content":"x"}]})",
                "messages[0].role"},
        Refusal{"unknown_role", R"({"model":"m","messages":[{"role":"critic","content":"x"}]})",
                "messages[0].role"},
        Refusal{"tool_without_id", R"({"model":"m","messages":[{"role":"tool","content":"x"}]})",
                "messages[0].tool_call_id"},
        Refusal{"arguments_not_string",
                R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c",)"
                R"("type":"function","function":{"name":"f","arguments":{}}}]}]})",
                "messages[0].tool_calls[0].function.arguments"},
        Refusal{"response_format_schema_missing",
                R"({"model":"m",)" + kUser +
                    R"(,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}})",
                "response_format.json_schema.schema"},
        Refusal{"max_tokens_zero", R"({"model":"m",)" + kUser + R"(,"max_tokens":0})",
                "max_tokens"}),
    [](const ::testing::TestParamInfo<Refusal>& info) { return info.param.name; });

TEST(CohereRequest, AutoToolChoiceIsOmittedAndNoneIsNone) {
  json::object automatic =
      Built(R"({"model":"m",)" + kUser + R"(,"tools":[)" + kTool + R"(],"tool_choice":"auto"})");
  EXPECT_FALSE(automatic.contains("tool_choice"));
  json::object none =
      Built(R"({"model":"m",)" + kUser + R"(,"tools":[)" + kTool + R"(],"tool_choice":"none"})");
  EXPECT_EQ(none.at("tool_choice"), "NONE");
}

TEST(CohereRequest, NoLimitIsSentWhenTheClientGaveNone) {
  // Cohere's max_tokens is optional: the gateway's default for other dialects is not used.
  json::object out = Built(R"({"model":"m",)" + kUser + "}");
  EXPECT_FALSE(out.contains("max_tokens"));
  EXPECT_EQ(out.at("model"), "command-x");
  EXPECT_FALSE(out.contains("stream"));
}

TEST(CohereRequest, MaxCompletionTokensWinsOverMaxTokens) {
  json::object out =
      Built(R"({"model":"m",)" + kUser + R"(,"max_tokens":10,"max_completion_tokens":20})");
  EXPECT_EQ(out.at("max_tokens"), 20);
}

TEST(CohereRequest, JsonObjectAndTextFormats) {
  EXPECT_EQ(Built(R"({"model":"m",)" + kUser + R"(,"response_format":{"type":"json_object"}})")
                .at("response_format"),
            (json::object{{"type", "json_object"}}));
  EXPECT_FALSE(Built(R"({"model":"m",)" + kUser + R"(,"response_format":{"type":"text"}})")
                   .contains("response_format"));
}

TEST(CohereRequest, AcceptedWithoutEquivalent) {
  // user identifies the end user; stream_options asks for usage, which Cohere always reports.
  json::object out = Built(R"({"model":"m",)" + kUser +
                           R"(,"user":"u-1","stream":true,"stream_options":{"include_usage":true},)"
                           R"("logprobs":false,"n":1,"parallel_tool_calls":true})");
  EXPECT_FALSE(out.contains("user"));
  EXPECT_FALSE(out.contains("stream_options"));
  EXPECT_FALSE(out.contains("logprobs"));
  EXPECT_EQ(out.at("stream"), true);
}

TEST(CohereRequest, AssistantTextWithToolCallsIsThePlanAndWithoutIsContent) {
  json::object out = Built(
      R"({"model":"m","messages":[{"role":"assistant","content":[{"type":"text","text":"a"},)"
      R"({"type":"text","text":"b"}],"tool_calls":[{"id":"c","type":"function",)"
      R"("function":{"name":"f","arguments":"{}"}}]},{"role":"assistant","content":"done"}]})");
  const json::array& messages = out.at("messages").as_array();
  EXPECT_EQ(messages[0].at("tool_plan"), "ab");
  EXPECT_FALSE(messages[0].as_object().contains("content"));
  EXPECT_EQ(messages[1].at("content"), "done");
  EXPECT_FALSE(messages[1].as_object().contains("tool_plan"));
}

TEST(CohereRequest, ToolWithoutParametersGetsAnEmptyObjectSchema) {
  json::object out = Built(R"({"model":"m",)" + kUser +
                           R"(,"tools":[{"type":"function","function":{"name":"now"}}]})");
  EXPECT_EQ(out.at("tools").at(0).at("function").at("parameters"),
            (json::object{{"type", "object"}, {"properties", json::object()}}));
  EXPECT_FALSE(out.contains("strict_tools"));
}

TEST(CohereEndpoint, OnePathAndABearerKey) {
  UpstreamEndpoint endpoint = kCohere.Endpoint(EndpointParams{"", "command", "co-key"});
  EXPECT_EQ(endpoint.path, "/v2/chat");
  EXPECT_EQ(endpoint.stream_path, "/v2/chat");
  EXPECT_EQ(endpoint.authorization, "Bearer co-key");
  EXPECT_TRUE(endpoint.extra_headers.empty());
  UpstreamEndpoint keyless = kCohere.Endpoint(EndpointParams{"/proxy", "command", ""});
  EXPECT_EQ(keyless.path, "/proxy/v2/chat");
  EXPECT_TRUE(keyless.authorization.empty());
}

}  // namespace
}  // namespace turnpike::providers::cohere
