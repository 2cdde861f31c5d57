// The OpenAI stream decoder's fast path (stream::ScanEscapedChunk) against its simdjson read
// (ReadChunk), which has the final say: whenever the scanner decides a payload, both must read
// the same thing; and the decoder's events, whichever path a chunk takes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../stream/chunk_payloads.h"
#include "providers/openai/stream_codec.h"
#include "stream/chunk_scan.h"
#include "stream/padded_json.h"

namespace turnpike::providers::openai {
namespace {
using stream::EscapedChunk;
using stream::testing_payloads::ForEachMutation;
using stream::testing_payloads::kDecided;
using stream::testing_payloads::kDeferred;

// The decoder's own members: reasoning, refusal, escaped text kept escaped, null strings.
const std::vector<std::string> kDecoderShapes = {
    R"({"id":"c1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"think \"a\"\n"}}]})",
    R"({"choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":"s"}}]})",
    R"({"choices":[{"index":0,"delta":{"refusal":"no \u00e9","content":null}}]})",
    R"({"choices":[{"index":0,"delta":{"content":"a","content":null}}]})",
    R"({"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop","finish_reason":null}]})",
    R"({"choices":[{"index":1,"delta":{"content":"x"}}]})",
    R"({"choices":[{"delta":{"content":"x"}},{"index":null}]})",
    R"({"choices":[{"index":0},{"index":0,"index":null}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"call_1","function":{"name":"f\u0041","arguments":"{\"a\":1}"}}]}}]})",
    R"({"usage":{"prompt_tokens":5,"completion_tokens":7,"completion_tokens_details":{"reasoning_tokens":3},"prompt_tokens_details":{"cached_tokens":2}}})",
};

void ExpectSame(const EscapedChunk& fast, const EscapedChunk& slow, const std::string& json) {
  EXPECT_EQ(fast.id, slow.id) << json;
  EXPECT_EQ(fast.model, slow.model) << json;
  EXPECT_EQ(fast.content, slow.content) << json;
  EXPECT_EQ(fast.refusal, slow.refusal) << json;
  EXPECT_EQ(fast.reasoning, slow.reasoning) << json;
  EXPECT_EQ(fast.finish_reason, slow.finish_reason) << json;
  EXPECT_EQ(fast.has_usage, slow.has_usage) << json;
  EXPECT_EQ(fast.other_choice, slow.other_choice) << json;
  EXPECT_EQ(fast.usage.prompt_tokens, slow.usage.prompt_tokens) << json;
  EXPECT_EQ(fast.usage.completion_tokens, slow.usage.completion_tokens) << json;
  EXPECT_EQ(fast.usage.cached_tokens, slow.usage.cached_tokens) << json;
  EXPECT_EQ(fast.usage.reasoning_tokens, slow.usage.reasoning_tokens) << json;
  ASSERT_EQ(fast.tools.size(), slow.tools.size()) << json;
  for (size_t i = 0; i < fast.tools.size(); ++i) {
    EXPECT_EQ(fast.tools[i].index, slow.tools[i].index) << json;
    EXPECT_EQ(fast.tools[i].id, slow.tools[i].id) << json;
    EXPECT_EQ(fast.tools[i].name, slow.tools[i].name) << json;
    EXPECT_EQ(fast.tools[i].arguments, slow.tools[i].arguments) << json;
  }
}

class StreamDecodeTest : public ::testing::Test {
 protected:
  bool Fast(const std::string& json) {
    fast_.Clear();
    return stream::ScanEscapedChunk(json, fast_, scratch_);
  }
  // Whether simdjson reads it as a chunk that is not an upstream error.
  bool Slow(const std::string& json) {
    slow_.Clear();
    ChunkError error;
    return ReadChunk(parser_, json, /*skip_head=*/false, slow_, error) == simdjson::SUCCESS &&
           !error.present;
  }

  std::string scratch_;
  EscapedChunk fast_, slow_;
  stream::PaddedJsonParser parser_;
};

TEST_F(StreamDecodeTest, DecidesUsualPayloadsAsSimdjsonReadsThem) {
  std::vector<std::string> all = kDecoderShapes;
  for (const std::string& json : kDecided) {
    if (json.find("\"error\"") == std::string::npos) all.push_back(json);
  }
  for (const std::string& json : all) {
    ASSERT_TRUE(Fast(json)) << json;
    ASSERT_TRUE(Slow(json)) << json;
    ExpectSame(fast_, slow_, json);
  }
}

TEST_F(StreamDecodeTest, KeepsTextEscapedAndReadsTheDecodersMembers) {
  ASSERT_TRUE(Fast(kDecoderShapes[0]));
  EXPECT_EQ(fast_.reasoning, R"(think \"a\"\n)");
  EXPECT_EQ(fast_.id, "c1");
  ASSERT_TRUE(Fast(kDecoderShapes[2]));
  EXPECT_EQ(fast_.refusal, R"(no \u00e9)");
  ASSERT_TRUE(Fast(kDecoderShapes[3]));
  EXPECT_EQ(fast_.content, "");  // the later null wins
  ASSERT_TRUE(Fast(kDecoderShapes[5]));
  EXPECT_TRUE(fast_.other_choice);
  ASSERT_TRUE(Fast(kDecoderShapes[6]));
  EXPECT_TRUE(fast_.other_choice);  // the second choice's null index keeps its position
  ASSERT_TRUE(Fast(kDecoderShapes[9]));
  EXPECT_TRUE(fast_.has_usage);
  EXPECT_EQ(fast_.usage.reasoning_tokens, 3);
  EXPECT_EQ(fast_.usage.cached_tokens, 2);
}

TEST_F(StreamDecodeTest, LeavesErrorsAndMalformedPayloadsToSimdjson) {
  for (const std::string& json : kDeferred) EXPECT_FALSE(Fast(json)) << json;
  EXPECT_FALSE(Fast(R"({"error":{"message":"m","type":"server_error"}})"));
  EXPECT_FALSE(Fast(R"({"choices":[],"error":null})"));
}

// A stream's chunks after the first are scanned from the end of its lead (stream::ChunkLead):
// every payload and mutation read so reads as the whole payload does, decided or not.
TEST_F(StreamDecodeTest, AChunkAfterItsLeadReadsAsTheWholeChunk) {
  std::vector<std::string> bases = kDecoderShapes;
  bases.insert(bases.end(), kDecided.begin(), kDecided.end());
  EscapedChunk after;
  std::string scratch;
  stream::testing_payloads::ExpectReadAfterLeadAsWhole(
      bases,
      [&](const std::string& json, stream::ChunkLead& lead) {
        after.Clear();
        return stream::ScanEscapedChunk(json, after, scratch, lead);
      },
      [&](const std::string& json) { return Fast(json); },
      [&](const std::string& json) {
        EXPECT_EQ(after.plain, fast_.plain) << json;
        ExpectSame(after, fast_, json);
      });
}

TEST_F(StreamDecodeTest, MutationsNeverDisagreeWithSimdjson) {
  size_t decided = 0, deferred = 0;
  std::vector<std::string> bases = kDecoderShapes;
  bases.insert(bases.end(), kDecided.begin(), kDecided.end());
  ForEachMutation(bases, [&](const std::string& json) {
    if (!Fast(json)) {
      ++deferred;
      return;
    }
    ++decided;
    ASSERT_TRUE(Slow(json)) << "the scanner accepted what simdjson rejects: " << json;
    ExpectSame(fast_, slow_, json);
  });
  EXPECT_GT(decided, 1000u);
  EXPECT_GT(deferred, 1000u);
}

// Records what the decoder emits, as text.
class Events final : public EventSink {
 public:
  void OnEvent(const StreamEvent& event) override {
    log.append(std::to_string(static_cast<int>(event.kind)))
        .append("|")
        .append(event.id)
        .append("|")
        .append(event.model)
        .append("|")
        .append(event.name)
        .append("|")
        .append(event.text)
        .append("|")
        .append(std::to_string(event.tool_index))
        .append("|")
        .append(std::to_string(static_cast<int>(event.finish)))
        .append("|")
        .append(std::to_string(event.usage.prompt_tokens))
        .append(",")
        .append(std::to_string(event.usage.completion_tokens))
        .append(",")
        .append(std::to_string(event.usage.cached_tokens))
        .append(",")
        .append(std::to_string(event.usage.reasoning_tokens))
        .append(event.error != nullptr ? "|error:" + event.error->message : "")
        .append("\n");
  }
  std::string log;
};

stream::SseEvent Data(std::string_view data) {
  stream::SseEvent event;
  event.has_data = true;
  event.data = data;
  return event;
}

TEST(OpenAiStreamDecoder, EmitsTheSameEventsForScannedAndParsedChunks) {
  // The same stream twice: as sent (every chunk decided by the template or the scanner), and
  // each chunk with a member the scanner declines (nested 70 deep: simdjson skips it), so that
  // the twin stream takes the slow path throughout.
  const std::vector<std::string> chunks = {
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"reasoning_content":"hm\n"}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":"Hi \"you\""}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":"plain"}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":"a\nb \u00e9"}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":""}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":"x","content":"y"}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":"x","content":"z"}}]})",
      R"({"id":"chatcmpl-1","model":"gpt","choices":[{"index":0,"delta":{"content":"q"},"finish_reason":null}]})",
      R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]})",
      R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}}]})",
      R"({"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
      R"({"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":2}}})",
  };
  Events fast, slow;
  OpenAiStreamDecoder fast_decoder, slow_decoder;
  for (const std::string& chunk : chunks) {
    const std::string twin = chunk.substr(0, chunk.size() - 1) + R"(,"x":)" + std::string(70, '[') +
                             std::string(70, ']') + "}";
    EscapedChunk probe;
    std::string scratch;
    ASSERT_TRUE(stream::ScanEscapedChunk(chunk, probe, scratch)) << chunk;
    ASSERT_FALSE(stream::ScanEscapedChunk(twin, probe, scratch)) << twin;
    ASSERT_TRUE(fast_decoder.Decode(Data(chunk), fast).ok());
    ASSERT_TRUE(slow_decoder.Decode(Data(twin), slow).ok());
  }
  ASSERT_TRUE(fast_decoder.Decode(Data("[DONE]"), fast).ok());
  ASSERT_TRUE(slow_decoder.Decode(Data("[DONE]"), slow).ok());
  EXPECT_EQ(fast.log, slow.log);
  EXPECT_NE(fast.log.find(R"(Hi \"you\")"), std::string::npos);  // escaped, as sent
  EXPECT_NE(fast.log.find(R"(|a\nb \u00e9|)"), std::string::npos);
  EXPECT_EQ(fast_decoder.usage().reasoning_tokens, 2);
}

// Content-only chunks after the first are read by their content alone (the template); content
// that is not a valid string body, or other bytes around it, take the full read.
TEST(OpenAiStreamDecoder, TemplateChunksCarryTheirContentAndRefuseBadOnes) {
  const std::string head = R"({"id":"c","choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"finish_reason":null}]})";
  Events events;
  OpenAiStreamDecoder decoder;
  for (const char* content : {"one", "two", R"(t\"3\")", ""}) {
    ASSERT_TRUE(decoder.Decode(Data(head + content + tail), events).ok()) << content;
  }
  EXPECT_NE(events.log.find("|two|"), std::string::npos) << events.log;
  EXPECT_NE(events.log.find(R"(|t\"3\"|)"), std::string::npos) << events.log;
  // A quote in the content makes other JSON (here a second content member, which wins): the
  // full read takes it.
  ASSERT_TRUE(decoder.Decode(Data(head + R"(a","content":"b)" + tail), events).ok());
  EXPECT_NE(events.log.find("|b|"), std::string::npos) << events.log;
  EXPECT_EQ(events.log.find("|a|"), std::string::npos) << events.log;
  OpenAiStreamDecoder second;
  ASSERT_TRUE(second.Decode(Data(head + "one" + tail), events).ok());
  ASSERT_TRUE(second.Decode(Data(head + "two" + tail), events).ok());
  EXPECT_FALSE(second.Decode(Data(head + R"(bad \x escape)" + tail), events).ok());
  EXPECT_FALSE(second.Decode(Data(head + R"(\ud800)" + tail), events).ok());  // lone surrogate
  EXPECT_FALSE(second.Decode(Data(head + "ctl\x01" + tail), events).ok());
}

// DecodeFramed: the template path before SSE framing takes "data: <chunk>\n\n" when the chunk
// repeats the template around valid content, giving Decode's events; anything else is left to
// the framed path (0, no event).
TEST(OpenAiStreamDecoder, DecodeFramedTakesATemplateEventAndNothingElse) {
  const std::string head = R"({"id":"c","choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"finish_reason":null}]})";
  Events events;
  OpenAiStreamDecoder decoder;
  const std::string first = "data: " + head + "one" + tail + "\n\n";
  EXPECT_EQ(decoder.DecodeFramed(first, events), 0u);  // no template yet
  ASSERT_TRUE(decoder.Decode(Data(head + "one" + tail), events).ok());
  const std::string next = "data: " + head + R"(t\"2\" \u00e9)" + tail + "\n\n";
  EXPECT_EQ(decoder.DecodeFramed(next + first, events), next.size());
  EXPECT_NE(events.log.find(R"(|t\"2\" \u00e9|)"), std::string::npos) << events.log;
  const std::string before = events.log;
  for (const std::string& bytes : {
           "data: " + head + "x" + tail + "\r\n\r\n",
           "data:" + head + "x" + tail + "\n\n",
           "data: " + head + "x" + tail + "\n",
           "data: " + head + R"(bad \x)" + tail + "\n\n",
           "data: " + head + R"(a","content":"b)" + tail + "\n\n",
           "event: e\ndata: " + head + "x" + tail + "\n\n",
       }) {
    EXPECT_EQ(decoder.DecodeFramed(bytes, events), 0u) << bytes;
  }
  EXPECT_EQ(events.log, before);
}

TEST(OpenAiStreamDecoder, AnErrorChunkGoesTheSlowPath) {
  Events events;
  OpenAiStreamDecoder decoder;
  const std::string chunk = R"({"error":{"message":"over \"capacity\"","type":"server_error"}})";
  ASSERT_TRUE(decoder.Decode(Data(chunk), events).ok());
  EXPECT_NE(events.log.find(R"(|error:over "capacity")"), std::string::npos) << events.log;
}

TEST(OpenAiStreamDecoder, RefusesMalformedChunksAndSecondChoices) {
  Events events;
  OpenAiStreamDecoder decoder;
  EXPECT_FALSE(decoder.Decode(Data("{not json"), events).ok());
  OpenAiStreamDecoder second;
  EXPECT_FALSE(
      second.Decode(Data(R"({"choices":[{"index":1,"delta":{"content":"x"}}]})"), events).ok());
}

}  // namespace
}  // namespace turnpike::providers::openai
