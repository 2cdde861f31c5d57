// GuardSink: events reach the downstream sinks in order with text guarded; held text goes out
// before any other event and before the end; whole answers; identity answers pass; Flush and
// Idle reach every downstream sink and drop those that left.
#include "guard/guard_sink.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "guard_test_util.h"

namespace turnpike::guard {
namespace {

namespace net = boost::asio;
using model_call::AnswerStart;
using model_call::IdentityFrame;
using model_call::WholeAnswer;
using providers::EventKind;
using providers::StreamEvent;
using testing::Turn;

// Writes down every call it gets, strings copied.
class FakeSink final : public model_call::AnswerSink {
 public:
  explicit FakeSink(bool serves = true, bool events = false) : serves_(serves), events_(events) {}

  void OnStart(const AnswerStart& start) override { calls.push_back("start"); }
  void OnEvent(const StreamEvent& event) override {
    switch (event.kind) {
      case EventKind::kTextDelta:
        calls.push_back("text:" + std::string(event.text));
        break;
      case EventKind::kToolCallStart:
        calls.push_back("tool:" + std::string(event.name));
        break;
      case EventKind::kToolArgsDelta:
        calls.push_back("args:" + std::string(event.text));
        break;
      case EventKind::kFinish:
        calls.push_back("finish");
        break;
      case EventKind::kEnd:
        calls.push_back("end-event");
        break;
      default:
        calls.push_back("other");
    }
  }
  void OnFrames(std::span<const IdentityFrame> frames) override {
    for (const IdentityFrame& frame : frames) calls.push_back("frame:" + std::string(frame.bytes));
  }
  void OnWhole(const WholeAnswer& answer) override {
    whole = answer.response;
    calls.push_back("whole:" +
                    (answer.response ? answer.response->text : std::string(answer.body)));
  }
  net::awaitable<bool> Flush() override {
    calls.push_back("flush");
    co_return stay;
  }
  net::awaitable<bool> Idle() override {
    calls.push_back("idle");
    co_return stay;
  }
  void OnEnd(const Error* error) override { calls.push_back(error ? "end:error" : "end"); }
  bool serves_client() const override { return serves_; }
  bool wants_events() const override { return events_; }

  std::vector<std::string> calls;
  const providers::Response* whole = nullptr;
  bool stay = true;

 private:
  const bool serves_;
  const bool events_;
};

bool Await(net::awaitable<bool> step) {
  net::io_context io;
  bool result = false;
  net::co_spawn(io, std::move(step), [&result](std::exception_ptr, bool ok) { result = ok; });
  io.run();
  return result;
}

StreamEvent Text(std::string_view text) {
  StreamEvent event;
  event.kind = EventKind::kTextDelta;
  event.text = text;
  return event;
}

StreamEvent Event(EventKind kind) {
  StreamEvent event;
  event.kind = kind;
  return event;
}

AnswerStart Start(bool stream, bool identity = false) {
  AnswerStart start;
  start.stream = stream;
  start.identity = identity;
  return start;
}

WholeAnswer Whole(const providers::Response& response) {
  WholeAnswer answer;
  answer.response = &response;
  return answer;
}

using Calls = std::vector<std::string>;

TEST(GuardSink, TextIsGuardedAndEverythingElsePassesInOrder) {
  Turn turn;
  GuardSink guard(turn.config, turn.context, turn.report);
  FakeSink client;
  FakeSink recorder(false, true);
  guard.AddDownstream(client);
  guard.AddDownstream(recorder);

  guard.OnStart(Start(true));
  EXPECT_TRUE(Await(guard.Flush()));
  guard.OnEvent(Text("see htt"));
  guard.OnEvent(Text("ps://evil.com/x and "));
  EXPECT_TRUE(Await(guard.Flush()));
  guard.OnEvent(Text("https://docs.example.com/y"));
  guard.OnEvent(Text(" ok"));
  StreamEvent tool = Event(EventKind::kToolCallStart);
  tool.name = "search";
  guard.OnEvent(tool);
  StreamEvent args = Event(EventKind::kToolArgsDelta);
  args.text = R"({\"q\":\"https://evil.com\"})";
  guard.OnEvent(args);
  guard.OnEvent(Event(EventKind::kFinish));
  guard.OnEvent(Event(EventKind::kEnd));
  guard.OnEnd(nullptr);
  EXPECT_TRUE(Await(guard.Flush()));

  const Calls expected = {"start",
                          "flush",
                          "text:see ",
                          "text:[link removed] and ",
                          "flush",
                          "text:https://docs.example.com/y",
                          "text: ok",
                          "tool:search",
                          R"(args:{\"q\":\"https://evil.com\"})",  // not the answer's text
                          "finish",
                          "end-event",
                          "end",
                          "flush"};
  EXPECT_EQ(client.calls, expected);
  EXPECT_EQ(recorder.calls, expected);
  EXPECT_EQ(turn.report.replacements, 1);
  EXPECT_EQ(turn.report.hosts, Calls{"evil.com"});
  EXPECT_FALSE(guard.bypassed());
}

TEST(GuardSink, HeldTextGoesOutBeforeTheNextEventAndBeforeTheEnd) {
  Turn turn;
  GuardSink guard(turn.config, turn.context, turn.report);
  FakeSink client;
  guard.AddDownstream(client);
  guard.OnStart(Start(true));
  guard.OnEvent(Text("see www"));
  StreamEvent tool = Event(EventKind::kToolCallStart);
  tool.name = "f";
  guard.OnEvent(tool);
  guard.OnEvent(Text("go https://evil.co"));
  guard.OnEnd(nullptr);  // a stream cut short: what is held is resolved, then the end
  EXPECT_EQ(client.calls, (Calls{"start", "text:see ", "text:www", "tool:f", "text:go ",
                                 "text:[link removed]", "end"}));
}

TEST(GuardSink, AnEmptyReleaseForwardsNothing) {
  Turn turn;
  GuardSink guard(turn.config, turn.context, turn.report);
  FakeSink client;
  guard.AddDownstream(client);
  guard.OnStart(Start(true));
  guard.OnEvent(Text("https://exa"));
  guard.OnEvent(Text("mple.com"));
  guard.OnEvent(Event(EventKind::kFinish));
  EXPECT_EQ(client.calls, (Calls{"start", "text:https://example.com", "finish"}));
}

TEST(GuardSink, AWholeAnswersTextIsGuardedInACopy) {
  Turn turn;
  GuardSink guard(turn.config, turn.context, turn.report);
  FakeSink client;
  guard.AddDownstream(client);
  providers::Response response;
  response.id = "r1";
  response.text = "see \"https://evil.com/a\". And https://example.com/b";
  response.tool_calls.push_back({"c1", "f", R"({"u":"https://evil.com"})"});
  guard.OnStart(Start(false));
  guard.OnWhole(Whole(response));
  guard.OnEnd(nullptr);
  EXPECT_EQ(client.calls,
            (Calls{"start", "whole:see \"[link removed]\". And https://example.com/b", "end"}));
  ASSERT_NE(client.whole, nullptr);
  EXPECT_NE(client.whole, &response);
  EXPECT_EQ(client.whole->id, "r1");
  EXPECT_EQ(client.whole->tool_calls[0].arguments, R"({"u":"https://evil.com"})");

  // Nothing to replace: the answer itself goes on.
  response.text = "fine https://example.com";
  guard.OnStart(Start(false));
  guard.OnWhole(Whole(response));
  EXPECT_EQ(client.whole, &response);
}

TEST(GuardSink, IdentityAnswersPassUntouchedAndAreReported) {
  Turn turn;
  GuardSink guard(turn.config, turn.context, turn.report);
  FakeSink client;
  guard.AddDownstream(client);
  guard.OnStart(Start(true, true));
  const IdentityFrame frame{"data: https://evil.com\n\n"};
  guard.OnFrames(std::span(&frame, 1));
  EXPECT_EQ(client.calls, (Calls{"start", "frame:data: https://evil.com\n\n"}));
  EXPECT_TRUE(guard.bypassed());
}

TEST(GuardSink, FlushAndIdleDropDownstreamSinksThatLeft) {
  Turn turn;
  GuardSink guard(turn.config, turn.context, turn.report);
  FakeSink client;
  FakeSink recorder(false, true);
  guard.AddDownstream(client);
  guard.AddDownstream(recorder);
  EXPECT_TRUE(guard.serves_client());
  EXPECT_TRUE(guard.wants_events());
  EXPECT_TRUE(Await(guard.Idle()));
  client.stay = false;
  EXPECT_TRUE(Await(guard.Flush()));  // the recorder is still there
  EXPECT_FALSE(guard.serves_client());
  guard.OnEvent(Text("more"));
  EXPECT_EQ(client.calls, (Calls{"idle", "flush"}));
  EXPECT_EQ(recorder.calls, (Calls{"idle", "flush", "text:more"}));
  recorder.stay = false;
  EXPECT_FALSE(Await(guard.Flush()));
  EXPECT_FALSE(guard.wants_events());
}

}  // namespace
}  // namespace turnpike::guard
