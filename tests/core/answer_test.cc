// Filters that answer (answer.h, filter.h) and WorkerCore::AnswerFromChain: a door whose chain
// answers gets exactly the filter's answer on the wire (a whole body, or a stream's frames,
// byte for byte), or the refusal in the door's own error shape; OnComplete runs after either;
// the governance filter's x-ratelimit-* and Retry-After are on every answer, in every shape.
#include "core/answer.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string>
#include <vector>

#include "../governance/fixtures.h"
#include "core/governance_filter.h"
#include "core/worker_core.h"
#include "recording_exchange.h"
#include "run_on_loop.h"

namespace turnpike::core {
namespace {
namespace net = boost::asio;
namespace gt = governance::testing;
using testing::RecordingExchange;

// Replays recorded frames, as the response cache will replay a recorded SSE stream: one Write
// per frame, in order, stopping as soon as the client is gone; what it sent is accounted.
class FramesAnswerStream final : public AnswerStream {
 public:
  explicit FramesAnswerStream(std::vector<std::string> frames) : frames_(std::move(frames)) {}

  net::awaitable<bool> WriteBody(http::Exchange& exchange, RequestContext& context) override {
    for (const std::string& frame : frames_) {
      if (!co_await exchange.Write(frame)) co_return false;
      if (context.phases.first_token == Clock::time_point{}) {
        context.phases.first_token = Clock::now();
      }
      context.output_bytes += static_cast<int64_t>(frame.size());
    }
    co_return true;
  }

 private:
  const std::vector<std::string> frames_;
};

const std::vector<std::string> kFrames = {
    "data: {\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\n",
    "data: {\"choices\":[{\"delta\":{\"content\":\"llo\"}}]}\n\n",
    "data: [DONE]\n\n",
};

size_t FramesBytes() {
  size_t n = 0;
  for (const std::string& f : kFrames) n += f.size();
  return n;
}

enum class Answers { kFrames, kWhole, kRefusal, kNothing };

// Answers from OnRequest, or (suspend) from Resume after a real trip round the event loop, as
// a cache whose lookup went to its L2 would. Records what OnComplete saw.
class AnsweringFilter : public Filter {
 public:
  AnsweringFilter(Answers answers, bool suspend) : answers_(answers), suspend_(suspend) {}

  FilterStatus OnRequest(RequestContext& context) override {
    if (suspend_) return FilterStatus::kSuspend;
    Answer(context);
    return FilterStatus::kRespond;
  }
  net::awaitable<FilterStatus> Resume(RequestContext& context) override {
    co_await net::post(co_await net::this_coro::executor, net::use_awaitable);
    Answer(context);
    co_return FilterStatus::kRespond;
  }
  void OnComplete(RequestContext& context) override {
    ++completed;
    status_at_complete = context.status;
    output_at_complete = context.output_bytes;
  }

  int completed = 0;
  int status_at_complete = 0;
  int64_t output_at_complete = -1;

 private:
  void Answer(RequestContext& context) {
    switch (answers_) {
      case Answers::kFrames:
        context.answer.emplace();
        context.answer->content_type = "text/event-stream";
        context.answer->AddHeader("X-Cache", "hit");
        context.answer->stream = std::make_unique<FramesAnswerStream>(kFrames);
        break;
      case Answers::kWhole:
        context.answer.emplace();
        context.answer->status = 203;
        context.answer->content_type = "application/json";
        context.answer->AddHeader("X-Cache", "hit");
        context.answer->body = R"({"cached":true})";
        break;
      case Answers::kRefusal:
        context.refusal = Error{ErrorCode::kForbidden, "not for you", ""};
        break;
      case Answers::kNothing:
        break;
    }
  }

  const Answers answers_;
  const bool suspend_;
};

// A governed door as the real ones are written: Start, credentials, the chain, then either
// AnswerFromChain or its own work, Complete, Finish. Its errors have their own shape.
class TestDoor final : public Door {
 public:
  explicit TestDoor(WorkerCore& core) : core_(core) {}
  void Add(std::unique_ptr<Filter> filter) { chain_.Add(std::move(filter)); }

  net::awaitable<void> Handle(http::Exchange& exchange, RouteMatch match) override {
    RequestContext ctx;
    core_.Start(exchange, match, ctx);
    WorkerCore::ReadCredentials(exchange, ctx);
    FilterStatus status = chain_.Run(ctx);
    if (status == FilterStatus::kSuspend) status = co_await chain_.Resume(ctx);
    if (status == FilterStatus::kRespond) {
      const core::RenderError render = [this](const Error& error) {
        return RenderError(-1, error);
      };
      co_await core_.AnswerFromChain(exchange, ctx, render, "application/x-door-error");
    } else {
      ++work_done;
      co_await core_.Respond(exchange, ctx, 200, "application/json", R"({"work":"done"})");
    }
    chain_.Complete(ctx);
    core_.Finish(exchange, ctx);
    final_status = ctx.status;
    final_error = ctx.error;
  }

  ErrorReply RenderError(int route, const Error& error) const override {
    return {HttpStatus(error.code), "door-error: " + error.message};
  }

  int work_done = 0;
  int final_status = 0;
  std::optional<ErrorCode> final_error;

 private:
  WorkerCore& core_;
  FilterChain chain_;
};

// One worker's core and the door on it.
class Rig {
 public:
  Rig() : router_(0), shared_(router_, probes_), core_(shared_, io_), door_(core_) {}

  // One request to the door on its own event loop (as a session would hand it over).
  void Send(RecordingExchange& exchange) {
    RouteMatch match;
    match.outcome = RouteMatch::Outcome::kFound;
    match.slot = router_.other_slot();
    testing::RunOnLoop(door_.Handle(exchange, match));
  }
  AnsweringFilter& AddAnswering(Answers answers, bool suspend = false) {
    auto filter = std::make_unique<AnsweringFilter>(answers, suspend);
    AnsweringFilter& ref = *filter;
    door_.Add(std::move(filter));
    return ref;
  }

  net::io_context io_;  // the worker's loop (the core's; each request runs on its own)
  Router router_;
  ProbeRegistry probes_;
  CoreShared shared_;
  WorkerCore core_;
  TestDoor door_;
  http::Request request_{boost::beast::http::verb::post, "/x", 11};
};

TEST(AnswerTest, AStreamAnswerReachesTheClientAsExactlyItsFramesAndCompletesAfter) {
  for (const bool suspend : {false, true}) {
    SCOPED_TRACE(suspend ? "answered from Resume" : "answered from OnRequest");
    Rig fresh;  // one door per case
    AnsweringFilter& filter = fresh.AddAnswering(Answers::kFrames, suspend);
    RecordingExchange exchange(fresh.request_);
    fresh.Send(exchange);

    EXPECT_EQ(fresh.door_.work_done, 0) << "the door's work does not run";
    EXPECT_EQ(exchange.heads(), 1);
    EXPECT_TRUE(exchange.streamed());
    EXPECT_EQ(exchange.status(), 200u);
    EXPECT_EQ(exchange.content_type(), "text/event-stream");
    EXPECT_EQ(exchange.head_lines(), "X-Cache: hit\r\n");
    EXPECT_EQ(exchange.writes(), kFrames) << "one write per frame, in order";
    std::string joined;
    for (const std::string& f : kFrames) joined += f;
    EXPECT_EQ(exchange.body(), joined);
    EXPECT_TRUE(exchange.ended());
    EXPECT_EQ(exchange.bytes_sent(), FramesBytes());
    EXPECT_EQ(filter.completed, 1) << "OnComplete still runs, once";
    EXPECT_EQ(filter.status_at_complete, 200);
    EXPECT_EQ(filter.output_at_complete, static_cast<int64_t>(FramesBytes()))
        << "the stream had run when OnComplete did";
    EXPECT_EQ(fresh.door_.final_status, 200);
    EXPECT_FALSE(fresh.door_.final_error);
  }
}

TEST(AnswerTest, AWholeAnswerIsSentWithItsStatusHeadersAndBody) {
  Rig rig;
  AnsweringFilter& filter = rig.AddAnswering(Answers::kWhole);
  RecordingExchange exchange(rig.request_);
  rig.Send(exchange);
  EXPECT_EQ(rig.door_.work_done, 0);
  EXPECT_FALSE(exchange.streamed());
  EXPECT_EQ(exchange.status(), 203u);
  EXPECT_EQ(exchange.content_type(), "application/json");
  EXPECT_EQ(exchange.head_lines(), "X-Cache: hit\r\n");
  EXPECT_EQ(exchange.body(), R"({"cached":true})");
  EXPECT_EQ(filter.completed, 1);
  EXPECT_EQ(rig.door_.final_status, 203);
}

TEST(AnswerTest, ARefusalIsRenderedInTheDoorsShapeWithItsCode) {
  Rig rig;
  AnsweringFilter& filter = rig.AddAnswering(Answers::kRefusal, /*suspend=*/true);
  RecordingExchange exchange(rig.request_);
  rig.Send(exchange);
  EXPECT_EQ(rig.door_.work_done, 0);
  EXPECT_EQ(exchange.status(), 403u);
  EXPECT_EQ(exchange.content_type(), "application/x-door-error");
  EXPECT_EQ(exchange.body(), "door-error: not for you");
  EXPECT_EQ(rig.door_.final_error, ErrorCode::kForbidden);
  EXPECT_EQ(filter.completed, 1);
}

TEST(AnswerTest, AFilterThatRespondsWithNothingIsAnInternalError) {
  Rig rig;
  rig.AddAnswering(Answers::kNothing);
  RecordingExchange exchange(rig.request_);
  rig.Send(exchange);
  EXPECT_EQ(exchange.status(), 500u);
  EXPECT_EQ(rig.door_.final_error, ErrorCode::kInternal);
}

TEST(AnswerTest, AClientThatLeavesMidStreamStopsTheReplayAndIsA499) {
  Rig rig;
  AnsweringFilter& filter = rig.AddAnswering(Answers::kFrames);
  RecordingExchange exchange(rig.request_, /*writes_before_gone=*/1);
  rig.Send(exchange);
  EXPECT_EQ(exchange.writes(), std::vector<std::string>{kFrames[0]}) << "nothing after the cut";
  EXPECT_FALSE(exchange.ended());
  EXPECT_EQ(rig.door_.final_status, 499);
  EXPECT_EQ(filter.completed, 1);
  EXPECT_EQ(filter.output_at_complete, static_cast<int64_t>(kFrames[0].size()));
}

TEST(AnswerTest, AHeadRequestGetsTheHeadAndNoBody) {
  Rig rig;
  rig.AddAnswering(Answers::kFrames);
  rig.request_.method(boost::beast::http::verb::head);
  RecordingExchange streamed(rig.request_);
  rig.Send(streamed);
  EXPECT_EQ(streamed.status(), 200u);
  EXPECT_TRUE(streamed.writes().empty());
  EXPECT_TRUE(streamed.ended());

  Rig whole;
  whole.AddAnswering(Answers::kWhole);
  whole.request_.method(boost::beast::http::verb::head);
  RecordingExchange sent(whole.request_);
  whole.Send(sent);
  EXPECT_EQ(sent.status(), 203u);
  EXPECT_EQ(sent.body(), "");
}

// The governance filter in a door with its own error shape: the door's work and the door's
// refusal both carry x-ratelimit-*, the refusal Retry-After too.
TEST(AnswerTest, GovernanceHeadersAreOnTheDoorsAnswersAndOnItsRefusalsInItsShape) {
  gt::Fixture fixture = gt::MakeFixture();
  fixture.data.plans[0].rpm = 2;
  Result<governance::SnapshotPtr> built =
      governance::GovernanceSnapshot::Build(fixture.data, nullptr, gt::TestCounters());
  ASSERT_TRUE(built.ok());
  governance::SnapshotCell cell(built.value());
  Result<governance::SecretVerifier> verifier = governance::SecretVerifier::Create();
  ASSERT_TRUE(verifier.ok());
  Rig rig;  // after the cell: its filter reads the cell until the rig goes
  rig.door_.Add(std::make_unique<GovernanceFilter>(cell, std::move(verifier.value())));
  rig.request_.set(boost::beast::http::field::authorization, "Bearer " + fixture.active_key);

  for (const char* remaining : {"1", "0"}) {
    RecordingExchange admitted(rig.request_);
    rig.Send(admitted);
    EXPECT_EQ(admitted.status(), 200u);
    EXPECT_EQ(admitted.body(), R"({"work":"done"})");
    EXPECT_EQ(admitted.response_headers().Find("x-ratelimit-limit-requests"), "2");
    EXPECT_EQ(admitted.response_headers().Find("x-ratelimit-remaining-requests"), remaining);
    EXPECT_NE(admitted.response_headers().Find("x-ratelimit-reset-requests"), "");
    EXPECT_EQ(admitted.response_headers().Find("retry-after"), "") << "admitted: no retry";
  }
  RecordingExchange refused(rig.request_);
  rig.Send(refused);
  EXPECT_EQ(refused.status(), 429u);
  EXPECT_EQ(refused.content_type(), "application/x-door-error");
  EXPECT_TRUE(refused.body().starts_with("door-error: ")) << refused.body();
  EXPECT_EQ(rig.door_.final_error, ErrorCode::kRateLimited);
  EXPECT_EQ(refused.response_headers().Find("x-ratelimit-limit-requests"), "2");
  EXPECT_EQ(refused.response_headers().Find("x-ratelimit-remaining-requests"), "0");
  EXPECT_GE(std::stoi(std::string(refused.response_headers().Find("retry-after"))), 1);
  EXPECT_NE(refused.head_lines().find("Retry-After: "), std::string::npos)
      << "on the wire, with the head";
  EXPECT_EQ(rig.door_.work_done, 2);
}

}  // namespace
}  // namespace turnpike::core
