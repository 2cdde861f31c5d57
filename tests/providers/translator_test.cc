// StreamTranslator's own bookkeeping (the dialects' output is covered by the golden tests):
// what it reports to the relay about the stream it translated.
#include "providers/translator.h"

#include <gtest/gtest.h>

#include <string>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "stream/sse_parser.h"

namespace turnpike::providers {
namespace {

constexpr std::string_view kStart =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
    "\"model\":\"claude\",\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n";
constexpr std::string_view kText =
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \\\"you\\\"\"}}\n\n";
constexpr std::string_view kOverloaded =
    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
    "\"message\":\"Overloaded\"}}\n\n";

std::string Feed(StreamTranslator& translator, std::string_view upstream) {
  std::string out;
  stream::SseParser parser;
  Status fed = parser.Feed(upstream, [&](const stream::SseEvent& event) {
    Status translated = translator.Translate(event, out);
    EXPECT_TRUE(translated.ok()) << translated.error().message;
  });
  EXPECT_TRUE(fed.ok());
  return out;
}

TEST(StreamTranslator, ReportsFirstTokenOutputBytesAndTheUpstreamError) {
  anthropic::AnthropicProvider anthropic;
  openai::OpenAiProvider openai;
  StreamTranslator translator(anthropic.NewDecoder(), openai.NewEncoder(EncoderOptions{}));
  Feed(translator, kStart);
  EXPECT_FALSE(translator.saw_first_token());
  EXPECT_EQ(translator.usage().prompt_tokens, 7);
  Feed(translator, kText);
  EXPECT_TRUE(translator.saw_first_token());
  EXPECT_EQ(translator.output_bytes(), 10);  // the escaped text: Hi \"you\"
  EXPECT_FALSE(translator.error().has_value());
  const std::string out = Feed(translator, kOverloaded);
  EXPECT_TRUE(translator.ended());
  ASSERT_TRUE(translator.error().has_value());
  EXPECT_EQ(*translator.error(), ErrorCode::kUnavailable);
  EXPECT_NE(out.find("data: {\"error\":{"), std::string::npos) << out;
}

TEST(StreamTranslator, TheFallbackModelNamesOnlyAnAnswerThatNamesNone) {
  anthropic::AnthropicProvider anthropic;
  openai::OpenAiProvider openai;
  StreamTranslator named(anthropic.NewDecoder(), openai.NewEncoder(EncoderOptions{}));
  named.set_fallback_model("configured");
  EXPECT_NE(Feed(named, kStart).find(R"("model":"claude")"), std::string::npos);

  // The same start without a model: the configured name, escaped.
  constexpr std::string_view kNoModel =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
      "\"model\":\"\",\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n";
  StreamTranslator unnamed(anthropic.NewDecoder(), openai.NewEncoder(EncoderOptions{}));
  unnamed.set_fallback_model("odd\"name");
  const std::string out = Feed(unnamed, kNoModel);
  EXPECT_NE(out.find(R"("model":"odd\"name")"), std::string::npos) << out;
}

TEST(StreamTranslator, AStreamThatStopsShortEndsWithAnErrorAndSaysSo) {
  anthropic::AnthropicProvider anthropic;
  openai::OpenAiProvider openai;
  StreamTranslator translator(anthropic.NewDecoder(), openai.NewEncoder(EncoderOptions{}));
  Feed(translator, kStart);
  std::string out;
  translator.Finish(out);
  EXPECT_TRUE(translator.ended());
  EXPECT_EQ(translator.error(), ErrorCode::kUpstreamBadResponse);
  EXPECT_NE(out.find("\"error\""), std::string::npos);
}

}  // namespace
}  // namespace turnpike::providers
