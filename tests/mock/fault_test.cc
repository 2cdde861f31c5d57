// Injected faults (x-mock-fault and the random rates), errors, and the stats counters.
#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <thread>

#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;
constexpr std::string_view kChat = "/v1/chat/completions";
constexpr int kTokens = 8;
constexpr int kRetryAfter = 7;
// Polling for a count that another thread updates: bounded, never a timing assertion.
constexpr int kPollAttempts = 500;
constexpr std::chrono::milliseconds kPollInterval{10};

MockOptions Options() {
  MockOptions options;
  options.tokens = kTokens;
  options.retry_after_s = kRetryAfter;
  return options;
}

Headers Fault(std::string_view kind) { return {{"x-mock-fault", std::string(kind)}}; }

uint64_t FaultCount(uint16_t port, std::string_view kind) {
  return Stats(port).at("faults_injected").at(kind).to_number<uint64_t>();
}

uint64_t Counter(uint16_t port, std::string_view name) {
  return Stats(port).at(name).to_number<uint64_t>();
}

void ExpectEnvelope(const Reply& reply, std::string_view type, std::string_view code) {
  json::value error = json::parse(reply.body).at("error");
  EXPECT_FALSE(error.at("message").as_string().empty());
  EXPECT_EQ(Text(error.at("type")), type);
  EXPECT_EQ(Text(error.at("code")), code);
  EXPECT_TRUE(error.as_object().contains("param"));
}

TEST(MockFault, Http500) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(true), Fault("500"));
  EXPECT_EQ(reply.status, 500u);
  ExpectEnvelope(reply, "server_error", "internal_error");
  EXPECT_EQ(FaultCount(mock.port(), "500"), 1u);
}

TEST(MockFault, Http503) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false), Fault("503"));
  EXPECT_EQ(reply.status, 503u);
  ExpectEnvelope(reply, "server_error", "unavailable");
  EXPECT_EQ(FaultCount(mock.port(), "503"), 1u);
}

TEST(MockFault, Http429CarriesRetryAfter) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false), Fault("429"));
  EXPECT_EQ(reply.status, 429u);
  EXPECT_EQ(reply.headers["Retry-After"], std::to_string(kRetryAfter));
  ExpectEnvelope(reply, "rate_limit_error", "rate_limited");
  EXPECT_EQ(FaultCount(mock.port(), "429"), 1u);
}

TEST(MockFault, ResetCutsTheStreamAfterHalfTheTokens) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(true), Fault("reset"));
  EXPECT_TRUE(reply.head_received);
  EXPECT_TRUE(reply.error) << "the stream must not end cleanly";
  EXPECT_EQ(reply.body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(reply.body.find("tok" + std::to_string(kTokens / 2)), std::string::npos);
  EXPECT_EQ(FaultCount(mock.port(), "reset"), 1u);
  EXPECT_EQ(Counter(mock.port(), "completion_tokens"), static_cast<uint64_t>(kTokens / 2));
  EXPECT_EQ(Counter(mock.port(), "streams_completed"), 0u);
}

TEST(MockFault, ResetBeforeHead) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(true), Fault("reset-before-head"));
  EXPECT_FALSE(reply.head_received);
  EXPECT_TRUE(reply.error);
  EXPECT_EQ(FaultCount(mock.port(), "reset-before-head"), 1u);
  EXPECT_EQ(Counter(mock.port(), "streams_started"), 0u);
}

TEST(MockFault, SlowHeadersThenANormalReply) {
  RunningMock mock(Options());
  Headers headers = Fault("slow-headers");
  headers.emplace_back("x-mock-slow-headers-ms", "20");
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false), headers);
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(json::parse(reply.body).at("choices").at(0).at("finish_reason"), "stop");
  EXPECT_EQ(FaultCount(mock.port(), "slow-headers"), 1u);
}

TEST(MockFault, CloseWithoutDone) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(true, true), Fault("close-without-done"));
  EXPECT_EQ(reply.status, 200u);
  EXPECT_FALSE(reply.error) << "the body ends cleanly: " << reply.error.message();
  std::vector<std::string> data = SseData(reply.body);
  ASSERT_EQ(data.size(), static_cast<size_t>(kTokens + 1)) << reply.body;
  EXPECT_NE(data.back(), "[DONE]");
  EXPECT_EQ(reply.body.find("finish_reason\":\"stop"), std::string::npos);
  EXPECT_EQ(FaultCount(mock.port(), "close-without-done"), 1u);
  EXPECT_EQ(Counter(mock.port(), "streams_completed"), 0u);
}

TEST(MockFault, UnknownFaultIsABadRequest) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, ChatBody(false), Fault("explode"));
  EXPECT_EQ(reply.status, 400u);
  EXPECT_EQ(json::parse(reply.body).at("error").at("param"), "x-mock-fault");
}

TEST(MockFault, BadDelayHeaderIsABadRequest) {
  RunningMock mock(Options());
  Reply reply =
      Send(mock.port(), "POST", kChat, ChatBody(true), {{"x-mock-first-token-delay-ms", "soon"}});
  EXPECT_EQ(reply.status, 400u);
  EXPECT_EQ(json::parse(reply.body).at("error").at("param"), "x-mock-first-token-delay-ms");
}

TEST(MockFault, MalformedJsonIsA400Envelope) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, R"({"model":"x","messages":[)");
  EXPECT_EQ(reply.status, 400u);
  ExpectEnvelope(reply, "invalid_request_error", "invalid_request");
  EXPECT_TRUE(json::parse(reply.body).at("error").at("param").is_null());
}

TEST(MockFault, MistypedFieldNamesTheParam) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kChat, R"({"model":"x","messages":[],"stream":"yes"})");
  EXPECT_EQ(reply.status, 400u);
  EXPECT_EQ(json::parse(reply.body).at("error").at("param"), "stream");
}

TEST(MockFault, FailRateOneFailsEveryRequest) {
  MockOptions options = Options();
  options.fail_rate = 1;
  RunningMock mock(options);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Send(mock.port(), "POST", kChat, ChatBody(false)).status, 500u);
  }
  EXPECT_EQ(FaultCount(mock.port(), "500"), 3u);
}

TEST(MockFault, ResetRateOnlyResetsStreams) {
  MockOptions options = Options();
  options.reset_rate = 1;
  RunningMock mock(options);
  EXPECT_EQ(Send(mock.port(), "POST", kChat, ChatBody(false)).status, 200u);
  EXPECT_TRUE(Send(mock.port(), "POST", kChat, ChatBody(true)).error);
  EXPECT_EQ(FaultCount(mock.port(), "reset"), 1u);
}

TEST(MockStats, CountsAClientThatLeavesMidStream) {
  RunningMock mock(Options());
  // A long pause after tok0: the client leaves during it.
  Headers slow = {{"x-mock-inter-token-ms", "60000"}};
  ReadUntilThenLeave(mock.port(), ChatBody(true), slow, "tok0 ");
  uint64_t gone = 0;
  for (int i = 0; i < kPollAttempts && gone == 0; ++i) {
    std::this_thread::sleep_for(kPollInterval);
    gone = Counter(mock.port(), "client_disconnects");
  }
  EXPECT_EQ(gone, 1u);
  EXPECT_EQ(Counter(mock.port(), "streams_started"), 1u);
  EXPECT_EQ(Counter(mock.port(), "streams_completed"), 0u);
}

TEST(MockStats, CountsRequestsAndResets) {
  RunningMock mock(Options());
  Send(mock.port(), "POST", kChat, ChatBody(true));
  Send(mock.port(), "POST", kChat, ChatBody(false));
  EXPECT_EQ(Counter(mock.port(), "requests"), 2u);
  EXPECT_EQ(Counter(mock.port(), "streams_started"), 1u);
  EXPECT_EQ(Counter(mock.port(), "streams_completed"), 1u);
  EXPECT_EQ(Counter(mock.port(), "completion_tokens"), static_cast<uint64_t>(2 * kTokens));
  Reply reset = Send(mock.port(), "POST", "/mock/stats/reset");
  EXPECT_EQ(reset.status, 200u);
  EXPECT_EQ(Counter(mock.port(), "requests"), 0u);
  EXPECT_EQ(Counter(mock.port(), "completion_tokens"), 0u);
  Send(mock.port(), "POST", kChat, ChatBody(false));
  EXPECT_EQ(Counter(mock.port(), "requests"), 1u);
}

TEST(MockStats, SumsOverWorkers) {
  MockOptions options = Options();
  options.workers = 2;
  RunningMock mock(options);
  constexpr int kRequests = 20;
  for (int i = 0; i < kRequests; ++i) Send(mock.port(), "POST", kChat, ChatBody(false));
  EXPECT_EQ(Counter(mock.port(), "requests"), static_cast<uint64_t>(kRequests));
}

TEST(MockRoutes, ModelsHealthAndUnknown) {
  RunningMock mock(Options());
  Reply models = Send(mock.port(), "GET", "/v1/models");
  ASSERT_EQ(models.status, 200u);
  json::value list = json::parse(models.body);
  EXPECT_EQ(list.at("object"), "list");
  ASSERT_GE(list.at("data").as_array().size(), 2u);
  EXPECT_EQ(list.at("data").at(0).at("object"), "model");
  EXPECT_EQ(Send(mock.port(), "GET", "/healthz").status, 200u);
  Reply missing = Send(mock.port(), "GET", "/v1/nothing");
  EXPECT_EQ(missing.status, 404u);
  ExpectEnvelope(missing, "invalid_request_error", "not_found");
  EXPECT_EQ(Send(mock.port(), "GET", kChat).status, 405u);
}

}  // namespace
}  // namespace turnpike::mock::testing
