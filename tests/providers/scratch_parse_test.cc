// The client dialects that translate a request into the pivot parse the client's document into
// a scratch buffer (providers/scratch_json.h) that is gone when ParseRequest returns. These
// bodies are larger than the buffer's inline part, so the document also spills into heap blocks
// freed on return: a pivot that still pointed into the document would read freed memory, which
// the sanitizer run reports. The pivot must hold every message's text after the return.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/scratch_json.h"

namespace turnpike::providers {
namespace {

namespace json = boost::json;

constexpr int kMessages = 40;

std::string Text(int i) {
  return "message " + std::to_string(i) + " " + std::string(200, 'a' + i % 26);
}

// The texts of the pivot's messages, in order.
std::vector<std::string> PivotTexts(const json::object& pivot) {
  std::vector<std::string> out;
  for (const json::value& message : pivot.at("messages").as_array()) {
    const json::value& content = message.at("content");
    if (content.is_string()) {
      out.emplace_back(content.as_string());
    } else {
      for (const json::value& part : content.as_array())
        out.emplace_back(part.at("text").as_string());
    }
  }
  return out;
}

std::vector<std::string> Expected(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(Text(i));
  return out;
}

json::array Conversation() {
  json::array messages;
  for (int i = 0; i < kMessages; ++i) {
    messages.push_back(
        json::object{{"role", i % 2 == 0 ? "user" : "assistant"}, {"content", Text(i)}});
  }
  return messages;
}

TEST(ScratchParseTest, AnthropicPivotOutlivesTheClientDocument) {
  const std::string body = json::serialize(
      json::object{{"model", "claude-x"}, {"max_tokens", 10}, {"messages", Conversation()}});
  ASSERT_GT(body.size(), ScratchJson::kInline);
  Result<json::object> pivot = anthropic::AnthropicProvider().ParseRequest(body);
  ASSERT_TRUE(pivot.ok()) << pivot.error().message;
  EXPECT_EQ(pivot->at("model").as_string(), "claude-x");
  EXPECT_EQ(PivotTexts(pivot.value()), Expected(kMessages));
}

TEST(ScratchParseTest, ResponsesPivotOutlivesTheClientDocument) {
  const std::string body =
      json::serialize(json::object{{"model", "gpt-x"}, {"input", Conversation()}});
  ASSERT_GT(body.size(), ScratchJson::kInline);
  Result<json::object> pivot = openai_responses::ResponsesProvider().ParseRequest(body);
  ASSERT_TRUE(pivot.ok()) << pivot.error().message;
  EXPECT_EQ(pivot->at("model").as_string(), "gpt-x");
  EXPECT_EQ(PivotTexts(pivot.value()), Expected(kMessages));
}

TEST(ScratchParseTest, CompletionsPivotOutlivesTheClientDocument) {
  std::string prompt;
  for (int i = 0; i < kMessages; ++i) prompt += Text(i);
  const std::string body = json::serialize(json::object{{"model", "gpt-x"}, {"prompt", prompt}});
  ASSERT_GT(body.size(), ScratchJson::kInline);
  Result<json::object> pivot = openai_completions::CompletionsProvider().ParseRequest(body);
  ASSERT_TRUE(pivot.ok()) << pivot.error().message;
  EXPECT_EQ(PivotTexts(pivot.value()), std::vector<std::string>{prompt});
}

// Upstream requests are built in a scratch buffer too, and serialized before it goes: a
// conversation larger than the buffer's inline part comes out whole.
json::object BuiltRequest(const Provider& upstream) {
  json::object chat{{"model", "m"}, {"max_completion_tokens", 10}, {"messages", Conversation()}};
  UpstreamRequestOptions options;
  options.upstream_model = "upstream-model";
  Result<std::string> built = upstream.BuildRequest(chat, options);
  EXPECT_TRUE(built.ok()) << built.error().message;
  if (!built.ok()) return {};
  EXPECT_GT(built->size(), ScratchJson::kInline);
  return json::parse(built.value()).as_object();
}

TEST(ScratchParseTest, AnthropicRequestBuiltInScratchIsWrittenWhole) {
  const json::object request = BuiltRequest(anthropic::AnthropicProvider());
  EXPECT_EQ(request.at("model").as_string(), "upstream-model");
  EXPECT_EQ(PivotTexts(request), Expected(kMessages));
}

TEST(ScratchParseTest, CohereRequestBuiltInScratchIsWrittenWhole) {
  const json::object request = BuiltRequest(cohere::CohereProvider());
  EXPECT_EQ(request.at("model").as_string(), "upstream-model");
  EXPECT_EQ(PivotTexts(request), Expected(kMessages));
}

TEST(ScratchParseTest, GeminiRequestBuiltInScratchIsWrittenWhole) {
  const json::object request = BuiltRequest(gemini::GeminiProvider());
  std::vector<std::string> texts;
  for (const json::value& content : request.at("contents").as_array()) {
    for (const json::value& part : content.at("parts").as_array()) {
      texts.emplace_back(part.at("text").as_string());
    }
  }
  EXPECT_EQ(texts, Expected(kMessages));
}

TEST(ScratchParseTest, ResponsesRequestBuiltInScratchIsWrittenWhole) {
  const json::object request = BuiltRequest(openai_responses::ResponsesProvider());
  std::vector<std::string> texts;
  for (const json::value& item : request.at("input").as_array()) {
    const json::value& content = item.at("content");
    if (content.is_string()) {
      texts.emplace_back(content.as_string());
    } else {
      for (const json::value& part : content.as_array()) {
        texts.emplace_back(part.at("text").as_string());
      }
    }
  }
  EXPECT_EQ(texts, Expected(kMessages));
}

TEST(ScratchParseTest, OllamaRequestBuiltInScratchIsWrittenWhole) {
  const json::object request = BuiltRequest(ollama::OllamaProvider());
  EXPECT_EQ(request.at("model").as_string(), "upstream-model");
  EXPECT_EQ(PivotTexts(request), Expected(kMessages));
}

}  // namespace
}  // namespace turnpike::providers
