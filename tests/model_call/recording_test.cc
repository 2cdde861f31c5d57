// Recording, Recorder and Replay: what is kept, how it is replayed in each form, the cap.
#include "model_call/recording.h"

#include <gtest/gtest.h>

#include "model_call/recorder.h"
#include "model_call/replay.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"
#include "scripted_call.h"

namespace turnpike::model_call {
namespace {

using testing::ClientSink;
using testing::ScriptedAnswer;
using testing::ScriptedCall;

constexpr size_t kRoomy = 1 << 20;
constexpr size_t kAll = 1 << 30;

const providers::openai::OpenAiProvider kOpenAi;
const providers::anthropic::AnthropicProvider kAnthropic;

providers::EncoderOptions Options(bool include_usage = false) {
  providers::EncoderOptions options;
  options.created = 1700000000;
  options.include_usage = include_usage;
  return options;
}

// Collects events with their strings copied.
struct CapturedEvent {
  providers::EventKind kind;
  providers::FinishReason finish;
  int32_t tool_index;
  std::string text, id, name, model, stop_sequence;
  providers::TokenUsage usage;
  std::optional<Error> error;
};

class Capture final : public providers::EventSink {
 public:
  void OnEvent(const providers::StreamEvent& e) override {
    CapturedEvent c{e.kind,
                    e.finish,
                    e.tool_index,
                    std::string(e.text),
                    std::string(e.id),
                    std::string(e.name),
                    std::string(e.model),
                    std::string(e.stop_sequence),
                    e.usage,
                    {}};
    if (e.error != nullptr) c.error = *e.error;
    events.push_back(std::move(c));
  }
  std::vector<CapturedEvent> events;
};

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

std::string Join(const std::vector<std::string>& frames) {
  std::string all;
  for (const std::string& frame : frames) all += frame;
  return all;
}

TEST(Recording, ReplaysTheSameEventSequenceAsViewsIntoItself) {
  std::vector<providers::StreamEvent> events(6);
  events[0].kind = providers::EventKind::kStart;
  events[0].id = "msg_1";
  events[0].model = "m";
  events[0].usage.prompt_tokens = 3;
  events[0].usage.cached_tokens = 1;
  events[1].kind = providers::EventKind::kReasoningDelta;
  events[1].text = "think \\\"hard\\\"";
  events[2].kind = providers::EventKind::kToolCallStart;
  events[2].tool_index = 2;
  events[2].id = "call_9";
  events[2].name = "lookup";
  events[3].kind = providers::EventKind::kFinish;
  events[3].finish = providers::FinishReason::kStopSequence;
  events[3].stop_sequence = "END";
  events[4].kind = providers::EventKind::kUsage;
  events[4].usage.prompt_tokens = 3;
  events[4].usage.completion_tokens = 8;
  const Error upstream{ErrorCode::kUpstreamBadResponse, "cut", "p"};
  events[5].kind = providers::EventKind::kError;
  events[5].error = &upstream;

  Recording recording(kRoomy);
  Recorder recorder(recording);
  recorder.OnStart(testing::TranslatedStream());
  for (const auto& event : events) recorder.OnEvent(event);
  recorder.OnEnd(&upstream);

  Capture direct, replayed;
  for (const auto& event : events) direct.OnEvent(event);
  EXPECT_EQ(recording.Replay(replayed), events.size());
  ASSERT_EQ(replayed.events.size(), direct.events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const CapturedEvent& a = direct.events[i];
    const CapturedEvent& b = replayed.events[i];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.finish, b.finish);
    EXPECT_EQ(a.tool_index, b.tool_index);
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.model, b.model);
    EXPECT_EQ(a.stop_sequence, b.stop_sequence);
    EXPECT_EQ(a.usage.prompt_tokens, b.usage.prompt_tokens);
    EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
    EXPECT_EQ(a.usage.cached_tokens, b.usage.cached_tokens);
    ASSERT_EQ(a.error.has_value(), b.error.has_value());
    if (a.error) {
      EXPECT_EQ(a.error->message, b.error->message);
    }
  }
  // Views point into the recording, not at the caller's strings.
  providers::StreamEvent copy;
  ASSERT_EQ(recording.CopyEvents(1, std::span(&copy, 1)), 1u);
  EXPECT_NE(copy.text.data(), events[1].text.data());
  EXPECT_EQ(recording.start().upstream_model, "claude-test");

  const RecordingProgress progress = recording.progress();
  EXPECT_EQ(progress.state, RecordingState::kFailed);
  ASSERT_NE(progress.error, nullptr);
  EXPECT_EQ(progress.error->code, ErrorCode::kUpstreamBadResponse);
  EXPECT_FALSE(progress.truncated);
}

TEST(Recording, SameFormReplaysExactlyTheRecordedFrames) {
  ScriptedAnswer answer(12);
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ClientSink client(kOpenAi, Options(), &recording);
  ScriptedCall call({&recorder, &client});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(4)) ASSERT_TRUE(call.Read(read));
  call.End(nullptr);

  const std::vector<std::string> frames =
      ReplayAll(recording, {{"openai", true}, &kOpenAi, Options()});
  EXPECT_EQ(frames, client.sent);  // element by element: the same frames, the same bounds
  EXPECT_EQ(recording.form_progress(recording.FindForm({"openai", true})).frames,
            client.sent.size());
  EXPECT_EQ(recording.progress().state, RecordingState::kComplete);
}

TEST(Recording, AnotherFormIsEncodedFromTheEvents) {
  ScriptedAnswer answer(5);
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ClientSink client(kOpenAi, Options(), &recording);
  ScriptedCall call({&recorder, &client});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(3)) ASSERT_TRUE(call.Read(read));
  call.End(nullptr);

  std::optional<Error> error;
  const std::vector<std::string> frames =
      ReplayAll(recording, {{"anthropic", true}, &kAnthropic, Options()}, &error);
  EXPECT_FALSE(error.has_value());
  const std::string anthropic = Join(frames);
  EXPECT_EQ(anthropic, answer.Encoded(kAnthropic, Options()));
  EXPECT_NE(anthropic.find("event: message_start"), std::string::npos);
  EXPECT_NE(anthropic.find("word4 "), std::string::npos);
  EXPECT_NE(anthropic.find("event: message_stop"), std::string::npos);
  // include_usage is not part of the form's key: the same dialect and form get the recorded
  // frames (of which only usage-only ones depend on it).
  const std::string openai_usage =
      Join(ReplayAll(recording, {{"openai", true}, &kOpenAi, Options(true)}));
  EXPECT_EQ(openai_usage, Join(client.sent));
}

TEST(Recording, IdentityFramesKeepTheirKindsAndUsageOnlyFramesFollowTheClientsChoice) {
  Recording recording(kRoomy);
  Recorder recorder(recording);
  AnswerStart start;
  start.stream = true;
  start.identity = true;
  start.dialect = "openai";
  start.content_type = "text/event-stream";
  ScriptedCall call({&recorder});
  call.Start(start);
  const std::string a = "data: {\"a\":1}\n\n", usage = "data: {\"usage\":{}}\n\n",
                    done = "data: [DONE]\n\n";
  call.Read({}, {{a, FrameKind::kData}});
  call.Read({}, {{usage, FrameKind::kUsageOnly}, {done, FrameKind::kData}});
  call.End(nullptr);

  EXPECT_EQ(ReplayAll(recording, {{"openai", true}, nullptr, Options(false)}),
            (std::vector<std::string>{a, done}));
  EXPECT_EQ(ReplayAll(recording, {{"openai", true}, nullptr, Options(true)}),
            (std::vector<std::string>{a, usage, done}));
  // Another dialect cannot be served: no events were decoded.
  std::optional<Error> error;
  EXPECT_TRUE(ReplayAll(recording, {{"anthropic", true}, &kAnthropic, Options()}, &error).empty());
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
}

TEST(Recording, PastItsCapItIsTruncatedAndAReplayEndsWithAnError) {
  ScriptedAnswer answer(200);
  constexpr size_t kCap = 2048;
  Recording recording(kCap);
  Recorder recorder(recording);
  ScriptedCall call({&recorder});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(10)) call.Read(read);
  call.End(nullptr);

  const RecordingProgress progress = recording.progress();
  EXPECT_TRUE(progress.truncated);
  EXPECT_EQ(progress.state, RecordingState::kComplete);  // ended, but not the whole answer
  EXPECT_LE(progress.bytes, kCap);
  EXPECT_GT(progress.events, 1u);
  EXPECT_LT(progress.events, answer.events.size());

  std::optional<Error> error;
  const std::vector<std::string> frames =
      ReplayAll(recording, {{"openai", true}, &kOpenAi, Options()}, &error);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames.back().find("\"error\""), std::string::npos);  // the in-stream error event
  EXPECT_EQ(frames.size(), progress.events + 1);  // kStart renders the role chunk, then deltas
}

// A read's frames go in as one batch: empty ones skipped, kinds kept, order kept past the
// inline records and the batch size; past the cap the rest is dropped and the frames before
// it stay.
TEST(Recording, AReadsFramesAreAppendedInOrderUpToTheCap) {
  constexpr size_t kFrames = 70;
  std::vector<std::string> texts;
  for (size_t i = 0; i < kFrames; ++i) texts.push_back("data: " + std::to_string(i) + "\n\n");
  std::vector<IdentityFrame> read;
  for (size_t i = 0; i < kFrames; ++i) {
    read.push_back({texts[i], i % 7 == 0 ? FrameKind::kUsageOnly : FrameKind::kData});
    if (i == 3) read.push_back({"", FrameKind::kData});
  }
  Recording roomy(kRoomy);
  const size_t form = roomy.AddForm({"openai", true});
  roomy.AppendFrames(form, read);
  std::vector<RecordedFrame> out(kFrames + 1);
  ASSERT_EQ(roomy.CopyFrames(form, 0, out), kFrames);
  for (size_t i = 0; i < kFrames; ++i) {
    EXPECT_EQ(out[i].bytes, texts[i]);
    EXPECT_EQ(out[i].kind, i % 7 == 0 ? FrameKind::kUsageOnly : FrameKind::kData);
  }

  constexpr size_t kCap = 600;  // room for some of the frames, not all
  Recording capped(kCap);
  const size_t capped_form = capped.AddForm({"openai", true});
  capped.AppendFrames(capped_form, read);
  const size_t kept = capped.CopyFrames(capped_form, 0, out);
  EXPECT_TRUE(capped.progress().truncated);
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, kFrames);
  for (size_t i = 0; i < kept; ++i) EXPECT_EQ(out[i].bytes, texts[i]);
  EXPECT_LE(capped.progress().bytes, kCap);
}

// Frames that lie back to back in one read are copied as a run: whatever the cap, the records,
// their bytes and kinds, the charge and the truncation are those of the same frames given as
// separate strings (each copied on its own).
TEST(Recording, ARunOfFramesInOneReadIsRecordedAsFramesApart) {
  std::string wire;
  std::vector<std::pair<size_t, size_t>> spans;  // offset, size in `wire`
  for (size_t i = 0; i < 40; ++i) {
    const std::string text = "data: {\"n\":" + std::to_string(i) + "}\n\n";
    spans.emplace_back(wire.size(), text.size());
    wire += text;
  }
  const std::string elsewhere = "data: apart\n\n";
  const auto kind_of = [](size_t i) {
    return i % 5 == 0 ? FrameKind::kUsageOnly : FrameKind::kData;
  };
  std::vector<IdentityFrame> in_one_read, apart;
  std::vector<std::string> copies;
  copies.reserve(spans.size() + 1);
  for (size_t i = 0; i < spans.size(); ++i) {
    const std::string_view bytes(wire.data() + spans[i].first, spans[i].second);
    in_one_read.push_back({bytes, kind_of(i)});
    apart.push_back({copies.emplace_back(bytes), kind_of(i)});
    if (i == 2) {
      in_one_read.push_back({"", FrameKind::kData});
      apart.push_back({"", FrameKind::kData});
    }
    if (i == 20) {  // a frame from another buffer breaks the run
      in_one_read.push_back({elsewhere, FrameKind::kData});
      apart.push_back({copies.emplace_back(elsewhere), FrameKind::kData});
    }
  }
  // What a frame is charged beyond its bytes (its record): the smallest cap that takes one frame.
  size_t per_record = 0;
  for (;; ++per_record) {
    Recording one(apart[0].bytes.size() + per_record);
    one.AppendFrames(one.AddForm({"openai", true}),
                     std::span<const IdentityFrame>(apart.data(), 1));
    if (!one.progress().truncated) break;
    ASSERT_LT(per_record, 256u);
  }
  size_t truncated_caps = 0;
  for (size_t cap = 0; cap <= wire.size() + 64 * (spans.size() + 1); cap += 37) {
    Recording run(cap), one_by_one(cap);
    const size_t run_form = run.AddForm({"openai", true});
    const size_t form = one_by_one.AddForm({"openai", true});
    run.AppendFrames(run_form, in_one_read);
    one_by_one.AppendFrames(form, apart);
    std::vector<RecordedFrame> a(spans.size() + 2), b(spans.size() + 2);
    const size_t n = run.CopyFrames(run_form, 0, a);
    ASSERT_EQ(n, one_by_one.CopyFrames(form, 0, b)) << cap;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(a[i].bytes, b[i].bytes) << cap << " " << i;
      EXPECT_EQ(a[i].kind, b[i].kind) << cap << " " << i;
    }
    size_t charged = 0;
    for (size_t i = 0; i < n; ++i) charged += a[i].bytes.size() + per_record;
    EXPECT_EQ(run.progress().bytes, charged) << cap;
    EXPECT_EQ(run.progress().bytes, one_by_one.progress().bytes) << cap;
    EXPECT_EQ(run.progress().truncated, one_by_one.progress().truncated) << cap;
    if (run.progress().truncated && n > 0) ++truncated_caps;
  }
  EXPECT_GT(truncated_caps, 10u);  // the cap fell inside a run many times
}

TEST(Recording, WholeAnswersRenderInEachDialectOrComeBackAsTheIdentityBytes) {
  providers::Response response;
  response.id = "chatcmpl-1";
  response.model = "gpt-test";
  response.text = "Hello there";
  response.finish = providers::FinishReason::kStop;
  response.usage.prompt_tokens = 4;
  response.usage.completion_tokens = 2;
  AnswerStart start;
  start.dialect = "anthropic";
  start.content_type = "application/json";

  Recording translated(kRoomy);
  Recorder recorder(translated);
  ScriptedCall call({&recorder});
  call.Start(start);
  WholeAnswer whole;
  whole.content_type = "application/json";
  whole.response = &response;
  call.Whole(whole);
  call.End(nullptr);
  EXPECT_EQ(ReplayAll(translated, {{"openai", false}, &kOpenAi, Options()}),
            (std::vector<std::string>{kOpenAi.RenderWholeResponse(response, Options())}));
  EXPECT_EQ(ReplayAll(translated, {{"anthropic", false}, &kAnthropic, Options()}),
            (std::vector<std::string>{kAnthropic.RenderWholeResponse(response, Options())}));
  // A stream form is synthesized from it (replay_forms_test.cc).
  std::optional<Error> error;
  EXPECT_FALSE(ReplayAll(translated, {{"openai", true}, &kOpenAi, Options()}, &error).empty());
  EXPECT_FALSE(error.has_value());

  Recording identity(kRoomy);
  Recorder identity_recorder(identity);
  ScriptedCall identity_call({&identity_recorder});
  start.identity = true;
  identity_call.Start(start);
  const std::string body = R"({"type":"message","content":[]})";
  identity_call.Whole({200, "application/json", body, nullptr});
  identity_call.End(nullptr);
  EXPECT_EQ(ReplayAll(identity, {{"anthropic", false}, &kAnthropic, Options()}),
            (std::vector<std::string>{body}));
  EXPECT_EQ(identity.whole().status, 200u);
  EXPECT_EQ(identity.whole().content_type, "application/json");
}

}  // namespace
}  // namespace turnpike::model_call
