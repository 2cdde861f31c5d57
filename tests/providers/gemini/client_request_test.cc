// The Gemini client role's request parser: GenerateContentRequest -> the pivot (an OpenAI chat
// request), field by field, and each refusal naming the client's field.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/gemini/gemini_provider.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

json::object Parse(std::string_view body) {
  const GeminiProvider gemini;
  Result<json::object> pivot = gemini.ParseRequest(body);
  EXPECT_TRUE(pivot.ok()) << (pivot.ok() ? "" : pivot.error().param + ": " + pivot.error().message);
  return pivot.ok() ? pivot.value() : json::object{};
}

Error Refusal(std::string_view body) {
  const GeminiProvider gemini;
  Result<json::object> pivot = gemini.ParseRequest(body);
  EXPECT_FALSE(pivot.ok()) << body;
  return pivot.ok() ? Error{} : pivot.error();
}

TEST(GeminiClientRequest, TextSystemAndGenerationConfig) {
  const json::object pivot = Parse(R"({
    "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
    "contents": [{"parts": [{"text": "Hi"}]}, {"role": "model", "parts": [{"text": "Hello"}]},
                 {"role": "user", "parts": [{"text": "Bye"}]}],
    "generationConfig": {"temperature": 0.2, "topP": 0.5, "maxOutputTokens": 64, "seed": 7,
                         "stopSequences": ["X"], "candidateCount": 1,
                         "presencePenalty": 0.1, "frequencyPenalty": 0.3}})");
  EXPECT_EQ(pivot.at("model"), "");  // the door splices the URL's model in
  EXPECT_FALSE(pivot.contains("stream"));
  EXPECT_EQ(pivot.at("messages"), json::parse(R"([
    {"role": "system", "content": "Be brief.\nBe kind."},
    {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
    {"role": "assistant", "content": "Hello"},
    {"role": "user", "content": [{"type": "text", "text": "Bye"}]}])"));
  EXPECT_EQ(pivot.at("temperature"), 0.2);
  EXPECT_EQ(pivot.at("top_p"), 0.5);
  EXPECT_EQ(pivot.at("max_completion_tokens"), 64);
  EXPECT_EQ(pivot.at("seed"), 7);
  EXPECT_EQ(pivot.at("stop"), json::parse(R"(["X"])"));
  EXPECT_EQ(pivot.at("presence_penalty"), 0.1);
  EXPECT_EQ(pivot.at("frequency_penalty"), 0.3);
}

TEST(GeminiClientRequest, FunctionCallsAndResponsesAreMatchedByNameAndOrder) {
  const json::object pivot = Parse(R"({"contents": [
    {"role": "user", "parts": [{"text": "Weather?"}]},
    {"role": "model", "parts": [
      {"functionCall": {"name": "w", "args": {"city": "A"}}, "thoughtSignature": "c2ln"},
      {"functionCall": {"name": "w", "args": {"city": "B"}}},
      {"functionCall": {"id": "given", "name": "t", "args": {}}}]},
    {"role": "user", "parts": [
      {"functionResponse": {"name": "t", "id": "given", "response": {"ok": true}}},
      {"functionResponse": {"name": "w", "response": {"temp": 1}}},
      {"functionResponse": {"name": "w", "response": {"temp": 2}}}]}]})");
  const json::array& messages = pivot.at("messages").as_array();
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[1], json::parse(R"({"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_0", "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"A\"}"}},
    {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{\"city\":\"B\"}"}},
    {"id": "given", "type": "function", "function": {"name": "t", "arguments": "{}"}}]})"));
  EXPECT_EQ(
      messages[2],
      json::parse(R"({"role": "tool", "tool_call_id": "given", "content": "{\"ok\":true}"})"));
  EXPECT_EQ(messages[3].at("tool_call_id"), "call_0");
  EXPECT_EQ(messages[4].at("tool_call_id"), "call_1");
  EXPECT_EQ(messages[4].at("content"), "{\"temp\":2}");
}

TEST(GeminiClientRequest, ToolsToolConfigAndJsonOutput) {
  const json::object pivot = Parse(R"({"contents": [{"parts": [{"text": "x"}]}],
    "tools": [{"functionDeclarations": [
      {"name": "f", "description": "d", "parameters": {"type": "OBJECT",
        "properties": {"a": {"type": "ARRAY", "items": {"type": "STRING"}}}}},
      {"name": "g"}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["g"]}},
    "generationConfig": {"responseMimeType": "application/json",
                         "responseSchema": {"type": "OBJECT"}}})");
  EXPECT_EQ(pivot.at("tools"), json::parse(R"([
    {"type": "function", "function": {"name": "f", "description": "d", "parameters":
      {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}}},
    {"type": "function", "function": {"name": "g"}}])"));
  EXPECT_EQ(pivot.at("tool_choice"),
            json::parse(R"({"type": "function", "function": {"name": "g"}})"));
  EXPECT_EQ(pivot.at("response_format"), json::parse(R"({"type": "json_schema",
    "json_schema": {"name": "response", "schema": {"type": "object"}}})"));
  EXPECT_EQ(Parse(R"({"contents": [{"parts": [{"text": "x"}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
    "generationConfig": {"responseMimeType": "application/json"}})")
                .at("tool_choice"),
            "none");
}

TEST(GeminiClientRequest, InlineImagesBecomeDataUrls) {
  const json::object pivot = Parse(R"({"contents": [{"parts": [
    {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}]})");
  EXPECT_EQ(
      pivot.at("messages").at(0).at("content").at(0),
      json::parse(R"({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})"));
}

TEST(GeminiClientRequest, RefusalsNameTheField) {
  EXPECT_EQ(Refusal("{").code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(Refusal("[]").code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(Refusal(R"({})").param, "contents");
  EXPECT_EQ(Refusal(R"({"contents": []})").param, "contents");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"text": "x"}]}], "safetySettings": []})").param,
            "safetySettings");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"text": "x"}]}],
                        "generationConfig": {"topK": 3}})")
                .param,
            "generationConfig.topK");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"text": "x"}]}],
                        "generationConfig": {"candidateCount": 2}})")
                .param,
            "generationConfig.candidateCount");
  EXPECT_EQ(Refusal(R"({"contents": [{"role": "tool", "parts": [{"text": "x"}]}]})").param,
            "contents[0].role");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"executableCode": {}}]}]})").param,
            "contents[0].parts[0].executableCode");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"inlineData": {"mimeType": "audio/wav",
                        "data": "AA"}}]}]})")
                .param,
            "contents[0].parts[0].inlineData.mimeType");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"text": "x"}]}],
                        "tools": [{"googleSearch": {}}]})")
                .param,
            "tools[0].googleSearch");
  EXPECT_EQ(Refusal(R"({"contents": [{"parts": [{"text": "x"}]}], "toolConfig":
                        {"functionCallingConfig": {"mode": "ANY",
                         "allowedFunctionNames": ["a", "b"]}}})")
                .param,
            "toolConfig.functionCallingConfig.allowedFunctionNames");
  EXPECT_EQ(Refusal(R"({"contents": [{"role": "model", "parts": [
                        {"functionCall": {"name": "f", "args": [1]}}]}]})")
                .param,
            "contents[0].parts[0].functionCall.args");
}

}  // namespace
}  // namespace turnpike::providers::gemini
