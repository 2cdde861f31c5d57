// A turn's window spliced into its pivot (doors/agents/items.h Spliceable, WindowMessages): the
// messages are exactly those the Responses translation makes of the window and the input
// together, the upstream request the one of that whole translation, and a window whose items
// join their neighbours is not spliced.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "doors/agents/items.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/request.h"
#include "providers/openai_responses/request_input.h"

namespace turnpike::agents {
namespace {
namespace json = boost::json;
using providers::openai_responses::ParseResponsesDocument;
using providers::openai_responses::TranslateMessages;

std::vector<std::shared_ptr<const MemoryItem>> Window(std::string_view items) {
  std::vector<std::shared_ptr<const MemoryItem>> window;
  const json::value parsed = json::parse(items);
  for (const json::value& item : parsed.as_array()) {
    window.push_back(MakeMemoryItem(json::serialize(item)));
  }
  return window;
}

// The messages of instructions + window + input translated together, and spliced.
std::pair<std::string, std::string> BothWays(std::string_view window_items,
                                             std::string_view input_items, bool instructions) {
  const std::vector<std::shared_ptr<const MemoryItem>> window = Window(window_items);
  const json::array input = json::parse(input_items).as_array();
  json::object whole;
  json::object alone;
  if (instructions) whole["instructions"] = alone["instructions"] = "Be brief.";
  json::array all;
  for (const auto& item : window) all.push_back(item->value);
  for (const json::value& item : input) all.push_back(item);
  whole["input"] = std::move(all);
  alone["input"] = input;
  Result<json::array> together = TranslateMessages(whole);
  Result<json::array> spliced = TranslateMessages(alone);
  EXPECT_TRUE(together.ok() && spliced.ok());
  if (!together.ok() || !spliced.ok()) return {};
  EXPECT_TRUE(Spliceable(window, input));
  json::array& messages = *spliced;
  size_t at = instructions ? 1 : 0;
  for (const auto& item : window) {
    EXPECT_EQ(item->message_text, json::serialize(item->message));
    messages.insert(messages.begin() + static_cast<std::ptrdiff_t>(at++), item->message);
  }
  return {json::serialize(*together), json::serialize(*spliced)};
}

constexpr std::string_view kMessages = R"([
  {"type":"message","id":"msg_1","status":"completed","role":"user",
   "content":[{"type":"input_text","text":"my name is Ann"}]},
  {"type":"message","id":"msg_2","status":"completed","role":"assistant",
   "content":[{"type":"output_text","text":"Hello Ann.","annotations":[]}]},
  {"role":"developer","content":"Answer in French."},
  {"role":"user","content":[{"type":"input_text","text":"look: "},
   {"type":"input_image","image_url":"https://example.com/a.png","detail":"low"}]},
  {"type":"message","role":"assistant","content":[{"type":"output_text","text":"a "},
   {"type":"output_text","text":"cat"}]}])";

TEST(WindowTest, AWindowOfMessagesSplicedIsTheWholeTranslation) {
  for (const bool instructions : {true, false}) {
    for (std::string_view input :
         {R"([{"role":"user","content":"who am I?"}])",
          R"([{"type":"function_call_output","call_id":"c1","output":"42"}])",
          R"([{"role":"assistant","content":"noted"},{"role":"user","content":"and?"}])"}) {
      const auto [together, spliced] = BothWays(kMessages, input, instructions);
      EXPECT_FALSE(together.empty());
      EXPECT_EQ(spliced, together) << input;
    }
  }
}

TEST(WindowTest, TheModelCallsRequestIsTheWholeTranslations) {
  // The turn's pivot holds the input's translation; its model call writes the window's messages
  // in from their texts (model_call::PivotSource): the request of the whole translation.
  const std::vector<std::shared_ptr<const MemoryItem>> window = Window(kMessages);
  for (std::string_view input :
       {R"([{"role":"user","content":"who am I?"}])",
        R"([{"type":"reasoning","summary":[{"type":"summary_text","text":"hm"}]},
            {"role":"assistant","content":"noted"},{"role":"user","content":"and?"}])"}) {
    SCOPED_TRACE(input);
    json::object whole{{"model", "m"}, {"instructions", "Be brief."}, {"stream", true}};
    json::object alone = whole;
    const json::value items = json::parse(input);
    json::array all;
    for (const auto& item : window) all.push_back(item->value);
    for (const json::value& item : items.as_array()) all.push_back(item);
    whole["input"] = std::move(all);
    alone["input"] = items;
    Result<json::object> together = ParseResponsesDocument(whole);
    Result<json::object> pivot = ParseResponsesDocument(alone);
    ASSERT_TRUE(together.ok() && pivot.ok());
    ASSERT_TRUE(Spliceable(window, alone["input"].as_array()));
    providers::UpstreamRequestOptions options;
    options.upstream_model = "upstream";
    Result<std::string> expected =
        providers::openai::OpenAiProvider().BuildRequest(*together, options);
    Result<std::string> built = providers::openai::OpenAiProvider().BuildRequestWithWindow(
        *pivot, options, 1, WindowMessages(window));
    ASSERT_TRUE(expected.ok() && built.ok());
    EXPECT_EQ(built.value(), expected.value());
  }
}

TEST(WindowTest, AnEmptyWindowLeavesTheInputsTranslation) {
  const auto [together, spliced] = BothWays("[]", R"([{"role":"user","content":"hi"}])", true);
  EXPECT_EQ(spliced, together);
}

TEST(WindowTest, ItemsThatJoinTheirNeighboursAreNotSpliced) {
  const json::array user = json::parse(R"([{"role":"user","content":"go"}])").as_array();
  // A function call joins the assistant message before it; so does a message after reasoning.
  EXPECT_FALSE(Spliceable(Window(R"([{"role":"assistant","content":"let me look"},
      {"type":"function_call","call_id":"c1","name":"lookup","arguments":"{}"}])"),
                          user));
  EXPECT_FALSE(Spliceable(Window(R"([{"type":"reasoning","summary":[]},
      {"role":"assistant","content":"done"}])"),
                          user));
  EXPECT_FALSE(Spliceable(Window(R"([{"type":"function_call_output","call_id":"c1",
      "output":"42"}])"),
                          user));
  // An input that opens with a function call joins the window's last assistant message.
  EXPECT_FALSE(Spliceable(Window(R"([{"role":"assistant","content":"calling"}])"),
                          json::parse(R"([{"type":"function_call","call_id":"c2",
                              "name":"lookup","arguments":"{}"}])")
                              .as_array()));
  EXPECT_FALSE(Spliceable(Window("[]"), json::array{}));
  EXPECT_TRUE(Spliceable(Window(R"([{"role":"assistant","content":"hi"}])"), user));
}

// A remembered item's parse and message live in its own arena, whichever way it was made, and
// are what a parse on the default heap and the translation alone make.
TEST(WindowTest, ARememberedItemsValuesLiveInItsArena) {
  const std::string text =
      R"({"type":"message","role":"assistant","id":"msg_1","status":"completed",)"
      R"("content":[{"type":"output_text","text":"a reply long enough to leave the inline bytes",)"
      R"("annotations":[]}]})";
  const json::value parsed = json::parse(text);
  for (const std::shared_ptr<const MemoryItem>& item :
       {MakeMemoryItem(text), MakeMemoryItem(text, parsed)}) {
    ASSERT_NE(item, nullptr);
    EXPECT_EQ(item->text, text);
    EXPECT_EQ(item->value, parsed);
    EXPECT_EQ(item->value.storage().get(), &item->arena);
    EXPECT_EQ(item->message.storage().get(), &item->arena);
    const Result<json::array> alone = providers::openai_responses::TranslateItem(parsed);
    ASSERT_TRUE(alone.ok());
    ASSERT_EQ(alone->size(), 1u);
    EXPECT_EQ(item->message, (*alone)[0]);
    EXPECT_EQ(item->message_text, json::serialize((*alone)[0]));
  }
}

}  // namespace
}  // namespace turnpike::agents
