// The LLM door's ClientSink with a recording attached (ClientSinkOptions::recording): on a
// translated answer it reports the frames it rendered for its client as its form's frames
// (model_call/recorder.h), so that a replay to the same dialect and form sends exactly what the
// client got; it closes its form when its client leaves mid-answer, keeps the in-stream error it
// renders at the end out of the form, and on an identity stream reports nothing (the Recorder
// keeps the upstream's frames itself). Driven in the order answer_sink.h specifies, against a
// RecordingExchange.
#include "doors/llm/client_sink.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../../core/recording_exchange.h"
#include "../../core/run_on_loop.h"
#include "../../model_call/scripted_call.h"
#include "core/router.h"
#include "core/worker_core.h"
#include "model_call/recorder.h"
#include "model_call/recording.h"
#include "model_call/replay.h"
#include "providers/anthropic/anthropic_provider.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::doors::llm {
namespace {
namespace net = boost::asio;
using core::testing::RecordingExchange;
using core::testing::RunOnLoop;
using model_call::AnswerSink;
using model_call::Form;
using model_call::Recording;
using model_call::testing::ScriptedAnswer;

constexpr size_t kRoomy = 1 << 20;
constexpr size_t kAll = 1 << 30;

const providers::openai::OpenAiProvider kOpenAi;
const providers::anthropic::AnthropicProvider kAnthropic;

bool Flush(AnswerSink& sink) { return RunOnLoop(sink.Flush()); }

// A model call's side of the sinks, in answer_sink.h's order: OnStart, the head's Flush, per
// read its events (or frames) then every live sink's Flush, OnEnd and a last Flush.
class Producer {
 public:
  explicit Producer(std::vector<AnswerSink*> sinks) : live_(std::move(sinks)) {}

  void Start(const model_call::AnswerStart& start) {
    for (AnswerSink* sink : live_) sink->OnStart(start);
    if (start.stream) FlushLive();
  }
  void Read(const std::vector<providers::StreamEvent>& events,
            const std::vector<std::string>& frames = {}) {
    for (const providers::StreamEvent& event : events) {
      for (AnswerSink* sink : live_) sink->OnEvent(event);
    }
    std::vector<model_call::IdentityFrame> read;
    for (const std::string& frame : frames) read.push_back({frame});
    if (!read.empty()) {
      for (AnswerSink* sink : live_) sink->OnFrames(read);
    }
    FlushLive();
  }
  void Whole(const model_call::WholeAnswer& answer) {
    for (AnswerSink* sink : live_) sink->OnWhole(answer);
    FlushLive();
  }
  void End(const Error* error) {
    for (AnswerSink* sink : live_) sink->OnEnd(error);
    FlushLive();
  }
  size_t live() const { return live_.size(); }

 private:
  void FlushLive() {
    std::vector<AnswerSink*> kept;
    for (AnswerSink* sink : live_) {
      if (Flush(*sink)) kept.push_back(sink);
    }
    live_ = std::move(kept);
  }
  std::vector<AnswerSink*> live_;
};

// One worker's core (for a whole answer's Respond) and the request the exchange answers.
struct Rig {
  Rig() : router(0), shared(router, probes), core(shared, io) {}

  ClientSinkOptions Options(const providers::Provider& client, Recording* recording) const {
    ClientSinkOptions options;
    options.client = &client;
    options.openai_chat = client.name() == "openai";
    options.client_body = R"({"model":"m","messages":[]})";
    options.recording = recording;
    return options;
  }

  net::io_context io;
  core::Router router;
  core::ProbeRegistry probes;
  core::CoreShared shared;
  core::WorkerCore core;
  core::RequestContext ctx;
  http::Request request{boost::beast::http::verb::post, "/v1/chat/completions", 11};
};

std::vector<std::string> FormFrames(const Recording& recording, const Form& form) {
  const size_t index = recording.FindForm(form);
  if (index == Recording::npos) return {};
  std::vector<model_call::RecordedFrame> frames(recording.form_progress(index).frames);
  recording.CopyFrames(index, 0, frames);
  std::vector<std::string> out;
  for (const model_call::RecordedFrame& frame : frames) out.emplace_back(frame.bytes);
  return out;
}

std::vector<std::string> ReplayAll(const Recording& recording,
                                   const model_call::ReplayOptions& options) {
  model_call::Replay replay(recording, options);
  std::vector<std::string> frames;
  for (;;) {
    model_call::ReplayStep step = replay.Next(kAll);
    for (std::string_view frame : step.frames) frames.emplace_back(frame);
    if (step.end || step.frames.empty()) return frames;
  }
}

std::string Join(const std::vector<std::string>& frames) {
  std::string all;
  for (const std::string& frame : frames) all += frame;
  return all;
}

model_call::ReplayOptions ReplayOf(const providers::Provider& provider, bool stream) {
  model_call::ReplayOptions options;
  options.form = {provider.name(), stream};
  options.provider = &provider;
  options.encoder.created = 1700000000;
  return options;
}

TEST(ClientSinkRecording, ATranslatedStreamsFramesAreWhatTheClientGotAndReplayExactly) {
  for (const providers::Provider* client :
       std::vector<const providers::Provider*>{&kOpenAi, &kAnthropic}) {
    SCOPED_TRACE(std::string(client->name()));
    Rig rig;
    RecordingExchange exchange(rig.request);
    Recording recording(kRoomy);
    model_call::Recorder recorder(recording);
    ClientSink sink(exchange, rig.core, rig.ctx, rig.Options(*client, &recording));
    Producer call({&sink, &recorder});
    const ScriptedAnswer answer(9);
    call.Start(model_call::testing::TranslatedStream());
    for (const auto& read : answer.Reads(3)) call.Read(read);
    call.End(nullptr);

    const std::vector<std::string> frames = FormFrames(recording, {client->name(), true});
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(Join(frames), exchange.body()) << "the form is every byte the client got";
    // One frame per event that rendered anything: more frames than reads.
    EXPECT_GT(frames.size(), answer.Reads(3).size());
    EXPECT_EQ(ReplayAll(recording, ReplayOf(*client, true)), frames);
    EXPECT_EQ(recording.progress().state, model_call::RecordingState::kComplete);
    EXPECT_FALSE(recording.form_progress(recording.FindForm({client->name(), true})).closed);
  }
}

TEST(ClientSinkRecording, AClientThatLeavesClosesItsFormAtTheEventsItRendered) {
  Rig rig;
  RecordingExchange exchange(rig.request, /*writes_before_gone=*/1);
  Recording recording(kRoomy);
  model_call::Recorder recorder(recording);
  ClientSink sink(exchange, rig.core, rig.ctx, rig.Options(kOpenAi, &recording));
  Producer call({&sink, &recorder});
  const ScriptedAnswer answer(9);
  const auto reads = answer.Reads(3);
  call.Start(model_call::testing::TranslatedStream());
  call.Read(reads[0]);  // written
  call.Read(reads[1]);  // the write fails: the client has gone
  ASSERT_EQ(call.live(), 1u) << "the client's sink left; the recorder stays";
  for (size_t i = 2; i < reads.size(); ++i) call.Read(reads[i]);
  call.End(nullptr);

  const size_t form = recording.FindForm({"openai", true});
  ASSERT_NE(form, Recording::npos);
  const model_call::FormProgress progress = recording.form_progress(form);
  EXPECT_TRUE(progress.closed);
  EXPECT_EQ(progress.events_covered, reads[0].size() + reads[1].size());
  EXPECT_EQ(rig.ctx.status, 499);
  // A replay of that form: the frames the client was given, then the rest rendered from the
  // events, through the end.
  const std::string replayed = Join(ReplayAll(recording, ReplayOf(kOpenAi, true)));
  const std::string recorded = Join(FormFrames(recording, {"openai", true}));
  EXPECT_EQ(replayed.substr(0, recorded.size()), recorded);
  EXPECT_NE(replayed.find("word8 "), std::string::npos);
  EXPECT_EQ(replayed.substr(replayed.size() - 14), "data: [DONE]\n\n");
}

TEST(ClientSinkRecording, TheInStreamErrorItRendersAtTheEndIsNotPartOfTheForm) {
  Rig rig;
  RecordingExchange exchange(rig.request);
  Recording recording(kRoomy);
  model_call::Recorder recorder(recording);
  ClientSink sink(exchange, rig.core, rig.ctx, rig.Options(kAnthropic, &recording));
  Producer call({&sink, &recorder});
  const ScriptedAnswer answer(6);
  const auto reads = answer.Reads(3);
  call.Start(model_call::testing::TranslatedStream());
  call.Read(reads[0]);
  call.Read(reads[1]);
  const Error cut{ErrorCode::kUpstreamBadResponse, "The upstream stream was cut.", ""};
  call.End(&cut);

  const std::string recorded = Join(FormFrames(recording, {"anthropic", true}));
  ASSERT_FALSE(recorded.empty());
  EXPECT_EQ(recorded.find("event: error"), std::string::npos);
  EXPECT_NE(exchange.body().find("event: error"), std::string::npos) << "the client got it";
  EXPECT_EQ(exchange.body().substr(0, recorded.size()), recorded);
  EXPECT_EQ(recording.progress().state, model_call::RecordingState::kFailed);
}

TEST(ClientSinkRecording, ATranslatedWholeAnswerIsTheWholeFormsOneFrame) {
  Rig rig;
  RecordingExchange exchange(rig.request);
  Recording recording(kRoomy);
  model_call::Recorder recorder(recording);
  ClientSink sink(exchange, rig.core, rig.ctx, rig.Options(kAnthropic, &recording));
  Producer call({&sink, &recorder});
  providers::Response response;
  response.id = "chatcmpl-1";
  response.model = "gpt-test";
  response.text = "hello there";
  response.finish = providers::FinishReason::kStop;
  response.usage.prompt_tokens = 4;
  response.usage.completion_tokens = 2;
  model_call::AnswerStart start;
  start.dialect = "openai";
  start.content_type = "application/json";
  call.Start(start);
  call.Whole({200, "application/json", {}, &response, nullptr});
  call.End(nullptr);

  EXPECT_EQ(exchange.status(), 200u);
  const std::vector<std::string> frames = FormFrames(recording, {"anthropic", false});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0], exchange.body());
  EXPECT_EQ(ReplayAll(recording, ReplayOf(kAnthropic, false)), frames);
}

TEST(ClientSinkRecording, AnIdentityStreamIsRecordedByTheRecorderAloneOnce) {
  Rig rig;
  RecordingExchange exchange(rig.request);
  Recording recording(kRoomy);
  model_call::Recorder recorder(recording);
  ClientSink sink(exchange, rig.core, rig.ctx, rig.Options(kOpenAi, &recording));
  Producer call({&sink, &recorder});
  model_call::AnswerStart start;
  start.stream = true;
  start.identity = true;
  start.dialect = "openai";
  start.content_type = "text/event-stream";
  const std::vector<std::string> frames = {
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n",
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
      "data: [DONE]\n\n"};
  call.Start(start);
  call.Read({}, {frames[0], frames[1]});
  call.Read({}, {frames[2]});
  call.End(nullptr);

  EXPECT_EQ(exchange.body(), Join(frames));
  EXPECT_EQ(FormFrames(recording, {"openai", true}), frames) << "each frame once";
}

}  // namespace
}  // namespace turnpike::doors::llm
