// Request translation edge cases beyond the golden transcripts: what is refused, and by name,
// and how roles, tool results and generation fields are shaped.
#include "providers/gemini/requests.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

Result<std::string> FromChat(std::string_view chat) {
  UpstreamRequestOptions options;
  options.upstream_model = "gemini-x";
  options.default_max_tokens = 4096;  // Gemini needs none: never sent
  return BuildGenerateContentRequest(json::parse(chat).as_object(), options);
}

json::value Built(std::string_view chat) {
  Result<std::string> out = FromChat(chat);
  EXPECT_TRUE(out.ok()) << out.error().param << ": " << out.error().message;
  return out.ok() ? json::parse(out.value()) : json::value();
}

struct Refusal {
  std::string name, body, param;
};

class GeminiRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(GeminiRefusalTest, NamesTheField) {
  Result<std::string> out = FromChat(GetParam().body);
  ASSERT_FALSE(out.ok()) << out.value();
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(out.error().param, GetParam().param);
  EXPECT_FALSE(out.error().message.empty());
}

const std::string kUser = R"("messages":[{"role":"user","content":"hi"}])";

INSTANTIATE_TEST_SUITE_P(
    Gemini, GeminiRefusalTest,
    ::testing::Values(
        Refusal{"n", R"({"model":"m",)" + kUser + R"(,"n":2})", "n"},
        Refusal{"logprobs", R"({"model":"m",)" + kUser + R"(,"logprobs":true})", "logprobs"},
        Refusal{"top_logprobs", R"({"model":"m",)" + kUser + R"(,"top_logprobs":2})",
                "top_logprobs"},
        Refusal{"logit_bias", R"({"model":"m",)" + kUser + R"(,"logit_bias":{"1":2}})",
                "logit_bias"},
        Refusal{"user", R"({"model":"m",)" + kUser + R"(,"user":"u-1"})", "user"},
        Refusal{"reasoning_effort",
                R"({"model":"m",)" + kUser + R"(,"reasoning_effort":"extreme"})",
                "reasoning_effort"},
        Refusal{"parallel_off", R"({"model":"m",)" + kUser + R"(,"parallel_tool_calls":false})",
                "parallel_tool_calls"},
        Refusal{"response_format_type",
                R"({"model":"m",)" + kUser + R"(,"response_format":{"type":"xml"}})",
                "response_format.type"},
        Refusal{"unknown_tool_choice",
                R"({"model":"m",)" + kUser + R"(,"tool_choice":{"type":"allowed_tools"}})",
                "tool_choice"},
        Refusal{
            "late_system",
            R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"system","content":"b"}]})",
            "messages[1].role"},
        Refusal{"only_system", R"({"model":"m","messages":[{"role":"system","content":"b"}]})",
                "messages"},
        Refusal{"name", R"({"model":"m","messages":[{"role":"user","content":"a","name":"bob"}]})",
                "messages[0].name"},
        Refusal{"function_role", R"({"model":"m","messages":[{"role":"function","content":"a"}]})",
                "messages[0].role"},
        Refusal{
            "http_image",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/y.png"}}]}]})",
            "messages[0].content[0].image_url"},
        Refusal{
            "image_detail",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA==","detail":"low"}}]}]})",
            "messages[0].content[0].image_url.detail"},
        Refusal{
            "not_base64",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,AA"}}]}]})",
            "messages[0].content[0].image_url.url"},
        Refusal{
            "audio_format",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"ogg"}}]}]})",
            "messages[0].content[0].input_audio.format"},
        Refusal{
            "file_part",
            R"({"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]})",
            "messages[0].content[0].type"},
        Refusal{
            "system_image",
            R"({"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]},{"role":"user","content":"a"}]})",
            "messages[0].content[0].type"},
        Refusal{
            "assistant_refusal",
            R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null,"refusal":"no"}]})",
            "messages[1].refusal"},
        Refusal{
            "bad_arguments",
            R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{oops"}}]}]})",
            "messages[0].tool_calls[0].function.arguments"},
        Refusal{
            "array_arguments",
            R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})",
            "messages[0].tool_calls[0].function.arguments"},
        Refusal{
            "unknown_tool_call_id",
            R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"nope","content":"1"}]})",
            "messages[1].tool_call_id"},
        Refusal{"strict_tool",
                R"({"model":"m",)" + kUser +
                    R"(,"tools":[{"type":"function","function":{"name":"f","strict":true}}]})",
                "tools[0].function.strict"},
        Refusal{
            "custom_tool",
            R"({"model":"m",)" + kUser + R"(,"tools":[{"type":"custom","custom":{"name":"f"}}]})",
            "tools[0].type"},
        Refusal{"bad_stop", R"({"model":"m",)" + kUser + R"(,"stop":[1]})", "stop"},
        Refusal{"zero_max_tokens", R"({"model":"m",)" + kUser + R"(,"max_tokens":0})",
                "max_tokens"}),
    [](const auto& info) { return info.param.name; });

TEST(ChatToGemini, ModelAndStreamStayOutOfTheBody) {
  const json::value body = Built(R"({"model":"m",)" + kUser +
                                 R"(,"stream":true,"stream_options":{"include_usage":true}})");
  EXPECT_EQ(body, json::parse(R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})"));
}

TEST(ChatToGemini, NullFieldsCountAsAbsent) {
  const json::value body = Built(R"({"model":"m",)" + kUser +
                                 R"(,"logprobs":null,"stop":null,"tools":null,"user":null})");
  EXPECT_FALSE(body.as_object().contains("generationConfig"));
  EXPECT_FALSE(body.as_object().contains("tools"));
}

TEST(ChatToGemini, ToolChoicesMapToFunctionCallingModes) {
  for (const auto& [choice, mode] : {std::pair{"\"none\"", "NONE"}, std::pair{"\"auto\"", "AUTO"},
                                     std::pair{"\"required\"", "ANY"}}) {
    const json::value body = Built(R"({"model":"m",)" + kUser +
                                   R"(,"tools":[{"type":"function","function":{"name":"f"}}],)" +
                                   R"("tool_choice":)" + choice + "}");
    EXPECT_EQ(body.at("toolConfig"),
              json::parse(std::string(R"({"functionCallingConfig":{"mode":")") + mode + "\"}}"))
        << choice;
    EXPECT_EQ(body.at("tools"), json::parse(R"([{"functionDeclarations":[{"name":"f"}]}])"));
  }
}

TEST(ChatToGemini, ParallelToolResultsShareOneUserTurnInOrder) {
  const json::value body = Built(R"({"model":"m","messages":[
      {"role":"user","content":"go"},
      {"role":"assistant","content":"Calling.","tool_calls":[
        {"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},
        {"id":"b","type":"function","function":{"name":"g","arguments":"{\"x\":[1,2]}"}}]},
      {"role":"tool","tool_call_id":"b","content":[{"type":"text","text":"[1,"},{"type":"text","text":"2]"}]},
      {"role":"tool","tool_call_id":"a","content":"{\"ok\":true}"},
      {"role":"user","content":"thanks"}]})");
  EXPECT_EQ(body.at("contents"), json::parse(R"([
      {"role":"user","parts":[{"text":"go"}]},
      {"role":"model","parts":[{"text":"Calling."},
        {"functionCall":{"name":"f","args":{}}},
        {"functionCall":{"name":"g","args":{"x":[1,2]}}}]},
      {"role":"user","parts":[
        {"functionResponse":{"name":"g","response":{"content":"[1,2]"}}},
        {"functionResponse":{"name":"f","response":{"ok":true}}},
        {"text":"thanks"}]}])"));
}

TEST(ChatToGemini, ThoughtSignaturesInCallIdsGoBackOnTheirFunctionCallParts) {
  const json::value body = Built(R"({"model":"m","messages":[
      {"role":"user","content":"go"},
      {"role":"assistant","content":null,"tool_calls":[
        {"id":"call_r_0_ts_Cik-_w_Q","type":"function","function":{"name":"f","arguments":"{}"}},
        {"id":"call_r_1","type":"function","function":{"name":"g","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"call_r_1","content":"1"},
      {"role":"tool","tool_call_id":"call_r_0_ts_Cik-_w_Q","content":"0"}]})");
  EXPECT_EQ(body.at("contents"), json::parse(R"([
      {"role":"user","parts":[{"text":"go"}]},
      {"role":"model","parts":[
        {"functionCall":{"name":"f","args":{}},"thoughtSignature":"Cik+/w/Q"},
        {"functionCall":{"name":"g","args":{}}}]},
      {"role":"user","parts":[
        {"functionResponse":{"name":"g","response":{"content":"1"}}},
        {"functionResponse":{"name":"f","response":{"content":"0"}}}]}])"));
}

TEST(ChatToGemini, AToolResultMatchesItsCallByThePlainId) {
  // The result names the call by its plain id, whether or not it repeats the signature.
  const json::value body = Built(R"({"model":"m","messages":[
      {"role":"user","content":"go"},
      {"role":"assistant","tool_calls":[
        {"id":"c_ts_AAAA","type":"function","function":{"name":"f","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"c","content":"1"}]})");
  EXPECT_EQ(body.at("contents").at(2), json::parse(R"({"role":"user","parts":[
                {"functionResponse":{"name":"f","response":{"content":"1"}}}]})"));
}

TEST(ChatToGemini, AMalformedSignatureSegmentIsRefusedByName) {
  const std::string call =
      R"({"role":"assistant","tool_calls":[{"id":"c_ts_AAAA","type":"function",)"
      R"("function":{"name":"f","arguments":"{}"}}]})";
  for (const auto& [messages, param] : {
           std::pair{
               std::string(R"([{"role":"user","content":"go"},)"
                           R"({"role":"assistant","tool_calls":[{"id":"c_ts_A.B",)"
                           R"("type":"function","function":{"name":"f","arguments":"{}"}}]}])"),
               "messages[1].tool_calls[0].id"},
           std::pair{R"([{"role":"user","content":"go"},)" + call +
                         R"(,{"role":"tool","tool_call_id":"c_ts_","content":"1"}])",
                     "messages[2].tool_call_id"},
       }) {
    Result<std::string> out = FromChat(R"({"model":"m","messages":)" + messages + "}");
    ASSERT_FALSE(out.ok()) << out.value();
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
    EXPECT_EQ(out.error().param, param);
  }
}

TEST(ChatToGemini, DeveloperMessagesJoinTheSystemInstruction) {
  const json::value body = Built(R"({"model":"m","messages":[
      {"role":"developer","content":"A"},
      {"role":"system","content":[{"type":"text","text":"B"}]},
      {"role":"user","content":"hi"},
      {"role":"assistant","content":""},
      {"role":"user","content":"again"}]})");
  EXPECT_EQ(body.at("systemInstruction"), json::parse(R"({"parts":[{"text":"A"},{"text":"B"}]})"));
  // The empty assistant turn has no parts: the user turns around it merge.
  EXPECT_EQ(body.at("contents"),
            json::parse(R"([{"role":"user","parts":[{"text":"hi"},{"text":"again"}]}])"));
}

TEST(ChatToGemini, JsonObjectModeAndLatestTokenLimit) {
  const json::value body = Built(
      R"({"model":"m",)" + kUser +
      R"(,"response_format":{"type":"json_object"},"max_tokens":5,"max_completion_tokens":7})");
  EXPECT_EQ(body.at("generationConfig"),
            json::parse(R"({"responseMimeType":"application/json","maxOutputTokens":7})"));
}

}  // namespace
}  // namespace turnpike::providers::gemini
