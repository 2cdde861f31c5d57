// OpenAiProvider::BuildRequest writes the pivot member by member instead of serializing a
// modified copy of it. These cases hold it to the copy's exact bytes: the reference below is
// what BuildRequest did before (copy, set model, force stream_options.include_usage when
// streaming, serialize).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "providers/openai/openai_provider.h"

namespace turnpike::providers::openai {
namespace {

namespace json = boost::json;

std::string Reference(const json::object& chat, std::string_view upstream_model) {
  json::object out = chat;
  out["model"] = upstream_model;
  if (const json::value* stream = out.if_contains("stream"); stream && *stream == true) {
    json::value& stream_options = out["stream_options"];
    if (!stream_options.is_object()) stream_options = json::object{};
    stream_options.as_object()["include_usage"] = true;
  }
  return json::serialize(out);
}

TEST(OpenAiBuildRequestTest, WritesTheBytesOfTheModifiedCopy) {
  const char* pivots[] = {
      R"({"model":"m","messages":[{"role":"user","content":"hi"}]})",
      R"({"messages":[],"model":"m","stream":true})",
      R"({"model":"m","stream":true,"stream_options":{"include_usage":false,"x":1},"n":1})",
      R"({"model":"m","stream":true,"stream_options":{"x":[1,2,{"y":null}]}})",
      R"({"model":"m","stream":true,"stream_options":{}})",
      R"({"model":"m","stream":true,"stream_options":null,"temperature":0.5})",
      R"({"model":"m","stream":false,"stream_options":{"include_usage":true}})",
      R"({"stream":true,"messages":[{"role":"user","content":"no model"}]})",
      R"({"model":"m","messages":[{"role":"user","content":"q\"uote\\ \u0001 \u00e9 \ud83d\ude00"}],)"
      R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],)"
      R"("max_completion_tokens":12,"top_p":1e-3,"seed":-5,"big":18446744073709551615})",
  };
  OpenAiProvider provider;
  for (const char* text : pivots) {
    SCOPED_TRACE(text);
    const json::object chat = json::parse(text).as_object();
    for (std::string_view model : {"gpt-4o-mini", "needs \"escaping\"\n", ""}) {
      UpstreamRequestOptions options;
      options.upstream_model = model;
      Result<std::string> built = provider.BuildRequest(chat, options);
      ASSERT_TRUE(built.ok());
      EXPECT_EQ(built.value(), Reference(chat, model));
    }
  }
}

// A pivot as large as a long conversation: more than the appender's buffer per value.
TEST(OpenAiBuildRequestTest, ValuesLargerThanTheBufferAreWrittenWhole) {
  json::array messages;
  for (int i = 0; i < 200; ++i) {
    messages.push_back(
        json::object{{"role", i % 2 == 0 ? "user" : "assistant"},
                     {"content", std::string(100, static_cast<char>('a' + i % 26))}});
  }
  const json::object chat{{"model", "m"}, {"messages", messages}, {"stream", true}};
  UpstreamRequestOptions options;
  options.upstream_model = "upstream";
  Result<std::string> built = OpenAiProvider().BuildRequest(chat, options);
  ASSERT_TRUE(built.ok());
  EXPECT_GT(built->size(), 20'000u);
  EXPECT_EQ(built.value(), Reference(chat, "upstream"));
}

// A window of messages with their texts, inserted by BuildRequestWithWindow (OpenAI's own, and
// Provider's default), writes what
// BuildRequest writes of the pivot holding the window's messages, whichever messages the
// dialect filters (reasoning of earlier turns, in the pivot or in the window).
TEST(OpenAiBuildRequestTest, AWindowWrittenFromItsTextsIsTheWholePivotsRequest) {
  const json::array window_values = json::parse(R"([
      {"role":"user","content":"my name is \"Ann\" \u00e9"},
      {"role":"assistant","content":"Hello Ann."},
      {"role":"assistant","content":"hm","reasoning_content":"thinking"},
      {"role":"user","content":[{"type":"text","text":"look"}]}])")
                                        .as_array();
  const char* pivots[] = {
      R"({"model":"m","messages":[{"role":"system","content":"Be brief."},
          {"role":"user","content":"who am I?"}],"stream":true})",
      R"({"messages":[{"role":"user","content":"who am I?"}],"model":"m"})",
      R"({"model":"m","messages":[{"role":"system","content":"Be brief."},
          {"role":"assistant","content":null,"reasoning_content":"r"},
          {"role":"user","content":"and?"}],"stream":true,"stream_options":{"x":1}})",
      R"({"model":"m","messages":[],"max_completion_tokens":5})",
  };
  // Windows with and without a message the dialect filters.
  for (const size_t count : {size_t{2}, window_values.size()}) {
    std::vector<std::string> texts;
    std::vector<TextMessage> window;
    texts.reserve(count);
    for (size_t i = 0; i < count; ++i) texts.push_back(json::serialize(window_values[i]));
    for (size_t i = 0; i < count; ++i) window.push_back({&window_values[i], texts[i]});
    for (const char* text : pivots) {
      const json::object chat = json::parse(text).as_object();
      const size_t messages = chat.at("messages").as_array().size();
      for (size_t at = 0; at <= messages + 1; ++at) {
        SCOPED_TRACE(std::string(text) + " at " + std::to_string(at) + " of " +
                     std::to_string(count));
        json::object whole = chat;
        json::array& spliced = whole["messages"].as_array();
        const size_t before = std::min(at, spliced.size());
        spliced.insert(spliced.begin() + static_cast<std::ptrdiff_t>(before), window_values.begin(),
                       window_values.begin() + static_cast<std::ptrdiff_t>(count));
        UpstreamRequestOptions options;
        options.upstream_model = "upstream";
        Result<std::string> expected = OpenAiProvider().BuildRequest(whole, options);
        const OpenAiProvider provider;
        Result<std::string> built = provider.BuildRequestWithWindow(chat, options, at, window);
        // Provider's default (a spliced copy, translated) writes the same.
        Result<std::string> spliced_copy =
            provider.Provider::BuildRequestWithWindow(chat, options, at, window);
        ASSERT_TRUE(expected.ok() && built.ok() && spliced_copy.ok());
        EXPECT_EQ(built.value(), expected.value());
        EXPECT_EQ(spliced_copy.value(), expected.value());
      }
    }
  }
}

// Tools offered beside the pivot (an agent's, translated once: UpstreamRequestOptions::tools and
// tools_text) are written as the pivot's `tools` member after its others would be, by OpenAI's
// own writer (their text) and Provider's default (a copy holding them), with or without a window.
TEST(OpenAiBuildRequestTest, ToolsOfferedBesideThePivotAreWrittenAsItsToolsMember) {
  const json::array tools = json::parse(R"([
      {"type":"function","function":{"name":"get_weather","description":"The \"weather\"",
       "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
      {"type":"function","function":{"name":"get_time","parameters":{}}}])")
                                .as_array();
  const std::string tools_text = json::serialize(tools);
  const json::array window_values =
      json::parse(R"([{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."}])")
          .as_array();
  std::vector<std::string> texts;
  std::vector<TextMessage> window;
  for (const json::value& v : window_values) texts.push_back(json::serialize(v));
  for (size_t i = 0; i < window_values.size(); ++i) window.push_back({&window_values[i], texts[i]});
  const char* pivots[] = {
      R"({"model":"m","messages":[{"role":"user","content":"who am I?"}],"stream":true})",
      R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"auto"})",
  };
  for (const char* text : pivots) {
    for (const bool with_window : {false, true}) {
      SCOPED_TRACE(std::string(text) + (with_window ? " with a window" : ""));
      const json::object chat = json::parse(text).as_object();
      json::object whole = chat;
      if (with_window) {
        json::array& messages = whole["messages"].as_array();
        messages.insert(messages.begin(), window_values.begin(), window_values.end());
      }
      whole["tools"] = tools;
      UpstreamRequestOptions plain;
      plain.upstream_model = "upstream";
      Result<std::string> expected = OpenAiProvider().BuildRequest(whole, plain);
      UpstreamRequestOptions options = plain;
      options.tools = &tools;
      options.tools_text = tools_text;
      const std::span<const TextMessage> offered =
          with_window ? std::span<const TextMessage>(window) : std::span<const TextMessage>();
      const OpenAiProvider provider;
      Result<std::string> built = provider.BuildRequestWithWindow(chat, options, 0, offered);
      Result<std::string> copy =
          provider.Provider::BuildRequestWithWindow(chat, options, 0, offered);
      ASSERT_TRUE(expected.ok() && built.ok() && copy.ok());
      EXPECT_EQ(built.value(), expected.value());
      EXPECT_EQ(copy.value(), expected.value());
      EXPECT_NE(built->find("get_time"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace turnpike::providers::openai
