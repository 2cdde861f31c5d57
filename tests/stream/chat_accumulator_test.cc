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

// Chunks that repeat the previous chunk's bytes around other content take the template path;
// the result must be what a full scan of each gives.
TEST(ChatAccumulatorTest, RepeatedShapeTakesTheTemplatePathWithTheSameResult) {
  const std::string head =
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"model":"m",)"
      R"("choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"logprobs":null,"finish_reason":null}],"usage":null})";
  ChatAccumulator acc;
  EXPECT_EQ(acc.Consume(head + "Hello" + tail), ChunkKind::kDelta);  // scanned: the template
  EXPECT_EQ(acc.template_chunks(), 0u);
  for (const char* word : {",", " w\xc3\xb6rld", "", " \xf0\x9f\x99\x82", " and more words"}) {
    EXPECT_EQ(acc.Consume(head + word + tail), ChunkKind::kDelta);
  }
  EXPECT_EQ(acc.template_chunks(), 5u);
  EXPECT_TRUE(acc.saw_first_token());
  // Escapes are decoded on the template path too.
  EXPECT_EQ(acc.Consume(head + R"(\n\"q\" \u00e9\ud83d\ude42)" + tail), ChunkKind::kDelta);
  EXPECT_EQ(acc.template_chunks(), 6u);
  EXPECT_EQ(acc.choices()[0].content,
            "Hello, w\xc3\xb6rld \xf0\x9f\x99\x82 and more words\n\"q\" \xc3\xa9\xf0\x9f\x99\x82");
  EXPECT_EQ(acc.unparsed_chunks(), 0u);
  EXPECT_EQ(acc.id(), "chatcmpl-1");
}

// A middle that would change the chunk's structure, or is not a valid string, must not be
// taken for content.
TEST(ChatAccumulatorTest, TemplatePathRefusesWhatIsNotPlainContent) {
  const std::string head = R"({"id":"c","choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"finish_reason":null}]})";
  ChatAccumulator acc;
  acc.Consume(head + "a" + tail);
  // Valid JSON with a finish reason smuggled between the template's bytes: the full scan
  // reads content "x" and finish_reason "stop" (a later null does not clear it).
  EXPECT_EQ(acc.Consume(head + R"(x"},"finish_reason":"stop","z":{"q":")" + tail),
            ChunkKind::kDelta);
  EXPECT_EQ(acc.choices()[0].content, "ax");
  EXPECT_EQ(acc.choices()[0].finish_reason, "stop");
  // Invalid UTF-8, a raw control character, a bad escape, a lone surrogate: malformed, counted,
  // not applied.
  for (const std::string bad : {"\xc3", "\x01", R"(\x41)", R"(\ud83d)", R"(\udc00x)", R"(\)"}) {
    EXPECT_EQ(acc.Consume(head + bad + tail), ChunkKind::kUnparsed) << bad;
  }
  EXPECT_EQ(acc.unparsed_chunks(), 6u);
  EXPECT_EQ(acc.template_chunks(), 0u);
  EXPECT_EQ(acc.choices()[0].content, "ax");
}

// Differential: a chunk read on the template path gives what a fresh accumulator's full scan
// of the same chunk gives, whatever sits where the content was.
TEST(ChatAccumulatorTest, TemplatePathAgreesWithAFullScan) {
  const std::string head = R"({"id":"c","choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"finish_reason":null}]})";
  const std::vector<std::string> middles = {"",
                                            "plain",
                                            " caf\xc3\xa9",
                                            "\xe2\x82\xac\xf0\x9f\x98\x80",
                                            R"(\n\t\"\\\/)",
                                            R"(\u0041\u00e9\ud83d\ude00)",
                                            "\xc0\xaf",
                                            "\xed\xa0\x80",
                                            "\xf4\x90\x80\x80",
                                            "\x7f",
                                            R"(x","role":"tool)",
                                            R"(x"},"finish_reason":"length","y":{"z":")",
                                            R"(\u12)",
                                            R"(\q)",
                                            "a\"",
                                            "tab\there",
                                            R"(\ud800\u0041)"};
  for (const std::string& middle : middles) {
    const std::string chunk = head + middle + tail;
    ChatAccumulator templated;
    templated.Consume(head + "a" + tail);
    const ChunkKind via_template = templated.Consume(chunk);
    ChatAccumulator fresh;
    const ChunkKind via_scan = fresh.Consume(chunk);
    EXPECT_EQ(via_template, via_scan) << middle;
    const std::string fresh_content = fresh.choices().empty() ? "" : fresh.choices()[0].content;
    EXPECT_EQ(templated.choices()[0].content, "a" + fresh_content) << middle;
    const std::string fresh_finish =
        fresh.choices().empty() ? "" : fresh.choices()[0].finish_reason;
    EXPECT_EQ(templated.choices()[0].finish_reason, fresh_finish) << middle;
    const std::string fresh_role = fresh.choices().empty() ? "" : fresh.choices()[0].role;
    EXPECT_EQ(templated.choices()[0].role, fresh_role) << middle;
  }
}

// A chunk refused after its scan (a negative index) never becomes a template.
TEST(ChatAccumulatorTest, RefusedChunkIsNoTemplate) {
  const std::string chunk = R"({"choices":[{"index":-1,"delta":{"content":"x"}}]})";
  ChatAccumulator acc;
  EXPECT_EQ(acc.Consume(chunk), ChunkKind::kUnparsed);
  EXPECT_EQ(acc.Consume(chunk), ChunkKind::kUnparsed);
  EXPECT_EQ(acc.unparsed_chunks(), 2u);
  EXPECT_TRUE(acc.choices().empty());
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

// ConsumeEvent: the reading before SSE framing. Fed the same events, it must leave the
// accumulator as framing them and Consume would, and take exactly one whole event.
TEST(ChatAccumulatorTest, ConsumeEventTakesAFramedContentChunkLikeTheTemplate) {
  const std::string head =
      R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"model":"m",)"
      R"("choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"logprobs":null,"finish_reason":null}],"usage":null})";
  const auto event = [&](std::string_view content) {
    return "data: " + head + std::string(content) + tail + "\n\n";
  };
  ChatAccumulator acc;
  // No template yet: read as one data line, which makes the template.
  EXPECT_EQ(acc.ConsumeEvent(event("Hello")).size, event("Hello").size());
  EXPECT_EQ(acc.template_chunks(), 0u);
  const std::string next = event(" w\xc3\xb6rld");
  // The event's size, whatever follows it in the read.
  EXPECT_EQ(acc.ConsumeEvent(next + event("!") + "data: [DONE]\n\n").size, next.size());
  EXPECT_EQ(acc.ConsumeEvent(event(R"(\n\"q\" \u00e9)")).size, event(R"(\n\"q\" \u00e9)").size());
  EXPECT_EQ(acc.template_chunks(), 2u);
  EXPECT_EQ(acc.choices()[0].content, "Hello w\xc3\xb6rld\n\"q\" \xc3\xa9");
  EXPECT_EQ(acc.output_bytes(), 5 + 7 + 7);

  // Not taken, nothing applied: another framing (no space, CRLF, a CR in the line, a second
  // field, a comment first), an event cut before its blank line.
  const std::vector<std::string> refused = {
      "data:" + head + "x" + tail + "\n\n",
      "data: " + head + "x" + tail + "\r\n\r\n",
      "data: " + head + "x\r" + tail + "\n\n",
      "data: " + head + "x" + tail + "\nid: 1\n\n",
      "data: " + head + "x" + tail + "\n",
      "data: " + head + "x" + tail,
      ": comment\n\n" + event("x"),
  };
  for (const std::string& bytes : refused) {
    EXPECT_EQ(acc.ConsumeEvent(bytes).size, 0u) << bytes;
  }
  EXPECT_EQ(acc.template_chunks(), 2u);
  EXPECT_EQ(acc.unparsed_chunks(), 0u);
  EXPECT_EQ(acc.choices()[0].content, "Hello w\xc3\xb6rld\n\"q\" \xc3\xa9");

  // Taken without the template, as framing and Consume read them: a content that is not a valid
  // string body (unparsed), bytes around it that differ, trailing blanks, the usage chunk, the
  // end.
  const std::vector<std::pair<std::string, ChunkKind>> read = {
      {event("\xc3"), ChunkKind::kUnparsed},
      {event(R"(\ud83d)"), ChunkKind::kUnparsed},
      {event(R"(x"},"finish_reason":"stop","z":{"q":")"), ChunkKind::kDelta},
      {"data: " + head + "y" + tail + " \n\n", ChunkKind::kDelta},
      {R"(data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}})"
       "\n\n",
       ChunkKind::kUsageOnly},
      {"data: [DONE]\n\n", ChunkKind::kDone},
  };
  for (const auto& [bytes, kind] : read) {
    const ChatAccumulator::TakenEvent taken = acc.ConsumeEvent(bytes + "data: [DONE]\n\n");
    EXPECT_EQ(taken.size, bytes.size()) << bytes;
    EXPECT_EQ(taken.kind, kind) << bytes;
  }
  EXPECT_EQ(acc.unparsed_chunks(), 2u);
  EXPECT_EQ(acc.choices()[0].content, "Hello w\xc3\xb6rld\n\"q\" \xc3\xa9xy");
  EXPECT_EQ(acc.choices()[0].finish_reason, "stop");
  EXPECT_EQ(acc.usage().completion_tokens, 4);
  EXPECT_TRUE(acc.done());
}

// A chunk that arrived over several data lines (joined with a line break) is a template for
// Consume, not for ConsumeEvent: as one data line it would be other bytes.
TEST(ChatAccumulatorTest, ChunkWithALineBreakIsNoEventTemplate) {
  const std::string head = "{\"choices\":[{\"index\":0,\n\"delta\":{\"content\":\"";
  const std::string tail = R"("}}]})";
  ChatAccumulator acc;
  EXPECT_EQ(acc.Consume(head + "a" + tail), ChunkKind::kDelta);
  EXPECT_EQ(acc.ConsumeEvent("data: " + head + "b" + tail + "\n\n").size, 0u);
  EXPECT_EQ(acc.Consume(head + "b" + tail), ChunkKind::kDelta);
  EXPECT_EQ(acc.template_chunks(), 1u);
  EXPECT_EQ(acc.choices()[0].content, "ab");
}

// Text::kCount keeps no content or arguments, counts them all (past the cap too), and reads
// everything else as kKeep does.
TEST(ChatAccumulatorTest, CountedTextIsNotKept) {
  ChatAccumulator kept(6);
  ChatAccumulator counted(6, ChatAccumulator::Text::kCount);
  const std::vector<ChunkKind> kept_kinds = FeedStream(kept, kOpenAiStream, 100);
  EXPECT_EQ(FeedStream(counted, kOpenAiStream, 100), kept_kinds);
  EXPECT_TRUE(kept.truncated());
  EXPECT_FALSE(counted.truncated());
  // The content ("Let me ", "check \"both\"." decoded), the names (get_weather, get_time) and
  // the arguments ({"city":"Paris"} and {"tz":"UTC"}), each whole.
  const int64_t expected = 7 + 13 + 11 + 8 + 16 + 12;
  EXPECT_EQ(counted.output_bytes(), expected);
  EXPECT_EQ(kept.output_bytes(), expected);
  ASSERT_EQ(counted.choices().size(), 1u);
  EXPECT_EQ(counted.choices()[0].content, "");
  EXPECT_EQ(counted.choices()[0].role, "assistant");
  EXPECT_EQ(counted.choices()[0].finish_reason, "tool_calls");
  ASSERT_EQ(counted.choices()[0].tool_calls.size(), 2u);
  EXPECT_EQ(counted.choices()[0].tool_calls[1].name, "get_time");
  EXPECT_EQ(counted.choices()[0].tool_calls[1].arguments, "");
  EXPECT_EQ(counted.usage().prompt_tokens, 120);
  EXPECT_TRUE(counted.saw_first_token());
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
