#include "stream/chat_accumulator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stream/sse_parser.h"

namespace turnpike::stream {
namespace {

// An OpenAI stream as sent with stream_options.include_usage: a role chunk, content, two
// parallel tool calls whose argument fragments interleave, the finish reason, the usage-only
// chunk and the sentinel. Every chunk but the last carries "usage":null, as OpenAI's do.
const std::string kOpenAiStream =
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Let me "},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"check \"both\"."},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"UTC\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null})"
    "\n\n"
    R"(data: {"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":45,"total_tokens":165,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}})"
    "\n\n"
    "data: [DONE]\n\n";

std::vector<ChunkKind> FeedStream(ChatAccumulator& acc, std::string_view stream, size_t split) {
  std::vector<ChunkKind> kinds;
  SseParser parser;
  auto on_event = [&](const SseEvent& e) {
    if (e.has_data) kinds.push_back(acc.Consume(e.data));
  };
  EXPECT_TRUE(parser.Feed(stream.substr(0, split), on_event).ok());
  EXPECT_TRUE(parser.Feed(stream.substr(split), on_event).ok());
  return kinds;
}

TEST(ChatAccumulatorTest, RealisticStream) {
  ChatAccumulator acc;
  const std::vector<ChunkKind> kinds = FeedStream(acc, kOpenAiStream, kOpenAiStream.size() / 3);
  const std::vector<ChunkKind> expected = {
      ChunkKind::kDelta, ChunkKind::kDelta,     ChunkKind::kDelta, ChunkKind::kDelta,
      ChunkKind::kDelta, ChunkKind::kDelta,     ChunkKind::kDelta, ChunkKind::kDelta,
      ChunkKind::kDelta, ChunkKind::kUsageOnly, ChunkKind::kDone};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(acc.id(), "chatcmpl-9x");
  EXPECT_EQ(acc.model(), "gpt-4o-2024-08-06");
  EXPECT_TRUE(acc.done());
  EXPECT_TRUE(acc.saw_first_token());
  EXPECT_FALSE(acc.truncated());
  EXPECT_EQ(acc.unparsed_chunks(), 0u);

  ASSERT_EQ(acc.choices().size(), 1u);
  const Choice& choice = acc.choices()[0];
  EXPECT_EQ(choice.role, "assistant");
  EXPECT_EQ(choice.content, "Let me check \"both\".");
  EXPECT_EQ(choice.finish_reason, "tool_calls");
  ASSERT_EQ(choice.tool_calls.size(), 2u);
  EXPECT_EQ(choice.tool_calls[0].index, 0);
  EXPECT_EQ(choice.tool_calls[0].id, "call_A");
  EXPECT_EQ(choice.tool_calls[0].type, "function");
  EXPECT_EQ(choice.tool_calls[0].name, "get_weather");
  EXPECT_EQ(choice.tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(choice.tool_calls[1].index, 1);
  EXPECT_EQ(choice.tool_calls[1].id, "call_B");
  EXPECT_EQ(choice.tool_calls[1].name, "get_time");
  EXPECT_EQ(choice.tool_calls[1].arguments, R"({"tz":"UTC"})");

  const Usage& usage = acc.usage();
  EXPECT_TRUE(usage.present());
  EXPECT_EQ(usage.prompt_tokens, 120);
  EXPECT_EQ(usage.completion_tokens, 45);
  EXPECT_EQ(usage.total_tokens, 165);
  EXPECT_EQ(usage.cached_tokens, 64);
}

TEST(ChatAccumulatorTest, FirstTokenIsContentNotRole) {
  ChatAccumulator acc;
  acc.Consume(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})");
  EXPECT_FALSE(acc.saw_first_token());
  acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"x"}}]})");
  EXPECT_TRUE(acc.saw_first_token());
}

TEST(ChatAccumulatorTest, ToolCallDeltaIsAFirstToken) {
  ChatAccumulator acc;
  acc.Consume(R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c"}]}}]})");
  EXPECT_TRUE(acc.saw_first_token());
}

TEST(ChatAccumulatorTest, UsageAbsentUntilReported) {
  ChatAccumulator acc;
  EXPECT_EQ(acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null})"),
            ChunkKind::kDelta);
  EXPECT_FALSE(acc.usage().present());
  EXPECT_EQ(acc.usage().cached_tokens, -1);
}

TEST(ChatAccumulatorTest, UsageOnChunkWithChoicesIsStillADelta) {
  ChatAccumulator acc;  // vLLM's continuous usage stats put usage on every chunk
  EXPECT_EQ(acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"x"}}],)"
                        R"("usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})"),
            ChunkKind::kDelta);
  EXPECT_EQ(acc.usage().total_tokens, 4);
}

TEST(ChatAccumulatorTest, EmptyChoicesWithoutUsageIsADelta) {
  ChatAccumulator acc;  // Azure's prompt_filter_results preamble
  EXPECT_EQ(acc.Consume(R"({"choices":[],"prompt_filter_results":[{"prompt_index":0}]})"),
            ChunkKind::kDelta);
}

TEST(ChatAccumulatorTest, ChoicesSortedByIndex) {
  ChatAccumulator acc;
  acc.Consume(
      R"({"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}]})");
  acc.Consume(R"({"choices":[{"index":1,"delta":{"content":"B"}}]})");
  ASSERT_EQ(acc.choices().size(), 2u);
  EXPECT_EQ(acc.choices()[0].index, 0);
  EXPECT_EQ(acc.choices()[0].content, "a");
  EXPECT_EQ(acc.choices()[1].content, "bB");
}

TEST(ChatAccumulatorTest, InStreamError) {
  ChatAccumulator acc;
  acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"partial"}}]})");
  EXPECT_EQ(
      acc.Consume(
          R"({"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}})"),
      ChunkKind::kError);
  EXPECT_EQ(acc.error_message(), "The server had an error while processing your request.");
  EXPECT_EQ(acc.Consume(R"({"error":"overloaded"})"), ChunkKind::kError);
  EXPECT_EQ(acc.error_message(), "overloaded");
  EXPECT_EQ(acc.choices()[0].content, "partial");
}

TEST(ChatAccumulatorTest, GarbageIsCountedAndNotApplied) {
  ChatAccumulator acc;
  acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"ok"}}]})");
  const std::vector<std::string> garbage = {
      "{not json",
      "",
      "[1,2]",
      "\"text\"",
      R"({"choices":[{"index":0,"delta":{"content":"x"}}]} trailing)",
      R"({"choices":[{"index":0,"delta":{"content":"x"}}]}{"choices":[]})",
      // Read fine up to a member of the wrong type: nothing of the chunk is applied.
      R"({"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":7}]})",
      R"({"choices":[{"index":0,"delta":{"content":5}}]})",
      R"({"choices":[{"index":-1,"delta":{"content":"x"}}]})",
      R"({"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"total_tokens":"9"}})",
      "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"}}]}",
  };
  for (const std::string& payload : garbage) {
    EXPECT_EQ(acc.Consume(payload), ChunkKind::kUnparsed) << payload;
  }
  EXPECT_EQ(acc.unparsed_chunks(), garbage.size());
  EXPECT_EQ(acc.choices()[0].content, "ok");
  EXPECT_EQ(acc.choices()[0].finish_reason, "");
  EXPECT_FALSE(acc.usage().present());
}

TEST(ChatAccumulatorTest, DoneToleratesWhitespace) {
  ChatAccumulator acc;
  EXPECT_EQ(acc.Consume(" [DONE]\r\n"), ChunkKind::kDone);
  EXPECT_TRUE(acc.done());
}

TEST(ChatAccumulatorTest, ContentCapCutsOnCharacterBoundary) {
  ChatAccumulator acc(6);
  acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"ab"}}]})");
  EXPECT_FALSE(acc.truncated());
  acc.Consume(R"({"choices":[{"index":0,"delta":{"content":"c\u00e9\u00e9"}}]})");  // c é é
  EXPECT_TRUE(acc.truncated());
  EXPECT_EQ(acc.choices()[0].content, "abc\xc3\xa9");  // 5 bytes: the next é would split
  acc.Consume(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1234567"}}]}}]})");
  EXPECT_EQ(acc.choices()[0].tool_calls[0].arguments, "123456");
}

TEST(ExtractUsageTest, NonStreamingBody) {
  const Usage usage = ExtractUsage(
      R"({"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":)"
      R"({"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":)"
      R"({"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,)"
      R"("prompt_tokens_details":{"cached_tokens":0}}})");
  EXPECT_TRUE(usage.present());
  EXPECT_EQ(usage.prompt_tokens, 9);
  EXPECT_EQ(usage.completion_tokens, 2);
  EXPECT_EQ(usage.total_tokens, 11);
  EXPECT_EQ(usage.cached_tokens, 0);
}

TEST(ExtractUsageTest, MissingOrInvalid) {
  EXPECT_FALSE(ExtractUsage(R"({"id":"x","choices":[]})").present());
  EXPECT_FALSE(ExtractUsage(R"({"usage":null})").present());
  EXPECT_FALSE(ExtractUsage("not json").present());
  EXPECT_FALSE(ExtractUsage(R"({"usage":{"prompt_tokens":"many"}})").present());
}

}  // namespace
}  // namespace turnpike::stream
