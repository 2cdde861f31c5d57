// OpenAiProvider::BuildRequest writes the pivot member by member instead of serializing a
// modified copy of it. These cases hold it to the copy's exact bytes: the reference below is
// what BuildRequest did before (copy, set model, force stream_options.include_usage when
// streaming, serialize).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

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

}  // namespace
}  // namespace turnpike::providers::openai
