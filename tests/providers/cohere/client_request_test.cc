// The Cohere client role's request parser: a v2 Chat request -> the pivot (an OpenAI chat
// request), field by field; each refusal naming the client's field; the identity body.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/cohere/cohere_provider.h"

namespace turnpike::providers::cohere {
namespace {

namespace json = boost::json;

json::object Parse(std::string_view body) {
  const CohereProvider cohere;
  Result<json::object> pivot = cohere.ParseRequest(body);
  EXPECT_TRUE(pivot.ok()) << (pivot.ok() ? "" : pivot.error().param + ": " + pivot.error().message);
  return pivot.ok() ? pivot.value() : json::object{};
}

std::string RefusedParam(std::string_view body) {
  const CohereProvider cohere;
  Result<json::object> pivot = cohere.ParseRequest(body);
  EXPECT_FALSE(pivot.ok()) << body;
  return pivot.ok() ? "" : pivot.error().param;
}

TEST(CohereClientRequest, MessagesAndSampling) {
  const json::object pivot = Parse(R"({"model": "command-a", "stream": true,
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": [{"type": "text", "text": "Hi"},
                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
                 {"role": "assistant", "content": [{"type": "text", "text": "Hel"},
                                                   {"type": "text", "text": "lo"}]}],
    "temperature": 0.3, "p": 0.8, "max_tokens": 50, "seed": 1, "stop_sequences": ["Z"],
    "frequency_penalty": 0.1, "presence_penalty": 0.2})");
  EXPECT_EQ(pivot.at("model"), "command-a");
  EXPECT_EQ(pivot.at("stream"), true);
  EXPECT_EQ(pivot.at("stream_options"), json::parse(R"({"include_usage": true})"));
  EXPECT_EQ(pivot.at("messages"), json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Hi"},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
    {"role": "assistant", "content": "Hello"}])"));
  EXPECT_EQ(pivot.at("top_p"), 0.8);
  EXPECT_EQ(pivot.at("max_completion_tokens"), 50);
  EXPECT_EQ(pivot.at("stop"), json::parse(R"(["Z"])"));
}

TEST(CohereClientRequest, ToolsCallsResultsAndFormat) {
  const json::object pivot = Parse(R"({"model": "m",
    "messages": [{"role": "user", "content": "W?"},
      {"role": "assistant", "tool_plan": "I will call w.", "tool_calls": [{"id": "c1",
        "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": [
        {"type": "document", "document": {"data": {"t": 1}}}]}],
    "tools": [{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}],
    "tool_choice": "REQUIRED",
    "response_format": {"type": "json_object", "json_schema": {"type": "object"}}})");
  const json::array& messages = pivot.at("messages").as_array();
  EXPECT_EQ(messages[1], json::parse(R"({"role": "assistant", "tool_calls": [{"id": "c1",
    "type": "function", "function": {"name": "w", "arguments": "{}"}}], "content": null})"));
  EXPECT_EQ(messages[2], json::parse(R"({"role": "tool", "content": "{\"data\":{\"t\":1}}",
    "tool_call_id": "c1"})"));
  EXPECT_EQ(pivot.at("tool_choice"), "required");
  EXPECT_EQ(pivot.at("response_format").at("type"), "json_schema");
  EXPECT_EQ(Parse(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
                      "tool_choice": "NONE", "response_format": {"type": "json_object"}})")
                .at("response_format"),
            json::parse(R"({"type": "json_object"})"));
}

TEST(CohereClientRequest, RefusalsNameTheField) {
  EXPECT_EQ(RefusedParam("{"), "");
  EXPECT_EQ(RefusedParam(R"({"messages": [{"role": "user", "content": "x"}]})"), "model");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "messages": []})"), "messages");
  EXPECT_EQ(
      RefusedParam(R"({"model": "m", "k": 3, "messages": [{"role": "user", "content": "x"}]})"),
      "k");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "documents": [],
                             "messages": [{"role": "user", "content": "x"}]})"),
            "documents");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "messages": [{"role": "chatbot", "content": "x"}]})"),
            "messages[0].role");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "messages": [{"role": "user", "content": [
                             {"type": "document", "document": {}}]}]})"),
            "messages[0].content[0].type");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "messages": [{"role": "user", "content": "x",
                             "citations": []}]})"),
            "messages[0].citations");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
                             "tool_choice": "AUTO"})"),
            "tool_choice");
  EXPECT_EQ(RefusedParam(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
                             "max_tokens": 0})"),
            "max_tokens");
}

TEST(CohereClientRequest, IdentityBodyReplacesOnlyTheModel) {
  const CohereProvider cohere;
  Result<std::string> body =
      cohere.IdentityBody(R"({"model": "public", "k": 3, "documents": [{"id": "d"}]})", "upstream");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(json::parse(body.value()),
            json::parse(R"({"model": "upstream", "k": 3, "documents": [{"id": "d"}]})"));
  EXPECT_FALSE(cohere.IdentityBody("nope", "upstream").ok());
}

}  // namespace
}  // namespace turnpike::providers::cohere
