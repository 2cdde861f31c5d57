// A recording's wire form: round trips of every kind of recording (a replay of the copy gives
// the original's frames, byte for byte, in every form), what Encode refuses, and corrupted or
// forged bytes refused without a crash.
#include "model_call/recording_codec.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model_call/recorder.h"
#include "model_call/replay.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_responses/responses_provider.h"
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
const providers::openai_responses::ResponsesProvider kResponses;
const providers::gemini::GeminiProvider kGemini;

providers::EncoderOptions Options(bool include_usage) {
  providers::EncoderOptions options;
  options.created = 1700000000;
  options.include_usage = include_usage;
  return options;
}

// Every form a replay may be asked for.
std::vector<ReplayOptions> EveryForm() {
  std::vector<ReplayOptions> forms;
  for (const providers::Provider* provider : {static_cast<const providers::Provider*>(&kOpenAi),
                                              static_cast<const providers::Provider*>(&kAnthropic),
                                              static_cast<const providers::Provider*>(&kResponses),
                                              static_cast<const providers::Provider*>(&kGemini)}) {
    for (bool stream : {true, false}) {
      forms.push_back({{provider->name(), stream}, provider, Options(false)});
    }
  }
  forms.push_back({{"openai", true}, &kOpenAi, Options(true)});
  forms.push_back({{"openai", true}, nullptr, Options(true)});  // recorded frames only
  return forms;
}

struct Replayed {
  std::vector<std::string> frames;
  std::optional<ErrorCode> error;
};

Replayed ReplayAll(const Recording& recording, const ReplayOptions& options) {
  Replay replay(recording, options);
  Replayed out;
  for (int steps = 0; steps < 10000; ++steps) {
    const ReplayStep step = replay.Next(kAll);
    for (std::string_view frame : step.frames) out.frames.emplace_back(frame);
    if (step.end) {
      if (step.error != nullptr) out.error = step.error->code;
      return out;
    }
  }
  ADD_FAILURE() << "the replay of a complete recording did not end";
  return out;
}

std::string Encoded(const Recording& recording) {
  Result<std::string> bytes = EncodeRecording(recording);
  EXPECT_TRUE(bytes.ok()) << bytes.error().message;
  return bytes.ok() ? *bytes : std::string();
}

// Writes the check of `bytes` over what follows it (as EncodeRecording does).
void Seal(std::string& bytes) {
  if (bytes.size() < kRecordingBodyAt) return;
  const uint64_t check = RecordingChecksum(std::string_view(bytes).substr(kRecordingBodyAt));
  for (size_t i = 0; i < 8; ++i) {
    bytes[kRecordingChecksumAt + i] = static_cast<char>((check >> (8 * i)) & 0xff);
  }
}

// Decodes the original's bytes, checks that they encode again to the same bytes and that
// every form replays the same from both.
void ExpectRoundTrip(const Recording& original) {
  const std::string bytes = Encoded(original);
  ASSERT_FALSE(bytes.empty());
  Result<std::shared_ptr<const Recording>> decoded = DecodeRecording(bytes, kRoomy);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const Recording& copy = **decoded;
  EXPECT_EQ(Encoded(copy), bytes);

  const RecordingProgress a = original.progress(), b = copy.progress();
  EXPECT_EQ(b.state, RecordingState::kComplete);
  EXPECT_FALSE(b.truncated);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.whole, b.whole);
  EXPECT_EQ(original.forms(), copy.forms());
  EXPECT_EQ(original.start().dialect, copy.start().dialect);
  EXPECT_EQ(original.start().upstream_model, copy.start().upstream_model);
  for (const ReplayOptions& form : EveryForm()) {
    SCOPED_TRACE(std::string(form.form.dialect) + (form.form.stream ? " stream" : " whole"));
    const Replayed from_original = ReplayAll(original, form);
    const Replayed from_copy = ReplayAll(copy, form);
    EXPECT_EQ(from_original.frames, from_copy.frames);
    EXPECT_EQ(from_original.error, from_copy.error);
  }
}

TEST(RecordingCodec, ATranslatedStreamWithItsClientsFormComesBackTheSame) {
  ScriptedAnswer answer(12);
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ClientSink client(kOpenAi, Options(false), &recording);
  ScriptedCall call({&recorder, &client});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(4)) ASSERT_TRUE(call.Read(read));
  call.End(nullptr);
  ExpectRoundTrip(recording);
}

TEST(RecordingCodec, AFormClosedEarlyKeepsWhereItStopped) {
  ScriptedAnswer answer(12);
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ClientSink leaves(kOpenAi, Options(false), &recording, 2);
  ClientSink stays(kAnthropic, Options(false), &recording);
  ScriptedCall call({&recorder, &leaves, &stays});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(4)) ASSERT_TRUE(call.Read(read));
  call.End(nullptr);
  const FormProgress closed = recording.form_progress(recording.FindForm({"openai", true}));
  ASSERT_TRUE(closed.closed);
  ASSERT_LT(closed.events_covered, recording.progress().events);
  ExpectRoundTrip(recording);

  Result<std::shared_ptr<const Recording>> copy = DecodeRecording(Encoded(recording), kRoomy);
  ASSERT_TRUE(copy.ok());
  const FormProgress again = (*copy)->form_progress((*copy)->FindForm({"openai", true}));
  EXPECT_TRUE(again.closed);
  EXPECT_EQ(again.events_covered, closed.events_covered);
  EXPECT_EQ(again.frames, closed.frames);
}

TEST(RecordingCodec, AnIdentityStreamKeepsItsFrameKindsAndEvents) {
  ScriptedAnswer answer(3);
  Recording recording(kRoomy);
  Recorder recorder(recording);
  AnswerStart start;
  start.stream = true;
  start.identity = true;
  start.events = true;
  start.dialect = "openai";
  start.content_type = "text/event-stream";
  start.upstream_model = "gpt-test";
  ScriptedCall call({&recorder});
  call.Start(start);
  const std::vector<providers::StreamEvent>& events = answer.events;
  call.Read({events.begin(), events.end() - 2},
            {{"data: {\"a\":1}\n\n", FrameKind::kData}, {": comment\n\n", FrameKind::kOther}});
  call.Read({events.end() - 2, events.end()}, {{"data: {\"usage\":{}}\n\n", FrameKind::kUsageOnly},
                                               {"data: [DONE]\n\n", FrameKind::kData}});
  call.End(nullptr);
  ExpectRoundTrip(recording);
  Result<std::shared_ptr<const Recording>> copy = DecodeRecording(Encoded(recording), kRoomy);
  ASSERT_TRUE(copy.ok());
  EXPECT_TRUE((*copy)->start().identity);
  EXPECT_TRUE((*copy)->start().events);
  EXPECT_EQ(ReplayAll(**copy, {{"openai", true}, nullptr, Options(false)}).frames.size(), 3u);
  EXPECT_EQ(ReplayAll(**copy, {{"openai", true}, nullptr, Options(true)}).frames.size(), 4u);
}

TEST(RecordingCodec, AStreamThatEndedOnAnErrorEventKeepsTheError) {
  ScriptedAnswer answer(2);
  std::vector<providers::StreamEvent> events = answer.events;
  const Error upstream{ErrorCode::kUpstreamBadResponse, "cut \"short\"", "messages[0]"};
  events.back().kind = providers::EventKind::kError;
  events.back().error = &upstream;
  providers::StreamEvent no_error;
  no_error.kind = providers::EventKind::kError;  // a kError event without its Error
  Recording recording(kRoomy);
  recording.Start(testing::TranslatedStream());
  for (const providers::StreamEvent& event : events) recording.AppendEvent(event);
  recording.AppendEvent(no_error);
  recording.Finish(nullptr);  // the error event went out: the answer is as it was
  ExpectRoundTrip(recording);

  Result<std::shared_ptr<const Recording>> copy = DecodeRecording(Encoded(recording), kRoomy);
  ASSERT_TRUE(copy.ok());
  std::vector<providers::StreamEvent> got(recording.progress().events);
  ASSERT_EQ((*copy)->CopyEvents(0, got), events.size() + 1);
  const providers::StreamEvent& error = got[events.size() - 1];
  ASSERT_NE(error.error, nullptr);
  EXPECT_EQ(error.error->code, ErrorCode::kUpstreamBadResponse);
  EXPECT_EQ(error.error->message, upstream.message);
  EXPECT_EQ(error.error->param, upstream.param);
  EXPECT_EQ(got.back().error, nullptr);
  EXPECT_EQ(got[0].usage.prompt_tokens, 11);
}

TEST(RecordingCodec, WholeAnswersComeBackTheSame) {
  providers::Response response;
  response.id = "msg_1";
  response.model = "claude-test";
  response.text = "Hello \"there\"\n";
  response.reasoning = "think";
  response.reasoning_signature = "sig";
  response.redacted_reasoning = {"r1", "r2"};
  response.tool_calls = {{"call_1", "lookup", R"({"q":1})"}, {"call_2", "noop", "{}"}};
  response.finish = providers::FinishReason::kStopSequence;
  response.stop_sequence = "END";
  response.usage = {9, 4, 2, 1, 3};
  AnswerStart start;
  start.dialect = "anthropic";
  start.content_type = "application/json";
  start.upstream_model = "claude-test";

  Recording translated(kRoomy);
  Recorder recorder(translated);
  ClientSink client(kOpenAi, Options(false), &translated);  // a whole form of its own
  ScriptedCall call({&recorder, &client});
  call.Start(start);
  call.Whole({200, "application/json", {}, &response});
  call.End(nullptr);
  ExpectRoundTrip(translated);
  Result<std::shared_ptr<const Recording>> copy = DecodeRecording(Encoded(translated), kRoomy);
  ASSERT_TRUE(copy.ok());
  ASSERT_NE((*copy)->whole().response, nullptr);
  const providers::Response& back = *(*copy)->whole().response;
  EXPECT_EQ(back.text, response.text);
  EXPECT_EQ(back.redacted_reasoning, response.redacted_reasoning);
  ASSERT_EQ(back.tool_calls.size(), 2u);
  EXPECT_EQ(back.tool_calls[1].name, "noop");
  EXPECT_EQ(back.usage.cache_creation_tokens, 1);

  Recording identity(kRoomy);
  Recorder identity_recorder(identity);
  ScriptedCall identity_call({&identity_recorder});
  start.identity = true;
  identity_call.Start(start);
  const std::string body = R"({"type":"message","content":[],"usage":{"input_tokens":3}})";
  identity_call.Whole({201, "application/json; charset=utf-8", body, nullptr});
  identity_call.End(nullptr);
  ExpectRoundTrip(identity);
  copy = DecodeRecording(Encoded(identity), kRoomy);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ((*copy)->whole().status, 201u);
  EXPECT_EQ((*copy)->whole().content_type, "application/json; charset=utf-8");
  EXPECT_EQ((*copy)->whole().body, body);
  EXPECT_EQ((*copy)->whole().response, nullptr);
}

TEST(RecordingCodec, OnlyACompleteRecordingIsEncoded) {
  Recording in_flight(kRoomy);
  in_flight.Start(testing::TranslatedStream());
  EXPECT_FALSE(EncodeRecording(in_flight).ok());

  Recording failed(kRoomy);
  failed.Start(testing::TranslatedStream());
  const Error cut{ErrorCode::kUpstreamTimeout, "idle", ""};
  failed.Finish(&cut);
  Result<std::string> refused = EncodeRecording(failed);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);

  ScriptedAnswer answer(200);
  Recording truncated(2048);
  Recorder recorder(truncated);
  ScriptedCall call({&recorder});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(10)) call.Read(read);
  call.End(nullptr);
  ASSERT_TRUE(truncated.progress().truncated);
  EXPECT_FALSE(EncodeRecording(truncated).ok());

  Recording never_started(kRoomy);
  never_started.Finish(nullptr);
  EXPECT_FALSE(EncodeRecording(never_started).ok());
}

// A recording small enough for the quadratic corruption tests, with every part in it.
std::string SmallRecording() {
  ScriptedAnswer answer(2);
  Recording recording(kRoomy);
  Recorder recorder(recording);
  ClientSink client(kOpenAi, Options(false), &recording, 2);
  ClientSink other(kAnthropic, Options(false), &recording);
  ScriptedCall call({&recorder, &client, &other});
  call.Start(testing::TranslatedStream());
  for (const auto& read : answer.Reads(2)) call.Read(read);
  call.End(nullptr);
  return Encoded(recording);
}

TEST(RecordingCodec, EveryTruncationIsRefusedWithOrWithoutItsCheck) {
  const std::string bytes = SmallRecording();
  ASSERT_GT(bytes.size(), kRecordingBodyAt);
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::string cut = bytes.substr(0, size);
    EXPECT_FALSE(DecodeRecording(cut, kRoomy).ok()) << size;
    Seal(cut);  // the parser itself refuses it
    EXPECT_FALSE(DecodeRecording(cut, kRoomy).ok()) << size;
  }
}

TEST(RecordingCodec, EveryFlippedByteIsRefusedAndResealedOnesNeverCrash) {
  const std::string bytes = SmallRecording();
  size_t resealed_ok = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(static_cast<uint8_t>(bad[at]) ^ flip);
      EXPECT_FALSE(DecodeRecording(bad, kRoomy).ok()) << at;
      if (at < kRecordingBodyAt) continue;
      Seal(bad);
      Result<std::shared_ptr<const Recording>> decoded = DecodeRecording(bad, kRoomy);
      if (!decoded.ok()) continue;
      // A change the parser cannot tell (a byte of a string): a recording all the same, and
      // the form is canonical.
      ++resealed_ok;
      EXPECT_EQ(Encoded(**decoded), bad) << at;
    }
  }
  EXPECT_GT(resealed_ok, 0u);
}

TEST(RecordingCodec, AnotherVersionOrMagicIsRefused) {
  std::string bytes = SmallRecording();
  ASSERT_TRUE(DecodeRecording(bytes, kRoomy).ok());
  std::string version = bytes;
  version[4] = 2;
  Result<std::shared_ptr<const Recording>> refused = DecodeRecording(version, kRoomy);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(refused.error().message.find("format 2"), std::string::npos);
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_FALSE(DecodeRecording(magic, kRoomy).ok());
  EXPECT_FALSE(DecodeRecording({}, kRoomy).ok());
}

TEST(RecordingCodec, ARecordingPastTheCapIsRefused) {
  const std::string bytes = SmallRecording();
  EXPECT_FALSE(DecodeRecording(bytes, 64).ok());
  EXPECT_TRUE(DecodeRecording(bytes, bytes.size() * 4).ok());
}

TEST(RecordingCodec, ATokenCountOutOfRangeIsAMiss) {
  for (int64_t count :
       {int64_t{-2}, (int64_t{1} << 53) + 1, int64_t{1} << 62, int64_t{-1}, int64_t{1} << 53}) {
    Recording recording(kRoomy);
    recording.Start(testing::TranslatedStream());
    providers::StreamEvent usage;
    usage.kind = providers::EventKind::kUsage;
    usage.usage.prompt_tokens = 1;
    usage.usage.cached_tokens = count;
    recording.AppendEvent(usage);
    recording.Finish(nullptr);
    const bool in_range = count == -1 || count == int64_t{1} << 53;
    EXPECT_EQ(DecodeRecording(Encoded(recording), kRoomy).ok(), in_range) << count;
  }
}

TEST(RecordingCodec, AForgedCountIsRefusedBeforeAnythingIsAllocated) {
  // Magic, version, check, a head with empty strings, then 2^32 - 1 events.
  std::string bytes = "TPRC";
  bytes += std::string("\x01\x00", 2);
  bytes += std::string(8, '\0');
  bytes += std::string("\x01\xc8\x00\x00\x00", 5);  // stream, status 200
  bytes += std::string(12, '\0');                   // three empty strings
  bytes += std::string("\xff\xff\xff\xff", 4);
  bytes += std::string(64, '\0');
  Seal(bytes);
  Result<std::shared_ptr<const Recording>> refused = DecodeRecording(bytes, kRoomy);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "a malformed recording");
}

}  // namespace
}  // namespace turnpike::model_call
