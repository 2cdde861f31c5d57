// Replay across forms, in every client dialect that has an encoder: a streamed answer served
// whole is what the client's sink renders for the same answer whole; a whole answer served as
// a stream decodes, with the dialect's own decoder, back to the same answer.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model_call/recorder.h"
#include "model_call/recording.h"
#include "model_call/replay.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai/stream_codec.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/response_events.h"
#include "scripted_call.h"
#include "stream/sse_parser.h"

namespace turnpike::model_call {
namespace {

namespace json = boost::json;
using providers::EventKind;
using providers::FinishReason;
using testing::ClientSink;
using testing::ScriptedCall;

constexpr size_t kRoomy = 1 << 20;
constexpr size_t kAll = 1 << 30;

const providers::openai::OpenAiProvider kOpenAi;
const providers::anthropic::AnthropicProvider kAnthropic;
const providers::openai_responses::ResponsesProvider kResponses;
const providers::gemini::GeminiProvider kGemini;
const providers::cohere::CohereProvider kCohere;
const providers::openai_completions::CompletionsProvider kCompletions;

// A client dialect and what its client asked (Gemini's thoughts only when asked for).
struct Dialect {
  const providers::Provider* provider;
  std::string_view client_body;
};

const std::vector<Dialect>& Dialects() {
  static const std::vector<Dialect> dialects = {
      {&kOpenAi, ""},
      {&kAnthropic, ""},
      {&kResponses, R"({"model":"m","input":"hi"})"},
      {&kGemini, R"({"generationConfig":{"thinkingConfig":{"includeThoughts":true}}})"},
      {&kCohere, ""},
      {&kCompletions, ""}};
  return dialects;
}

providers::EncoderOptions Options(const Dialect& dialect, bool include_usage = true) {
  providers::EncoderOptions options;
  options.created = 1700000000;
  options.include_usage = include_usage;
  options.client_body = dialect.client_body;
  return options;
}

ReplayOptions Serve(const Dialect& dialect, bool stream) {
  return {{dialect.provider->name(), stream}, dialect.provider, Options(dialect)};
}

std::vector<std::string> ReplayAll(const Recording& recording, const ReplayOptions& options,
                                   std::optional<Error>* error = nullptr) {
  Replay replay(recording, options);
  std::vector<std::string> frames;
  for (;;) {
    ReplayStep step = replay.Next(kAll);
    for (std::string_view frame : step.frames) frames.emplace_back(frame);
    if (step.end) {
      if (error != nullptr && step.error != nullptr) *error = *step.error;
      return frames;
    }
    EXPECT_FALSE(step.frames.empty()) << "a complete recording never makes a replay wait";
    if (step.frames.empty()) return frames;
  }
}

providers::StreamEvent Event(EventKind kind, std::string_view text = {}) {
  providers::StreamEvent event;
  event.kind = kind;
  event.text = text;
  return event;
}

providers::StreamEvent Tool(EventKind kind, int32_t index, std::string_view text = {}) {
  providers::StreamEvent event = Event(kind, text);
  event.tool_index = index;
  return event;
}

// A streamed answer with every kind of content, its strings escaped and split as streams
// split them, and the same answer whole.
std::vector<providers::StreamEvent> StreamedEvents() {
  std::vector<providers::StreamEvent> events;
  providers::StreamEvent start = Event(EventKind::kStart);
  start.id = "msg_42";
  start.model = "model-x";
  start.usage.prompt_tokens = 20;
  start.usage.cached_tokens = 5;
  events.push_back(start);
  events.push_back(Event(EventKind::kReasoningDelta, "Let me \\\"think\\\""));
  events.push_back(Event(EventKind::kReasoningDelta, " more"));
  events.push_back(Event(EventKind::kReasoningSignature, "c2ln"));
  events.push_back(Event(EventKind::kRedactedReasoning, "opaque=="));
  events.push_back(Event(EventKind::kTextDelta, "Hello, "));
  events.push_back(Event(EventKind::kTextDelta, "w\\u00f6rld\\n"));
  providers::StreamEvent call = Tool(EventKind::kToolCallStart, 0);
  call.id = "call_1";
  call.name = "get_weather";
  events.push_back(call);
  events.push_back(Tool(EventKind::kToolArgsDelta, 0, "{\\\"city\\\":"));
  events.push_back(Tool(EventKind::kToolArgsDelta, 0, "\\\"Paris\\\"}"));
  call.tool_index = 1;
  call.id = "call_2";
  call.name = "get_time";
  events.push_back(call);
  events.push_back(Tool(EventKind::kToolArgsDelta, 1, "{}"));
  providers::StreamEvent finish = Event(EventKind::kFinish);
  finish.finish = FinishReason::kToolCalls;
  events.push_back(finish);
  providers::StreamEvent usage = Event(EventKind::kUsage);
  usage.usage = {20, 15, 5, -1, 4};
  events.push_back(usage);
  events.push_back(Event(EventKind::kEnd));
  return events;
}

providers::Response WholeAnswer() {
  providers::Response response;
  response.id = "msg_42";
  response.model = "model-x";
  response.text = "Hello, w\xC3\xB6rld\n";
  response.reasoning = "Let me \"think\" more";
  response.reasoning_signature = "c2ln";
  response.redacted_reasoning = {"opaque=="};
  response.tool_calls = {{"call_1", "get_weather", R"({"city":"Paris"})"},
                         {"call_2", "get_time", "{}"}};
  response.finish = FinishReason::kToolCalls;
  response.usage = {20, 15, 5, -1, 4};
  return response;
}

json::value Parsed(std::string_view body) {
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  EXPECT_FALSE(ec) << body;
  return value;
}

// A streamed answer recorded as the cache's recorder records it; a translated one with an
// OpenAI client beside it reporting its form's frames.
void RecordStream(Recording& recording, const AnswerStart& start, const Error* end = nullptr) {
  Recorder recorder(recording);
  ClientSink client(kOpenAi, Options(Dialects()[0]), &recording);
  std::vector<AnswerSink*> sinks = {&recorder};
  if (!start.identity) sinks.push_back(&client);
  ScriptedCall call(sinks);
  call.Start(start);
  for (const providers::StreamEvent& event : StreamedEvents()) call.Read({event});
  call.End(end);
}

TEST(ReplayForms, AStreamedAnswerServedWholeIsTheClientsWholeRenderingInEveryDialect) {
  Recording recording(kRoomy);
  RecordStream(recording, testing::TranslatedStream());
  const providers::Response whole = WholeAnswer();
  for (const Dialect& dialect : Dialects()) {
    SCOPED_TRACE(dialect.provider->name());
    std::optional<Error> error;
    const std::vector<std::string> frames = ReplayAll(recording, Serve(dialect, false), &error);
    EXPECT_FALSE(error.has_value()) << error->message;
    ASSERT_EQ(frames.size(), 1u);
    // What the client's sink renders for the same answer whole (client_sink.cc).
    const std::string expected = dialect.provider->RenderWholeResponse(whole, Options(dialect));
    EXPECT_EQ(Parsed(frames[0]), Parsed(expected));
  }
}

TEST(ReplayForms, AStreamIsServedWholeOnlyOnceComplete) {
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ScriptedCall call({&recorder});
  Replay replay(recording, Serve(Dialects()[1], false));
  call.Start(testing::TranslatedStream());
  const std::vector<providers::StreamEvent> events = StreamedEvents();
  for (const providers::StreamEvent& event : events) {
    call.Read({event});
    const ReplayStep step = replay.Next(kAll);
    EXPECT_TRUE(step.frames.empty());
    EXPECT_FALSE(step.end);
  }
  call.End(nullptr);
  const ReplayStep step = replay.Next(kAll);
  ASSERT_TRUE(step.end);
  EXPECT_EQ(step.error, nullptr);
  ASSERT_EQ(step.frames.size(), 1u);
  EXPECT_EQ(Parsed(step.frames[0]),
            Parsed(kAnthropic.RenderWholeResponse(WholeAnswer(), Options(Dialects()[1]))));
}

TEST(ReplayForms, AnIdentityStreamServedWholeIsDecodedFromItsEventsOrItsFrames) {
  AnswerStart start = testing::TranslatedStream();
  start.identity = true;
  start.dialect = "openai";
  start.events = true;  // a recorder that wants events: the call decoded them
  Recording with_events(kRoomy);
  RecordStream(with_events, start);
  std::optional<Error> error;
  const std::vector<std::string> frames =
      ReplayAll(with_events, Serve(Dialects()[0], false), &error);
  EXPECT_FALSE(error.has_value());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(Parsed(frames[0]),
            Parsed(kOpenAi.RenderWholeResponse(WholeAnswer(), Options(Dialects()[0]))));

  // Without events (a fan-out's recording): the client's own dialect is decoded from the
  // recorded frames, which are what the OpenAI encoder sends for the same events.
  start.events = false;
  Recording without(kRoomy);
  Recorder recorder(without);
  ScriptedCall call({&recorder});
  call.Start(start);
  std::string wire;
  auto encoder = kOpenAi.NewEncoder(Options(Dialects()[0]));
  encoder->set_output(wire);
  for (const providers::StreamEvent& event : StreamedEvents()) {
    const size_t before = wire.size();
    encoder->OnEvent(event);
    if (wire.size() > before) call.Read({}, {{wire.substr(before), FrameKind::kData}});
  }
  call.End(nullptr);
  const std::vector<std::string> decoded = ReplayAll(without, Serve(Dialects()[0], false), &error);
  EXPECT_FALSE(error.has_value()) << error->message;
  ASSERT_EQ(decoded.size(), 1u);
  const json::value got = Parsed(decoded[0]);
  const json::value want = Parsed(frames[0]);
  EXPECT_EQ(got.at("choices").at(0).at("message").at("content"),
            want.at("choices").at(0).at("message").at("content"));
  EXPECT_EQ(got.at("choices").at(0).at("message").at("tool_calls"),
            want.at("choices").at(0).at("message").at("tool_calls"));
  EXPECT_EQ(got.at("usage").at("completion_tokens"), want.at("usage").at("completion_tokens"));

  // Another dialect cannot be rendered from those frames.
  EXPECT_TRUE(ReplayAll(without, Serve(Dialects()[1], false), &error).empty());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
}

TEST(ReplayForms, AFailedOrTruncatedStreamIsNotServedWhole) {
  const Error cut{ErrorCode::kUpstreamTimeout, "idle", ""};
  Recording failed(kRoomy);
  RecordStream(failed, testing::TranslatedStream(), &cut);
  std::optional<Error> error;
  EXPECT_TRUE(ReplayAll(failed, Serve(Dialects()[0], false), &error).empty());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUpstreamTimeout);

  Recording truncated(256);
  RecordStream(truncated, testing::TranslatedStream());
  ASSERT_TRUE(truncated.progress().truncated);
  error.reset();
  EXPECT_TRUE(ReplayAll(truncated, Serve(Dialects()[0], false), &error).empty());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
}

// A decoded stream: what the dialect's decoder reads from the replayed bytes.
providers::Response Decode(const providers::Provider& provider, std::string_view bytes) {
  auto decoder = provider.NewDecoder();
  providers::ResponseAccumulator accumulator;
  stream::SseParser parser;
  Status fed = parser.Feed(bytes, [&](const stream::SseEvent& event) {
    Status decoded = decoder->Decode(event, accumulator);
    EXPECT_TRUE(decoded.ok()) << decoded.error().message << " in " << event.raw;
  });
  EXPECT_TRUE(fed.ok());
  Result<providers::Response> response = accumulator.Take();
  EXPECT_TRUE(response.ok());
  return response.ok() ? *response : providers::Response{};
}

// The legacy completions API has no decoder (client role only): its chunks read here.
providers::Response DecodeCompletions(std::string_view bytes) {
  providers::Response response;
  stream::SseParser parser;
  Status fed = parser.Feed(bytes, [&](const stream::SseEvent& event) {
    if (event.data == "[DONE]") return;
    const json::object chunk = Parsed(event.data).as_object();
    for (const json::value& choice : chunk.at("choices").as_array()) {
      response.text += choice.at("text").as_string();
      const json::value& finish = choice.at("finish_reason");
      if (finish.is_string()) {
        response.finish = providers::openai::ParseFinishReason(finish.as_string());
      }
    }
    if (const json::value* usage = chunk.if_contains("usage"); usage && usage->is_object()) {
      response.usage.prompt_tokens = usage->at("prompt_tokens").as_int64();
      response.usage.completion_tokens = usage->at("completion_tokens").as_int64();
    }
  });
  EXPECT_TRUE(fed.ok());
  return response;
}

// What a dialect can say of an answer: its own whole rendering, read back.
providers::Response Expressible(const Dialect& dialect, const providers::Response& response) {
  Result<providers::Response> read = dialect.provider->ParseResponse(
      dialect.provider->RenderWholeResponse(response, Options(dialect)));
  EXPECT_TRUE(read.ok()) << read.error().message;
  return read.ok() ? *read : providers::Response{};
}

void ExpectSameAnswer(const providers::Response& got, const providers::Response& expected) {
  EXPECT_EQ(got.text, expected.text);
  EXPECT_EQ(got.finish, expected.finish);
  EXPECT_EQ(got.usage.prompt_tokens, expected.usage.prompt_tokens);
  EXPECT_EQ(got.usage.completion_tokens, expected.usage.completion_tokens);
  ASSERT_EQ(got.tool_calls.size(), expected.tool_calls.size());
  for (size_t i = 0; i < got.tool_calls.size(); ++i) {
    EXPECT_EQ(got.tool_calls[i].name, expected.tool_calls[i].name);
    EXPECT_EQ(Parsed(got.tool_calls[i].arguments), Parsed(expected.tool_calls[i].arguments));
  }
}

// What a fresh encoder renders for the answer's events, one frame per event that renders.
std::vector<std::string> EncodedFrames(const Dialect& dialect,
                                       const providers::Response& response) {
  class Frames final : public providers::EventSink {
   public:
    explicit Frames(std::unique_ptr<providers::StreamEncoder> encoder)
        : encoder_(std::move(encoder)) {
      encoder_->set_output(out_);
    }
    void OnEvent(const providers::StreamEvent& event) override {
      out_.clear();
      encoder_->OnEvent(event);
      if (!out_.empty()) frames.push_back(out_);
    }
    std::vector<std::string> frames;

   private:
    std::unique_ptr<providers::StreamEncoder> encoder_;
    std::string out_;
  };
  Frames frames(dialect.provider->NewEncoder(Options(dialect)));
  providers::EmitResponseEvents(response, frames);
  return frames.frames;
}

void RecordWhole(Recording& recording, const model_call::WholeAnswer& answer,
                 std::string_view dialect, bool identity) {
  AnswerStart start;
  start.dialect = dialect;
  start.identity = identity;
  start.content_type = "application/json";
  Recorder recorder(recording);
  ScriptedCall call({&recorder});
  call.Start(start);
  call.Whole(answer);
  call.End(nullptr);
}

TEST(ReplayForms, AWholeAnswerServedAsAStreamDecodesBackToItInEveryDialect) {
  const providers::Response response = WholeAnswer();
  Recording recording(kRoomy);
  RecordWhole(recording, {200, "application/json", {}, &response}, "anthropic", false);
  for (const Dialect& dialect : Dialects()) {
    SCOPED_TRACE(dialect.provider->name());
    std::optional<Error> error;
    const std::vector<std::string> frames = ReplayAll(recording, Serve(dialect, true), &error);
    EXPECT_FALSE(error.has_value()) << error->message;
    EXPECT_EQ(frames, EncodedFrames(dialect, response));
    std::string bytes;
    for (const std::string& frame : frames) bytes += frame;
    if (dialect.provider == &kCompletions) {
      providers::Response expected;  // text only: a completion has no tool calls
      expected.text = response.text;
      expected.finish = FinishReason::kToolCalls;
      expected.usage = response.usage;
      ExpectSameAnswer(DecodeCompletions(bytes), expected);
      continue;
    }
    // Not vacuous: every one of these dialects says the text and the calls.
    const providers::Response expected = Expressible(dialect, response);
    EXPECT_EQ(expected.text, response.text);
    EXPECT_EQ(expected.tool_calls.size(), response.tool_calls.size());
    EXPECT_GT(expected.usage.completion_tokens, 0);
    ExpectSameAnswer(Decode(*dialect.provider, bytes), expected);
  }
}

TEST(ReplayForms, AnIdentityWholeAnswerIsReadByTheClientsParserAndStreamed) {
  const providers::Response response = WholeAnswer();
  const Dialect& openai = Dialects()[0];
  const std::string body = kOpenAi.RenderWholeResponse(response, Options(openai));
  Recording recording(kRoomy);
  RecordWhole(recording, {200, "application/json", body, nullptr}, "openai", true);

  std::optional<Error> error;
  const std::vector<std::string> frames = ReplayAll(recording, Serve(openai, true), &error);
  EXPECT_FALSE(error.has_value());
  std::string bytes;
  for (const std::string& frame : frames) bytes += frame;
  ExpectSameAnswer(Decode(kOpenAi, bytes), response);
  EXPECT_NE(bytes.find("data: [DONE]"), std::string::npos);

  // Another dialect cannot read these bytes.
  EXPECT_TRUE(ReplayAll(recording, Serve(Dialects()[1], true), &error).empty());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
}

TEST(ReplayForms, AnIdentityErrorServedAsAStreamEndsWithItsErrorAndNoFrame) {
  Recording recording(kRoomy);
  const std::string body = R"({"error":{"message":"slow down","type":"rate_limit_error"}})";
  RecordWhole(recording, {429, "application/json", body, nullptr}, "openai", true);
  std::optional<Error> error;
  EXPECT_TRUE(ReplayAll(recording, Serve(Dialects()[0], true), &error).empty());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kRateLimited);
  EXPECT_EQ(error->message, "slow down");
}

TEST(ReplayForms, AWholeAnswerIsStreamedOnceItIsThereAndWithinEachStepsBudget) {
  const providers::Response response = WholeAnswer();
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ScriptedCall call({&recorder});
  Replay replay(recording, Serve(Dialects()[1], true));
  AnswerStart start;
  start.dialect = "openai";
  call.Start(start);
  ReplayStep step = replay.Next(kAll);
  EXPECT_TRUE(step.frames.empty());
  EXPECT_FALSE(step.end);
  call.Whole({200, "application/json", {}, &response});
  call.End(nullptr);
  // A budget of one byte: one frame per step, never split.
  std::vector<std::string> frames;
  for (size_t steps = 0; steps < 100; ++steps) {
    step = replay.Next(1);
    for (std::string_view frame : step.frames) frames.emplace_back(frame);
    if (step.end) break;
    EXPECT_EQ(step.frames.size(), 1u);
    EXPECT_FALSE(step.drained);
  }
  ASSERT_TRUE(step.end);
  EXPECT_EQ(step.error, nullptr);
  EXPECT_EQ(frames, EncodedFrames(Dialects()[1], response));
}

}  // namespace
}  // namespace turnpike::model_call
