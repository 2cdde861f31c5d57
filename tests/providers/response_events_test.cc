// ResponseAccumulator and EmitResponseEvents: a stream's events collected into a whole answer
// (escapes undone, tool calls by index, usage merged), a whole answer sent as a stream's events
// in a stream's order, and the round trip between them.
#include "providers/response_events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace turnpike::providers {
namespace {

StreamEvent Event(EventKind kind, std::string_view text = {}) {
  StreamEvent event;
  event.kind = kind;
  event.text = text;
  return event;
}

StreamEvent Call(int32_t index, std::string_view id, std::string_view name) {
  StreamEvent event = Event(EventKind::kToolCallStart);
  event.tool_index = index;
  event.id = id;
  event.name = name;
  return event;
}

StreamEvent Args(int32_t index, std::string_view text) {
  StreamEvent event = Event(EventKind::kToolArgsDelta, text);
  event.tool_index = index;
  return event;
}

void ExpectSame(const Response& a, const Response& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.reasoning, b.reasoning);
  EXPECT_EQ(a.reasoning_signature, b.reasoning_signature);
  EXPECT_EQ(a.redacted_reasoning, b.redacted_reasoning);
  ASSERT_EQ(a.tool_calls.size(), b.tool_calls.size());
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    EXPECT_EQ(a.tool_calls[i].id, b.tool_calls[i].id);
    EXPECT_EQ(a.tool_calls[i].name, b.tool_calls[i].name);
    EXPECT_EQ(a.tool_calls[i].arguments, b.tool_calls[i].arguments);
  }
  EXPECT_EQ(a.finish, b.finish);
  EXPECT_EQ(a.stop_sequence, b.stop_sequence);
  EXPECT_EQ(a.usage.prompt_tokens, b.usage.prompt_tokens);
  EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
  EXPECT_EQ(a.usage.cached_tokens, b.usage.cached_tokens);
  EXPECT_EQ(a.usage.cache_creation_tokens, b.usage.cache_creation_tokens);
  EXPECT_EQ(a.usage.reasoning_tokens, b.usage.reasoning_tokens);
}

// Keeps each event's kind and strings.
struct Kept {
  EventKind kind;
  int32_t tool_index;
  std::string text, id, name, model, stop_sequence;
  TokenUsage usage;
};

class Keep final : public EventSink {
 public:
  void OnEvent(const StreamEvent& e) override {
    events.push_back({e.kind, e.tool_index, std::string(e.text), std::string(e.id),
                      std::string(e.name), std::string(e.model), std::string(e.stop_sequence),
                      e.usage});
  }
  std::vector<Kept> events;
};

Response Full() {
  Response response;
  response.id = "msg_\"1\"";
  response.model = "model/x";
  response.text = "Line one\nsays \"hi\" \xC3\xA9\xF0\x9F\x98\x80";
  response.reasoning = "think\tabout it";
  response.reasoning_signature = "sig+/==";
  response.redacted_reasoning = {"blob-1", "blob\\2"};
  response.tool_calls = {{"call_a", "lookup", R"({"q":"a \"b\""})"}, {"call_b", "noop", ""}};
  response.finish = FinishReason::kStopSequence;
  response.stop_sequence = "\nEND";
  response.usage = {12, 30, 4, 2, 9};
  return response;
}

TEST(ResponseAccumulator, CollectsAStreamIntoTheWholeAnswerUnescaped) {
  ResponseAccumulator accumulator;
  StreamEvent start = Event(EventKind::kStart);
  start.id = "msg_1";
  start.model = "claude-x";
  start.usage.prompt_tokens = 10;
  start.usage.cached_tokens = 3;
  accumulator.OnEvent(start);
  accumulator.OnEvent(Event(EventKind::kReasoningDelta, "step \\\"one\\\""));
  accumulator.OnEvent(Event(EventKind::kReasoningDelta, ", two"));
  accumulator.OnEvent(Event(EventKind::kReasoningSignature, "first"));
  accumulator.OnEvent(Event(EventKind::kReasoningSignature, "last"));
  accumulator.OnEvent(Event(EventKind::kRedactedReasoning, "enc"));
  accumulator.OnEvent(Event(EventKind::kTextDelta, "Hello\\n"));
  accumulator.OnEvent(Event(EventKind::kTextDelta, "caf\\u00e9 \\ud83d\\ude00"));
  accumulator.OnEvent(Call(3, "call_3", "get"));
  accumulator.OnEvent(Args(3, "{\\\"a\\\":"));
  accumulator.OnEvent(Call(1, "call_1", "put"));
  accumulator.OnEvent(Args(3, "1}"));
  accumulator.OnEvent(Args(7, "{}"));  // never started
  StreamEvent finish = Event(EventKind::kFinish);
  finish.finish = FinishReason::kToolCalls;
  accumulator.OnEvent(finish);
  StreamEvent usage = Event(EventKind::kUsage);
  usage.usage.completion_tokens = 20;
  usage.usage.reasoning_tokens = 5;
  accumulator.OnEvent(usage);
  accumulator.OnEvent(Event(EventKind::kEnd));

  Result<Response> taken = accumulator.Take();
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  Response expected;
  expected.id = "msg_1";
  expected.model = "claude-x";
  expected.text = "Hello\ncaf\xC3\xA9 \xF0\x9F\x98\x80";
  expected.reasoning = "step \"one\", two";
  expected.reasoning_signature = "last";
  expected.redacted_reasoning = {"enc"};
  expected.tool_calls = {{"call_3", "get", R"({"a":1})"}, {"call_1", "put", ""}, {"", "", "{}"}};
  expected.finish = FinishReason::kToolCalls;
  expected.usage = {10, 20, 3, -1, 5};  // the start's counts kept, the later ones added
  ExpectSame(*taken, expected);

  // Taken: the accumulator starts over.
  Result<Response> again = accumulator.Take();
  ASSERT_TRUE(again.ok());
  ExpectSame(*again, Response{});
}

TEST(ResponseAccumulator, AStringThatIsNotEscapedJsonTextFailsTake) {
  for (std::string_view bad : {"\\x", "\\ud83d alone", "\xC3", "tab\x01"}) {
    ResponseAccumulator accumulator;
    accumulator.OnEvent(Event(EventKind::kTextDelta, bad));
    Result<Response> taken = accumulator.Take();
    ASSERT_FALSE(taken.ok()) << bad;
    EXPECT_EQ(taken.error().code, ErrorCode::kUpstreamBadResponse);
  }
}

TEST(EmitResponseEvents, SendsAWholeAnswerInAStreamsOrderWithItsStringsEscaped) {
  Keep keep;
  EmitResponseEvents(Full(), keep);
  const std::vector<EventKind> kinds = {EventKind::kStart,
                                        EventKind::kReasoningDelta,
                                        EventKind::kReasoningSignature,
                                        EventKind::kRedactedReasoning,
                                        EventKind::kRedactedReasoning,
                                        EventKind::kTextDelta,
                                        EventKind::kToolCallStart,
                                        EventKind::kToolArgsDelta,
                                        EventKind::kToolCallStart,
                                        EventKind::kFinish,
                                        EventKind::kUsage,
                                        EventKind::kEnd};
  ASSERT_EQ(keep.events.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(keep.events[i].kind, kinds[i]) << i;
  EXPECT_EQ(keep.events[0].id, "msg_\\\"1\\\"");
  EXPECT_EQ(keep.events[0].model, "model/x");
  // The start knows the prompt's counts only.
  EXPECT_EQ(keep.events[0].usage.prompt_tokens, 12);
  EXPECT_EQ(keep.events[0].usage.cached_tokens, 4);
  EXPECT_EQ(keep.events[0].usage.completion_tokens, -1);
  EXPECT_EQ(keep.events[1].text, "think\\tabout it");
  EXPECT_EQ(keep.events[4].text, "blob\\\\2");
  EXPECT_EQ(keep.events[5].text, "Line one\\nsays \\\"hi\\\" \xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(keep.events[6].tool_index, 0);
  EXPECT_EQ(keep.events[7].text, R"({\"q\":\"a \\\"b\\\"\"})");
  EXPECT_EQ(keep.events[8].tool_index, 1);
  EXPECT_EQ(keep.events[8].name, "noop");
  EXPECT_EQ(keep.events[9].stop_sequence, "\\nEND");
  EXPECT_EQ(keep.events[10].usage.completion_tokens, 30);
}

TEST(EmitResponseEvents, AnEmptyAnswerIsAStartAFinishAndAnEnd) {
  Keep keep;
  EmitResponseEvents(Response{}, keep);
  ASSERT_EQ(keep.events.size(), 3u);
  EXPECT_EQ(keep.events[0].kind, EventKind::kStart);
  EXPECT_EQ(keep.events[1].kind, EventKind::kFinish);
  EXPECT_EQ(keep.events[2].kind, EventKind::kEnd);
}

TEST(ResponseEvents, AWholeAnswerComesBackFromItsEvents) {
  ResponseAccumulator accumulator;
  EmitResponseEvents(Full(), accumulator);
  Result<Response> taken = accumulator.Take();
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  ExpectSame(*taken, Full());
}

}  // namespace
}  // namespace turnpike::providers
