// The stream decoder on its own: the events each Gemini chunk gives, in order, and what ends
// the stream with an error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "providers/gemini/stream_decoder.h"

namespace turnpike::providers::gemini {
namespace {

// One decoded event, with its views copied.
struct Seen {
  EventKind kind;
  FinishReason finish = FinishReason::kNone;
  int32_t tool_index = 0;
  std::string text, id, name, model;
  TokenUsage usage;
  ErrorCode error = ErrorCode::kInternal;
};

class Recorder : public EventSink {
 public:
  void OnEvent(const StreamEvent& e) override {
    Seen seen{e.kind,
              e.finish,
              e.tool_index,
              std::string(e.text),
              std::string(e.id),
              std::string(e.name),
              std::string(e.model),
              e.usage};
    if (e.error != nullptr) seen.error = e.error->code;
    events.push_back(std::move(seen));
  }
  std::vector<Seen> events;
};

Status Feed(GeminiStreamDecoder& decoder, std::string_view data, Recorder& sink) {
  stream::SseEvent event;
  event.data = data;
  event.has_data = true;
  return decoder.Decode(event, sink);
}

std::vector<EventKind> Kinds(const Recorder& sink) {
  std::vector<EventKind> kinds;
  for (const Seen& seen : sink.events) kinds.push_back(seen.kind);
  return kinds;
}

TEST(GeminiStreamDecoder, StartsOnceReadsThoughtsAsReasoningAndEndsAtTheFinishReason) {
  GeminiStreamDecoder decoder;
  Recorder sink;
  ASSERT_TRUE(Feed(decoder, R"({"candidates":[{"content":{"parts":[
      {"text":"thinking...","thought":true},{"text":"Hi"}],"role":"model"}}],
      "modelVersion":"gemini-2.5-pro","responseId":"r1"})",
                   sink)
                  .ok());
  ASSERT_TRUE(Feed(decoder, R"({"candidates":[{"content":{"parts":[{"text":" \"there\""}]},
      "finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":4,
      "thoughtsTokenCount":6,"toolUsePromptTokenCount":3,"cachedContentTokenCount":8},
      "modelVersion":"gemini-2.5-pro","responseId":"r1"})",
                   sink)
                  .ok());
  // Chunks after the end are ignored.
  ASSERT_TRUE(
      Feed(decoder, R"({"candidates":[{"content":{"parts":[{"text":"late"}]}}]})", sink).ok());
  EXPECT_EQ(Kinds(sink),
            (std::vector<EventKind>{EventKind::kStart, EventKind::kReasoningDelta,
                                    EventKind::kTextDelta, EventKind::kTextDelta,
                                    EventKind::kFinish, EventKind::kUsage, EventKind::kEnd}));
  EXPECT_EQ(sink.events[0].id, "r1");
  EXPECT_EQ(sink.events[0].model, "gemini-2.5-pro");
  EXPECT_EQ(sink.events[1].text, "thinking...");
  EXPECT_EQ(sink.events[2].text, "Hi");
  EXPECT_EQ(sink.events[3].text, R"( \"there\")");  // escaped form, untouched
  EXPECT_EQ(sink.events[4].finish, FinishReason::kStop);
  const TokenUsage& usage = decoder.usage();
  EXPECT_EQ(usage.prompt_tokens, 13);      // prompt + tool-use prompt
  EXPECT_EQ(usage.completion_tokens, 10);  // candidates + thoughts
  EXPECT_EQ(usage.cached_tokens, 8);
  EXPECT_EQ(usage.cache_creation_tokens, -1);
  EXPECT_EQ(usage.reasoning_tokens, 6);
  EXPECT_EQ(sink.events[5].usage.completion_tokens, 10);
}

TEST(GeminiStreamDecoder, FunctionCallsAreNumberedAcrossChunksWithSynthesizedIds) {
  GeminiStreamDecoder decoder;
  Recorder sink;
  ASSERT_TRUE(Feed(decoder, R"({"candidates":[{"content":{"parts":[
      {"functionCall":{"name":"now"}}]}}],"responseId":"rid"})",
                   sink)
                  .ok());
  ASSERT_TRUE(Feed(decoder, R"({"candidates":[{"content":{"parts":[
      {"functionCall":{"name":"f","args":{"q":"a\"b","n":[1, 2]}}},
      {"functionCall":{"id":"given","name":"g","args":{}}}]},"finishReason":"STOP"}]})",
                   sink)
                  .ok());
  ASSERT_EQ(sink.events.size(), 9u);
  EXPECT_EQ(sink.events[1].kind, EventKind::kToolCallStart);
  EXPECT_EQ(sink.events[1].id, "call_rid_0");
  EXPECT_EQ(sink.events[1].name, "now");
  EXPECT_EQ(sink.events[2].kind, EventKind::kToolArgsDelta);
  EXPECT_EQ(sink.events[2].text, "{}");
  EXPECT_EQ(sink.events[3].id, "call_rid_1");
  EXPECT_EQ(sink.events[3].tool_index, 1);
  // The args object's JSON text, escaped as a JSON string's content.
  EXPECT_EQ(sink.events[4].text, R"({\"q\":\"a\\\"b\",\"n\":[1, 2]})");
  EXPECT_EQ(sink.events[4].tool_index, 1);
  EXPECT_EQ(sink.events[5].id, "given");
  EXPECT_EQ(sink.events[6].tool_index, 2);
  EXPECT_EQ(sink.events[7].kind, EventKind::kFinish);
  EXPECT_EQ(sink.events[7].finish, FinishReason::kToolCalls);
  EXPECT_EQ(sink.events[8].kind, EventKind::kEnd);  // no usage reported: no usage event
}

TEST(GeminiStreamDecoder, CallIdsCarryTheThoughtSignature) {
  GeminiStreamDecoder decoder;
  Recorder sink;
  // Parallel calls: Gemini signs the first only. A text part's signature and a part that is
  // only a signature are not carried.
  ASSERT_TRUE(Feed(decoder, R"({"candidates":[{"content":{"parts":[
      {"text":"Let me check.","thoughtSignature":"dGV4dA=="},
      {"functionCall":{"name":"f","args":{}},"thoughtSignature":"Cik+/w\/QAA=="},
      {"functionCall":{"id":"fc_ts_1","name":"g","args":{}}},
      {"functionCall":{"id":"a\u005fts_b","name":"h","args":{}},"thoughtSignature":"AAAA"},
      {"thoughtSignature":"c2lnbmF0dXJl"}]},"finishReason":"STOP"}],"responseId":"r"})",
                   sink)
                  .ok());
  ASSERT_EQ(Kinds(sink), (std::vector<EventKind>{
                             EventKind::kStart, EventKind::kTextDelta, EventKind::kToolCallStart,
                             EventKind::kToolArgsDelta, EventKind::kToolCallStart,
                             EventKind::kToolArgsDelta, EventKind::kToolCallStart,
                             EventKind::kToolArgsDelta, EventKind::kFinish, EventKind::kEnd}));
  EXPECT_EQ(sink.events[1].text, "Let me check.");
  EXPECT_EQ(sink.events[2].id, "call_r_0_ts_Cik-_w_QAA");
  EXPECT_EQ(sink.events[4].id, "fc-ts_1");           // defused: not read as a signature next turn
  EXPECT_EQ(sink.events[6].id, "call_r_2_ts_AAAA");  // an escaped id is replaced
  EXPECT_EQ(sink.events[8].finish, FinishReason::kToolCalls);
}

TEST(GeminiStreamDecoder, FinishReasonsMap) {
  for (const auto& [reason, finish] :
       {std::pair{"MAX_TOKENS", FinishReason::kLength},
        std::pair{"SAFETY", FinishReason::kContentFilter},
        std::pair{"RECITATION", FinishReason::kContentFilter},
        std::pair{"PROHIBITED_CONTENT", FinishReason::kContentFilter},
        std::pair{"SPII", FinishReason::kContentFilter},
        std::pair{"BLOCKLIST", FinishReason::kContentFilter},
        std::pair{"MALFORMED_FUNCTION_CALL", FinishReason::kStop},
        std::pair{"OTHER", FinishReason::kStop}}) {
    GeminiStreamDecoder decoder;
    Recorder sink;
    const std::string chunk =
        std::string(R"({"candidates":[{"finishReason":")") + reason + R"("}]})";
    ASSERT_TRUE(Feed(decoder, chunk, sink).ok()) << reason;
    ASSERT_EQ(sink.events.size(), 3u) << reason;
    EXPECT_EQ(sink.events[1].finish, finish) << reason;
  }
}

TEST(GeminiStreamDecoder, BlockedPromptEndsAsContentFilter) {
  GeminiStreamDecoder decoder;
  Recorder sink;
  ASSERT_TRUE(Feed(decoder, R"({"promptFeedback":{"blockReason":"SAFETY"},
      "usageMetadata":{"promptTokenCount":7}})",
                   sink)
                  .ok());
  EXPECT_EQ(Kinds(sink), (std::vector<EventKind>{EventKind::kStart, EventKind::kFinish,
                                                 EventKind::kUsage, EventKind::kEnd}));
  EXPECT_EQ(sink.events[1].finish, FinishReason::kContentFilter);
  EXPECT_EQ(decoder.usage().prompt_tokens, 7);
}

TEST(GeminiStreamDecoder, ErrorChunkIsTheStreamsError) {
  GeminiStreamDecoder decoder;
  Recorder sink;
  ASSERT_TRUE(Feed(decoder, R"({"error":{"code":429,"message":"Quota \"x\"",
      "status":"RESOURCE_EXHAUSTED"}})",
                   sink)
                  .ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].kind, EventKind::kError);
  EXPECT_EQ(sink.events[0].error, ErrorCode::kRateLimited);
  ASSERT_TRUE(Feed(decoder, R"({"candidates":[{"finishReason":"STOP"}]})", sink).ok());
  EXPECT_EQ(sink.events.size(), 1u);  // nothing follows an error
}

TEST(GeminiStreamDecoder, WhatCannotBeExpressedIsAnError) {
  for (std::string_view chunk : {
           std::string_view("not json"),
           std::string_view(R"(["an array"])"),
           std::string_view(R"({"candidates":[{"content":{"parts":[
               {"inlineData":{"mimeType":"image/png","data":"AA=="}}]}}]})"),
           std::string_view(R"({"candidates":[{"content":{"parts":[
               {"executableCode":{"language":"PYTHON","code":"1"}}]}}]})"),
           std::string_view(R"({"candidates":[{"index":0},{"index":1}]})"),
           std::string_view(R"({"candidates":[{"content":{"parts":[
               {"functionCall":{"name":"f","args":[1]}}]}}]})"),
           std::string_view(R"({"candidates":[{"content":{"parts":[
               {"functionCall":{"name":"f"},"thoughtSignature":"not base64!"}]}}]})"),
       }) {
    GeminiStreamDecoder decoder;
    Recorder sink;
    Status status = Feed(decoder, chunk, sink);
    ASSERT_FALSE(status.ok()) << chunk;
    EXPECT_EQ(status.error().code, ErrorCode::kUpstreamBadResponse) << chunk;
  }
}

}  // namespace
}  // namespace turnpike::providers::gemini
