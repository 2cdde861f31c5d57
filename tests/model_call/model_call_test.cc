// ModelCall against a scripted upstream (a real http::Server on port 0): failover before the
// first byte, every attempt failing, an in-stream error after the first byte, the caller
// leaving (before an answer, and mid-stream with and without another client's sink), and the
// identity and translated shapes of streamed and whole answers.
#include "model_call/model_call.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../http/running_server.h"
#include "config/config.h"
#include "http/exchange.h"
#include "http/server.h"
#include "providers/openai/openai_provider.h"
#include "providers/registry.h"

namespace turnpike::model_call {
namespace {
namespace net = boost::asio;

constexpr std::string_view kChunk1 =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"up\",\"choices\":"
    "[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
constexpr std::string_view kChunk2 =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"up\",\"choices\":"
    "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n";
constexpr std::string_view kDone = "data: [DONE]\n\n";
constexpr std::string_view kWhole =
    R"({"id":"c1","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,)"
    R"("message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})";

// The upstream, by the body's marker: "fail" 503; "cut" one chunk then the connection drops;
// "stream" the whole stream; else a whole answer. Counts what it got.
class ScriptedUpstream : public http::Handler {
 public:
  explicit ScriptedUpstream(std::atomic<int>& requests) : requests_(requests) {}
  net::awaitable<void> Handle(http::Exchange& exchange) override {
    ++requests_;
    const std::string body = exchange.request().body();
    if (body.find("fail") != std::string::npos) {
      exchange.response_headers().Add("Retry-After", int64_t{0});
      std::string error = R"({"error":{"message":"overloaded","type":"server_error"}})";
      co_await exchange.Respond(503, "application/json", std::move(error));
      co_return;
    }
    if (body.find("stream") != std::string::npos) {
      co_await exchange.StartStream(200, "text/event-stream");
      co_await exchange.Write(kChunk1);
      if (body.find("cut") != std::string::npos) co_return;  // no end: the stream is cut
      co_await exchange.Write(kChunk2);
      co_await exchange.Write(kDone);
      co_await exchange.EndStream();
      co_return;
    }
    std::string answer(kWhole);
    co_await exchange.Respond(200, "application/json", std::move(answer));
  }
  std::string RenderError(std::string_view, const Error& error) const override {
    return error.message;
  }

 private:
  std::atomic<int>& requests_;
};

using Running = http::testing::RunningServer;

// Writes down every call it gets, in order.
class LogSink : public AnswerSink {
 public:
  explicit LogSink(bool serves_client = true) : serves_client_(serves_client) {}
  void OnStart(const AnswerStart& start) override {
    log.push_back(std::string("start ") + (start.identity ? "identity" : "translated") +
                  (start.stream ? " stream" : " whole"));
  }
  void OnEvent(const providers::StreamEvent& event) override {
    events.push_back(event.kind);
    if (event.kind == providers::EventKind::kTextDelta) text += event.text;
  }
  void OnFrames(std::span<const IdentityFrame> read) override {
    for (const IdentityFrame& frame : read) frames += frame.bytes;
  }
  void OnWhole(const WholeAnswer& answer) override {
    log.push_back("whole " + std::to_string(answer.status));
    whole = answer.response != nullptr ? answer.response->text : std::string(answer.body);
  }
  net::awaitable<bool> Flush() override {
    ++flushes;
    if (leave_at_flush > 0 && flushes == leave_at_flush) {
      if (call != nullptr) call->Abandon();
      co_return false;
    }
    co_return true;
  }
  void OnEnd(const Error* error) override { log.push_back(error == nullptr ? "end" : "end error"); }
  bool serves_client() const override { return serves_client_; }

  std::vector<std::string> log;
  std::vector<providers::EventKind> events;
  std::string frames, text, whole;
  int flushes = 0;
  int leave_at_flush = 0;  // > 0: this Flush says the client left (and abandons the call)
  ModelCall* call = nullptr;

 private:
  const bool serves_client_;
};

// Sends each deployment its upstream model name as the marker (plus `extra`).
class MarkerSource : public AttemptSource {
 public:
  bool IsIdentity(const DeploymentTarget&) const override { return identity; }
  Result<std::string> Body(const DeploymentTarget& target, const providers::Provider&,
                           bool) override {
    ++bodies;
    if (abandon_at_body > 0 && bodies == abandon_at_body) call->Abandon();
    return std::string(R"({"model":")") + target.upstream_model + extra + "\"}";
  }
  bool identity = true;
  std::string extra;
  int bodies = 0;
  int abandon_at_body = 0;
  ModelCall* call = nullptr;
};

class ModelCallTest : public ::testing::Test {
 protected:
  ModelCallTest()
      : upstream_([this](int, net::io_context&) {
          return std::make_unique<ScriptedUpstream>(requests_);
        }),
        config_(config::ParseConfig(Yaml(upstream_.port()))),
        registry_(MakeRegistry()),
        routes_(RouteTable::Build(config_, *registry_)),
        tls_("", false),
        pool_(io_, tls_, upstream::PoolOptions{}),
        deps_{pool_,    call_options_, config_.routing, std::chrono::milliseconds{0}, 1 << 20,
              retries_, rng_} {}
  ~ModelCallTest() override { pool_.Shutdown(); }

  static std::string Yaml(uint16_t port) {
    const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    return "governance: {enabled: false}\n"
           "routing: {max_attempts: 2, backoff_base: 1ms, backoff_max: 1ms}\n"
           "models:\n"
           "  - name: m\n"
           "    deployments:\n"
           "      - {provider: openai, base_url: " +
           base +
           ", model: fail}\n"
           "      - {provider: openai, base_url: " +
           base + ", model: up}\n";
  }
  static std::unique_ptr<providers::Registry> MakeRegistry() {
    auto registry = std::make_unique<providers::Registry>();
    registry->Add(std::make_unique<providers::openai::OpenAiProvider>());
    return registry;
  }

  // Plans `order` over model m's deployments (0: "fail", 1: "up").
  static AttemptPlan Plan(std::initializer_list<uint8_t> order) {
    AttemptPlan plan;
    for (uint8_t i : order) plan.order[plan.count++] = i;
    return plan;
  }

  CallEnd Run(ModelCall& call, MarkerSource& source, const AttemptPlan& plan, bool stream) {
    CallRequest request;
    request.model = routes_->Find("m");
    request.plan = &plan;
    request.source = &source;
    request.client = registry_->Find("openai");
    request.stream = stream;
    auto done = net::co_spawn(io_, call.Run(request), net::use_future);
    // Until the call ends (the pool's idle connections keep timers pending after it).
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io_.run_one();
    return done.get();
  }

  std::atomic<int> requests_{0};
  Running upstream_;
  const config::Config config_;
  std::unique_ptr<providers::Registry> registry_;
  std::shared_ptr<const RouteTable> routes_;
  upstream::TlsContexts tls_;
  net::io_context io_;
  upstream::Pool pool_;
  upstream::CallOptions call_options_;
  observability::Counter retries_;
  std::minstd_rand rng_{1};
  const CallDeps deps_;
  core::RequestContext ctx_;
};

TEST_F(ModelCallTest, FailsOverBeforeTheFirstByte) {
  ModelCall call(deps_, ctx_);
  LogSink sink;
  call.AddSink(sink);
  MarkerSource source;
  source.extra = " stream";
  EXPECT_EQ(Run(call, source, Plan({0, 1}), true), CallEnd::kDelivered);
  EXPECT_EQ(requests_, 2);
  EXPECT_EQ(retries_.value(), 1);
  EXPECT_EQ(ctx_.attempts_made, 2);
  EXPECT_EQ(call.target()->upstream_model, "up");
  // Nothing of the failed attempt reached the sink.
  EXPECT_EQ(sink.log, (std::vector<std::string>{"start identity stream", "end"}));
  EXPECT_EQ(sink.frames, std::string(kChunk1) + std::string(kChunk2) + std::string(kDone));
  EXPECT_EQ(ctx_.usage.prompt_tokens, 5);
  EXPECT_EQ(ctx_.usage.completion_tokens, 2);
  EXPECT_EQ(ctx_.finish_reason, "stop");
  EXPECT_FALSE(ctx_.error.has_value());
}

TEST_F(ModelCallTest, EveryAttemptFailingPassesTheLastAnswerOnAndCallsNoSink) {
  ModelCall call(deps_, ctx_);
  LogSink sink;
  call.AddSink(sink);
  MarkerSource source;
  EXPECT_EQ(Run(call, source, Plan({0, 0}), false), CallEnd::kFailed);
  EXPECT_EQ(requests_, 2);
  ASSERT_TRUE(call.failure().answer.has_value());
  EXPECT_EQ(call.failure().answer->status, 503u);
  EXPECT_EQ(call.failure().answer->retry_after_seconds, 0);
  EXPECT_NE(call.failure().answer->body.find("overloaded"), std::string::npos);
  EXPECT_TRUE(sink.log.empty());
}

TEST_F(ModelCallTest, AnUpstreamCutAfterTheFirstByteEndsTheAnswerWithAnError) {
  ModelCall call(deps_, ctx_);
  LogSink sink;
  call.AddSink(sink);
  MarkerSource source;
  source.identity = false;  // translated: the stream must end with its final event
  source.extra = " stream cut";
  EXPECT_EQ(Run(call, source, Plan({1}), true), CallEnd::kDelivered);
  EXPECT_EQ(sink.log, (std::vector<std::string>{"start translated stream", "end error"}));
  EXPECT_EQ(sink.text, "hi");
  ASSERT_TRUE(ctx_.error.has_value());
}

TEST_F(ModelCallTest, TranslatedStreamsArriveAsPivotEvents) {
  ModelCall call(deps_, ctx_);
  LogSink sink;
  call.AddSink(sink);
  MarkerSource source;
  source.identity = false;
  source.extra = " stream";
  EXPECT_EQ(Run(call, source, Plan({1}), true), CallEnd::kDelivered);
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_EQ(sink.text, "hi");
  ASSERT_FALSE(sink.events.empty());
  EXPECT_EQ(sink.events.front(), providers::EventKind::kStart);
  EXPECT_EQ(sink.events.back(), providers::EventKind::kEnd);
  EXPECT_EQ(sink.log.back(), "end");
  EXPECT_EQ(ctx_.usage.prompt_tokens, 5);
  EXPECT_NE(ctx_.phases.first_token, core::Clock::time_point{});
}

TEST_F(ModelCallTest, WholeAnswersAreBytesOnIdentityAndParsedWhenTranslated) {
  {
    ModelCall call(deps_, ctx_);
    LogSink sink;
    call.AddSink(sink);
    MarkerSource source;
    EXPECT_EQ(Run(call, source, Plan({1}), false), CallEnd::kDelivered);
    EXPECT_EQ(sink.whole, kWhole);
    EXPECT_EQ(sink.log, (std::vector<std::string>{"start identity whole", "whole 200", "end"}));
    EXPECT_EQ(sink.flushes, 1) << "a whole answer is complete once read: one Flush";
  }
  core::RequestContext translated_ctx;
  ModelCall call(deps_, translated_ctx);
  LogSink sink;
  call.AddSink(sink);
  MarkerSource source;
  source.identity = false;
  EXPECT_EQ(Run(call, source, Plan({1}), false), CallEnd::kDelivered);
  EXPECT_EQ(sink.whole, "hi there");
  EXPECT_EQ(translated_ctx.usage.completion_tokens, 2);
  EXPECT_EQ(translated_ctx.finish_reason, "stop");
}

TEST_F(ModelCallTest, AbandonedBeforeAnAnswerCallsNoSink) {
  ModelCall call(deps_, ctx_);
  LogSink sink;
  call.AddSink(sink);
  MarkerSource source;
  source.call = &call;
  source.abandon_at_body = 2;  // the client leaves while the second attempt is being built
  EXPECT_EQ(Run(call, source, Plan({0, 1}), false), CallEnd::kAbandoned);
  EXPECT_EQ(requests_, 1);
  EXPECT_EQ(ctx_.status, 499);
  EXPECT_TRUE(sink.log.empty());
}

TEST_F(ModelCallTest, TheLeaderLeavingEndsTheReadUnlessAnotherClientIsServed) {
  {
    // The leader leaves at its first frames' Flush; a recorder serves no client: the upstream
    // exchange is cancelled and nothing more is delivered.
    ModelCall call(deps_, ctx_);
    LogSink leader, recorder(/*serves_client=*/false);
    leader.call = &call;
    leader.leave_at_flush = 2;
    call.AddSink(leader);
    call.AddSink(recorder);
    MarkerSource source;
    source.extra = " stream";
    EXPECT_EQ(Run(call, source, Plan({1}), true), CallEnd::kDelivered);
    EXPECT_EQ(ctx_.status, 499);
    EXPECT_EQ(recorder.log, (std::vector<std::string>{"start identity stream", "end error"}));
  }
  // A second client's sink stays: the call reads on to the end for it.
  core::RequestContext ctx;
  ModelCall call(deps_, ctx);
  LogSink leader, follower;
  leader.call = &call;
  leader.leave_at_flush = 2;
  call.AddSink(leader);
  call.AddSink(follower);
  MarkerSource source;
  source.extra = " stream";
  EXPECT_EQ(Run(call, source, Plan({1}), true), CallEnd::kDelivered);
  EXPECT_EQ(follower.frames, std::string(kChunk1) + std::string(kChunk2) + std::string(kDone));
  EXPECT_EQ(follower.log, (std::vector<std::string>{"start identity stream", "end"}));
  EXPECT_EQ(leader.log, (std::vector<std::string>{"start identity stream"}));
}

}  // namespace
}  // namespace turnpike::model_call
