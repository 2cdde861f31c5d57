// Drives RunBench against a fake server and checks what was counted. Every run is bounded by
// --requests, so the assertions are on counts, never on timings.
#include "loadgen/driver.h"

#include <gtest/gtest.h>

#include <string>

#include "fake_server.h"
#include "loadgen/request_template.h"

namespace turnpike::loadgen {
namespace {

using testing_support::FakeServer;

// Far longer than any of these runs takes: the --requests bound is what ends them.
constexpr double kGenerousDurationS = 60;

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}";
const std::string kSse =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    "f\r\ndata: {\"a\":1}\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";

BenchOptions Options(int port, int connections, uint64_t requests) {
  BenchOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions";
  o.connections = connections;
  o.duration_s = kGenerousDurationS;
  o.max_requests = requests;
  o.body = std::string(kDefaultBody);
  o.quiet = true;
  return o;
}

TEST(DriverTest, StopsAfterExactlyTheRequestedCount) {
  FakeServer server(kOk, kOk);
  const BenchResult r = RunBench(Options(server.port(), 3, 50), nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 50u);
  EXPECT_EQ(r.stats.failed(), 0u);
  EXPECT_EQ(r.stats.latency.count(), 50u);
  EXPECT_EQ(r.stats.body_bytes, 50u * 11);
  EXPECT_EQ(server.requests(), 50);
  EXPECT_EQ(server.connections(), 3);  // keep-alive: one connection each
}

TEST(DriverTest, EveryKthRequestStreams) {
  FakeServer server(kOk, kSse);
  BenchOptions o = Options(server.port(), 1, 40);
  o.stream_every = 4;
  const BenchResult r = RunBench(o, nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 40u);
  EXPECT_EQ(r.stats.streams_ok, 10u);
  EXPECT_EQ(r.stats.ttft.count(), 10u);
  EXPECT_EQ(server.stream_requests(), 10);
}

TEST(DriverTest, Non2xxCountedByStatus) {
  FakeServer server("HTTP/1.1 503 Unavailable\r\nContent-Length: 0\r\n\r\n", kOk);
  const BenchResult r = RunBench(Options(server.port(), 2, 10), nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 0u);
  EXPECT_EQ(r.stats.count(Outcome::kHttpStatus), 10u);
  ASSERT_EQ(r.stats.statuses.count(503), 1u);
  EXPECT_EQ(r.stats.statuses.at(503), 10u);
  EXPECT_EQ(r.stats.latency.count(), 0u);
}

TEST(DriverTest, ReconnectsWhenTheServerCloses) {
  FakeServer server("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", kOk);
  const BenchResult r = RunBench(Options(server.port(), 1, 5), nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 5u);
  EXPECT_EQ(server.connections(), 5);
}

TEST(DriverTest, StreamWithoutDoneIsAFailure) {
  const std::string no_done =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nf\r\ndata: {\"a\":1}\n\n\r\n0\r\n\r\n";
  FakeServer server(kOk, no_done);
  BenchOptions o = Options(server.port(), 1, 6);
  o.stream_every = 2;
  const BenchResult r = RunBench(o, nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 3u);
  EXPECT_EQ(r.stats.count(Outcome::kStreamMissingDone), 3u);
  EXPECT_EQ(r.stats.streams_ok, 0u);
}

TEST(DriverTest, RejectsBadOptionsBeforeSending) {
  BenchOptions o = Options(1, 0, 1);
  EXPECT_THROW(RunBench(o, nullptr), std::invalid_argument);
  o = Options(1, 1, 1);
  o.url = "https://127.0.0.1/";
  EXPECT_THROW(RunBench(o, nullptr), std::invalid_argument);
}

// --agent: a conversation is created (the fake answers every plain request with an id), then
// --turns turns are sent on it, then the next conversation.
const std::string kConversation =
    "HTTP/1.1 200 OK\r\nContent-Length: 39\r\n\r\n{\"id\":\"conv_1\",\"object\":\"conversation\"}";
const std::string kBusy = "HTTP/1.1 409 Conflict\r\nContent-Length: 11\r\n\r\n{\"error\":1}";
const std::string kTurnStream =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    "38\r\nevent: response.output_text.delta\ndata: {\"delta\":\"Hi\"}\n\n\r\n"
    "2e\r\nevent: response.completed\ndata: {\"type\":\"x\"}\n\n\r\n0\r\n\r\n";

BenchOptions AgentOptions(int port, uint64_t turns_total, int turns) {
  BenchOptions o = Options(port, 1, turns_total);
  o.url = "http://127.0.0.1:" + std::to_string(port);
  o.agent = "agt_1";
  o.turns = turns;
  return o;
}

TEST(DriverTest, AgentTurnsOnAConversationPerConnection) {
  FakeServer server(kConversation, kTurnStream);
  BenchOptions o = AgentOptions(server.port(), 20, 4);
  o.stream_every = 2;
  const BenchResult r = RunBench(o, nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 20u);
  EXPECT_EQ(r.stats.failed(), 0u);
  EXPECT_EQ(r.stats.conversations, 5u);
  EXPECT_EQ(r.stats.streams_ok, 10u);
  EXPECT_EQ(r.stats.ttft.count(), 10u);  // each stream's first output_text delta
  EXPECT_EQ(server.requests(), 25);      // 5 creations + 20 turns
  EXPECT_EQ(server.stream_requests(), 10);
}

TEST(DriverTest, AgentTurnRefusedBusyIsAFailure) {
  FakeServer server(kConversation, kBusy);
  BenchOptions o = AgentOptions(server.port(), 6, 3);
  o.stream_every = 1;  // every turn streams, and the fake answers each with a 409
  const BenchResult r = RunBench(o, nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.ok(), 0u);
  EXPECT_EQ(r.stats.failed(), 6u);
  EXPECT_EQ(r.stats.count(Outcome::kHttpStatus), 6u);
  EXPECT_EQ(r.stats.statuses.at(409), 6u);
  EXPECT_EQ(r.stats.conversations, 2u);  // the conversation is kept through failed turns
}

TEST(DriverTest, AgentCreationWithoutAnIdIsABadResponse) {
  FakeServer server(kOk, kTurnStream);
  const BenchResult r = RunBench(AgentOptions(server.port(), 4, 2), nullptr);
  server.Stop();
  EXPECT_EQ(r.stats.failed(), 4u);
  EXPECT_EQ(r.stats.count(Outcome::kBadResponse), 4u);
  EXPECT_EQ(r.stats.conversations, 0u);
  EXPECT_EQ(server.requests(), 4);  // creations only
}

}  // namespace
}  // namespace turnpike::loadgen
