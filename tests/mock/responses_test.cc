// The mock's POST /v1/responses (the upstream the gateway's `api: responses` deployments call in
// the integration tests): whole and streamed answers, length cut, tool calls, and the refusal of
// a body that lets the upstream store the response.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;
constexpr std::string_view kPath = "/v1/responses";
constexpr int kTokens = 4;

MockOptions Options() {
  MockOptions options;
  options.tokens = kTokens;
  return options;
}

std::string Body(std::string_view extra = {}) {
  std::string body = R"({"model":"up","input":"Hi","store":false)";
  if (!extra.empty()) body += "," + std::string(extra);
  return body + "}";
}

std::string Content(int tokens) {
  std::string text;
  for (int i = 0; i < tokens; ++i) text += "tok" + std::to_string(i) + " ";
  return text;
}

TEST(MockResponses, WholeAnswerIsAResponseObject) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kPath, Body(R"("instructions":"Be brief.")"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value answer = json::parse(reply.body);
  EXPECT_EQ(answer.at("object"), "response");
  EXPECT_EQ(answer.at("status"), "completed");
  EXPECT_EQ(answer.at("model"), "up");
  EXPECT_EQ(answer.at("store"), false);
  EXPECT_EQ(answer.at("instructions"), "Be brief.");
  const json::value& message = answer.at("output").at(0);
  EXPECT_EQ(message.at("type"), "message");
  EXPECT_EQ(Text(message.at("content").at(0).at("text")), Content(kTokens));
  EXPECT_EQ(answer.at("usage").at("output_tokens"), kTokens);
}

TEST(MockResponses, MaxOutputTokensMakesItIncomplete) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kPath, Body(R"("max_output_tokens":2)"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value answer = json::parse(reply.body);
  EXPECT_EQ(answer.at("status"), "incomplete");
  EXPECT_EQ(answer.at("incomplete_details").at("reason"), "max_output_tokens");
  EXPECT_EQ(Text(answer.at("output").at(0).at("content").at(0).at("text")), Content(2));
}

TEST(MockResponses, StreamEndsWithCompletedAndUsage) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kPath, Body(R"("stream":true)"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.headers["content-type"], "text/event-stream");
  const std::vector<json::value> events = SseEvents(reply.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().at("type"), "response.created");
  std::string text;
  for (const json::value& event : events) {
    if (event.at("type") == "response.output_text.delta") text += Text(event.at("delta"));
  }
  EXPECT_EQ(text, Content(kTokens));
  const json::value& last = events.back();
  EXPECT_EQ(last.at("type"), "response.completed");
  EXPECT_EQ(last.at("response").at("usage").at("output_tokens"), kTokens);
}

TEST(MockResponses, ToolCallIsAFunctionCallItem) {
  RunningMock mock(Options());
  Reply reply = Send(mock.port(), "POST", kPath,
                     Body(R"("tools":[{"type":"function","name":"get_weather","parameters":{}}])"),
                     {{"x-mock-tool-call", "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value call = json::parse(reply.body).at("output").at(0);
  EXPECT_EQ(call.at("type"), "function_call");
  EXPECT_EQ(call.at("name"), "get_weather");
  EXPECT_EQ(json::parse(Text(call.at("arguments"))), json::parse(R"({"location":"Paris"})"));
}

TEST(MockResponses, RefusesABodyThatLetsTheUpstreamStore) {
  RunningMock mock(Options());
  for (std::string_view body :
       {R"({"model":"up","input":"Hi"})", R"({"model":"up","input":"Hi","store":true})"}) {
    Reply reply = Send(mock.port(), "POST", kPath, body);
    EXPECT_EQ(reply.status, 400u) << body;
    EXPECT_EQ(json::parse(reply.body).at("error").at("param"), "store") << reply.body;
  }
  Reply no_input = Send(mock.port(), "POST", kPath, R"({"model":"up","store":false})");
  EXPECT_EQ(no_input.status, 400u);
  EXPECT_EQ(json::parse(no_input.body).at("error").at("param"), "input") << no_input.body;
}

}  // namespace
}  // namespace turnpike::mock::testing
