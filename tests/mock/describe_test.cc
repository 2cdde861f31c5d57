// `--reply describe`: the conversation each wire's request carries, read into the description
// (one transcript per wire), and that description as the reply text of every wire, whole and
// streamed, never cut by the token limits.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "mock/chat_request.h"
#include "mock/conversation.h"
#include "mock_client.h"

namespace turnpike::mock::testing {
namespace {

namespace json = boost::json;

std::string Joined(const std::vector<std::string>& tokens) {
  std::string text;
  for (const std::string& token : tokens) text += token;
  return text;
}

struct Transcript {
  std::string_view name;
  Wire wire;
  std::string_view body;
  std::string_view description;
};

// Each wire's spelling of roles, parts, tool calls and tool results.
const Transcript kTranscripts[] = {
    {"OpenAiChat", Wire::kOpenAi,
     R"({"model":"m","messages":[{"role":"system","content":"You are terse."},
         {"role":"user","content":"hi"},{"role":"assistant","content":"hello"},
         {"role":"user","content":"my name is Ann"}]})",
     "system: You are terse. | user: hi | assistant: hello | user: my name is Ann"},
    {"OpenAiChatToolsAndParts", Wire::kOpenAi,
     R"({"model":"m","messages":[
         {"role":"developer","content":[{"type":"text","text":"Be "},{"type":"text","text":"brief."}]},
         {"role":"user","content":[{"type":"text","text":"weather?"},
                                   {"type":"image_url","image_url":{"url":"data:x"}}]},
         {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
           "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
         {"role":"tool","tool_call_id":"c1","content":"sunny"},
         {"role":"assistant","content":""}]})",
     R"(system: Be brief. | user: weather? | assistant: call get_weather({"city":"Paris"}) | )"
     R"(tool: sunny | assistant:)"},
    {"CohereToolPlanAndDocuments", Wire::kCohere,
     R"({"model":"m","messages":[{"role":"user","content":"weather?"},
         {"role":"assistant","tool_plan":"I will look.","tool_calls":[{"id":"c1",
           "type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
         {"role":"tool","tool_call_id":"c1",
          "content":[{"type":"document","document":{"data":"sunny"}}]}]})",
     "user: weather? | assistant: I will look. | assistant: call get_weather({}) | tool: sunny"},
    {"OllamaObjectArguments", Wire::kOllama,
     R"({"model":"m","messages":[{"role":"user","content":"weather?"},
         {"role":"assistant","content":"","tool_calls":[
           {"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},
         {"role":"tool","content":"sunny","tool_name":"get_weather"}]})",
     R"(user: weather? | assistant: call get_weather({"city":"Paris"}) | tool: sunny)"},
    {"AnthropicSystemField", Wire::kAnthropic,
     R"({"model":"m","max_tokens":100,"system":"You are terse.",
         "messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},
                     {"role":"user","content":"my name is Ann"}]})",
     "system: You are terse. | user: hi | assistant: hello | user: my name is Ann"},
    {"AnthropicBlocks", Wire::kAnthropic,
     R"({"model":"m","max_tokens":100,"system":[{"type":"text","text":"You are terse."}],
         "messages":[{"role":"user","content":"weather?"},
           {"role":"assistant","content":[{"type":"text","text":"Looking."},
             {"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Paris"}}]},
           {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",
             "content":[{"type":"text","text":"sunny"}]},{"type":"text","text":"thanks"}]}]})",
     R"(system: You are terse. | user: weather? | assistant: Looking. | )"
     R"(assistant: call get_weather({"city":"Paris"}) | tool: sunny | user: thanks)"},
    {"ResponsesItems", Wire::kResponses,
     R"({"model":"m","store":false,"instructions":"Be brief.","input":[
         {"role":"user","content":"weather?"},
         {"type":"reasoning","id":"r1","summary":[]},
         {"type":"function_call","call_id":"c1","name":"get_weather",
          "arguments":"{\"city\":\"Paris\"}"},
         {"type":"function_call_output","call_id":"c1","output":"sunny"},
         {"type":"message","role":"assistant",
          "content":[{"type":"output_text","text":"It is sunny."}]},
         {"role":"developer","content":[{"type":"input_text","text":"Stay brief."}]}]})",
     R"(system: Be brief. | user: weather? | assistant: call get_weather({"city":"Paris"}) | )"
     R"(tool: sunny | assistant: It is sunny. | system: Stay brief.)"},
    {"ResponsesStringInput", Wire::kResponses, R"({"model":"m","store":false,"input":"Hi"})",
     "user: Hi"},
    {"GeminiModelTurns", Wire::kGemini,
     R"({"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[
         {"role":"user","parts":[{"text":"my name is "},{"text":"Ann"}]},
         {"role":"model","parts":[{"text":"hmm","thought":true},{"text":"Hello Ann."}]},
         {"role":"user","parts":[{"text":"weather?"}]},
         {"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},
         {"role":"user","parts":[{"functionResponse":{"name":"get_weather",
                                                      "response":{"result":"sunny"}}}]},
         {"parts":[{"text":"thanks"}]}]})",
     R"(system: Be brief. | user: my name is Ann | assistant: Hello Ann. | user: weather? | )"
     R"(assistant: call get_weather({"city":"Paris"}) | tool: {"result":"sunny"} | )"
     R"(user: thanks)"},
};

Result<ChatRequest> ParseAs(BodyParser& parser, Wire wire, std::string_view body) {
  switch (wire) {
    case Wire::kAnthropic:
      return parser.ParseMessages(body);
    case Wire::kOllama:
      return parser.ParseOllama(body);
    case Wire::kResponses:
      return parser.ParseResponses(body);
    case Wire::kGemini:
      return parser.ParseGenerateContent(body, "gemini-test", false);
    default:
      return parser.Parse(body);
  }
}

TEST(MockDescribe, EachWireReadsItsConversation) {
  BodyParser parser(ReplyMode::kDescribe);
  for (const Transcript& transcript : kTranscripts) {
    Result<ChatRequest> chat = ParseAs(parser, transcript.wire, transcript.body);
    ASSERT_TRUE(chat.ok()) << transcript.name << ": " << chat.error().message;
    EXPECT_EQ(Joined(chat->description), transcript.description) << transcript.name;
  }
}

TEST(MockDescribe, TokensModeReadsNoConversation) {
  BodyParser parser;
  Result<ChatRequest> chat = parser.Parse(kTranscripts[0].body);
  ASSERT_TRUE(chat.ok());
  EXPECT_TRUE(chat->description.empty());
}

TEST(MockDescribe, SplitsAfterEachSpace) {
  const std::vector<std::string> expected = {"user: ", "a ", " ", "b"};
  EXPECT_EQ(SplitReplyTokens("user: a  b"), expected);
  EXPECT_TRUE(SplitReplyTokens("").empty());
  EXPECT_EQ(DescribeConversation({{"user", "hi"}, {"assistant", ""}}), "user: hi | assistant:");
}

// End to end: the reply text of every wire.

constexpr std::string_view kConversation =
    R"("messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hi"},)"
    R"({"role":"assistant","content":"hello"},{"role":"user","content":"say \"Ann\"\nplease"}])";
constexpr std::string_view kDescription =
    "system: You are terse. | user: hi | assistant: hello | user: say \"Ann\"\nplease";
constexpr std::string_view kAnthropicHeader = "anthropic-version";

MockOptions Describing() {
  MockOptions options;
  options.reply = ReplyMode::kDescribe;
  options.tokens = 2;  // ignored: the description is never cut
  return options;
}

int64_t TokenCount() { return static_cast<int64_t>(SplitReplyTokens(kDescription).size()); }

std::string Body(bool stream, std::string_view extra = {}) {
  std::string body = R"({"model":"m",)" + std::string(kConversation);
  body += stream ? R"(,"stream":true)" : R"(,"stream":false)";
  if (!extra.empty()) body += "," + std::string(extra);
  return body + "}";
}

TEST(MockDescribe, OpenAiWholeReplyIsTheWholeDescription) {
  RunningMock mock(Describing());
  Reply reply = Send(mock.port(), "POST", "/v1/chat/completions", Body(false, R"("max_tokens":1)"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value doc = json::parse(reply.body);
  EXPECT_EQ(Text(doc.at("choices").at(0).at("message").at("content")), kDescription);
  EXPECT_EQ(doc.at("choices").at(0).at("finish_reason"), "stop");
  EXPECT_EQ(doc.at("usage").at("completion_tokens"), TokenCount());
}

TEST(MockDescribe, OpenAiStreamSendsOneDeltaPerWord) {
  RunningMock mock(Describing());
  Reply reply = Send(mock.port(), "POST", "/v1/chat/completions",
                     Body(true, R"("stream_options":{"include_usage":true})"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  std::string text;
  int64_t deltas = 0;
  int64_t completion_tokens = -1;
  for (const json::value& event : SseEvents(reply.body)) {
    if (!event.at("usage").is_null()) {
      completion_tokens = event.at("usage").at("completion_tokens").as_int64();
    }
    if (event.at("choices").as_array().empty()) continue;
    const json::object& delta = event.at("choices").at(0).at("delta").as_object();
    if (delta.contains("role") || !delta.contains("content")) continue;
    text += delta.at("content").as_string();
    ++deltas;
  }
  EXPECT_EQ(text, kDescription);
  EXPECT_EQ(deltas, TokenCount());
  EXPECT_GT(deltas, 1);
  EXPECT_EQ(completion_tokens, deltas);
}

TEST(MockDescribe, AnthropicStreamDescribesTheSystemField) {
  RunningMock mock(Describing());
  const std::string body = R"({"model":"m","max_tokens":1,"stream":true,"system":"Be brief.",)"
                           R"("messages":[{"role":"user","content":"hi"}]})";
  Reply reply =
      Send(mock.port(), "POST", "/v1/messages", body, {{std::string(kAnthropicHeader), "1"}});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  std::string text;
  int64_t output_tokens = -1;
  for (const json::value& event : SseEvents(reply.body)) {
    if (event.at("type") == "content_block_delta") text += event.at("delta").at("text").as_string();
    if (event.at("type") == "message_delta") {
      output_tokens = event.at("usage").at("output_tokens").as_int64();
    }
  }
  EXPECT_EQ(text, "system: Be brief. | user: hi");
  EXPECT_EQ(output_tokens, 6);
}

TEST(MockDescribe, EveryWholeReplyCarriesTheDescription) {
  RunningMock mock(Describing());
  const Headers anthropic = {{std::string(kAnthropicHeader), "1"}};
  Reply messages =
      Send(mock.port(), "POST", "/v1/messages",
           R"({"model":"m","max_tokens":1,)" + std::string(kConversation) + "}", anthropic);
  ASSERT_EQ(messages.status, 200u) << messages.body;
  EXPECT_EQ(Text(json::parse(messages.body).at("content").at(0).at("text")), kDescription);

  Reply ollama = Send(mock.port(), "POST", "/api/chat", Body(false));
  ASSERT_EQ(ollama.status, 200u) << ollama.body;
  EXPECT_EQ(Text(json::parse(ollama.body).at("message").at("content")), kDescription);

  Reply cohere = Send(mock.port(), "POST", "/v2/chat", Body(false));
  ASSERT_EQ(cohere.status, 200u) << cohere.body;
  EXPECT_EQ(Text(json::parse(cohere.body).at("message").at("content").at(0).at("text")),
            kDescription);

  Reply responses = Send(mock.port(), "POST", "/v1/responses",
                         R"({"model":"m","store":false,"instructions":"Be brief.","input":"hi"})");
  ASSERT_EQ(responses.status, 200u) << responses.body;
  const json::value answer = json::parse(responses.body);
  EXPECT_EQ(Text(answer.at("output").at(0).at("content").at(0).at("text")),
            "system: Be brief. | user: hi");
  EXPECT_EQ(answer.at("status"), "completed");
}

TEST(MockDescribe, ResponsesAndGeminiStreamsCarryTheDescription) {
  RunningMock mock(Describing());
  Reply responses =
      Send(mock.port(), "POST", "/v1/responses",
           R"({"model":"m","store":false,"stream":true,"instructions":"Be brief.","input":"hi"})");
  ASSERT_EQ(responses.status, 200u) << responses.body;
  std::string text;
  for (const json::value& event : SseEvents(responses.body)) {
    if (event.at("type") == "response.output_text.delta") text += event.at("delta").as_string();
  }
  EXPECT_EQ(text, "system: Be brief. | user: hi");

  const std::string gemini_body =
      R"({"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[)"
      R"({"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]},)"
      R"({"role":"user","parts":[{"text":"again"}]}]})";
  Reply gemini = Send(mock.port(), "POST",
                      "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", gemini_body);
  ASSERT_EQ(gemini.status, 200u) << gemini.body;
  text.clear();
  for (const json::value& event : SseEvents(gemini.body)) {
    text += event.at("candidates").at(0).at("content").at("parts").at(0).at("text").as_string();
  }
  EXPECT_EQ(text, "system: Be brief. | user: hi | assistant: hello | user: again");
}

TEST(MockDescribe, ToolCallsStillAnswerWithACall) {
  MockOptions options = Describing();
  options.tool_calls = true;
  RunningMock mock(options);
  Reply reply =
      Send(mock.port(), "POST", "/v1/chat/completions",
           Body(false, R"("tools":[{"type":"function","function":{"name":"get_weather"}}])"));
  ASSERT_EQ(reply.status, 200u) << reply.body;
  const json::value doc = json::parse(reply.body);
  const json::value& message = doc.at("choices").at(0).at("message");
  EXPECT_EQ(message.at("tool_calls").at(0).at("function").at("name"), "get_weather");
  EXPECT_TRUE(message.at("content").is_null());
}

TEST(MockDescribe, UntilResultCallsThenDescribesTheResult) {
  MockOptions options = Describing();
  options.tool_calls_until_result = true;
  RunningMock mock(options);
  const std::string tools = R"("tools":[{"type":"function","function":{"name":"get_weather"}}])";
  Reply first = Send(mock.port(), "POST", "/v1/chat/completions", Body(false, tools));
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(json::parse(first.body)
                .at("choices")
                .at(0)
                .at("message")
                .at("tool_calls")
                .at(0)
                .at("function")
                .at("name"),
            "get_weather");
  // The same tools, the call and its result: the description, not another call.
  const std::string after_result =
      R"({"model":"m","stream":false,)" + tools +
      R"(,"messages":[{"role":"user","content":"weather?"},)"
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",)"
      R"("function":{"name":"get_weather","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"c1","content":"sunny"}]})";
  Reply second = Send(mock.port(), "POST", "/v1/chat/completions", after_result);
  ASSERT_EQ(second.status, 200u) << second.body;
  EXPECT_EQ(json::parse(second.body).at("choices").at(0).at("message").at("content"),
            "user: weather? | assistant: call get_weather({}) | tool: sunny");
}

TEST(MockDescribe, LastTurnIsReadOnlyWhenAsked) {
  const std::string_view ends_with_result =
      R"({"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":"x"}]})";
  BodyParser plain(ReplyMode::kTokens);
  BodyParser reading(ReplyMode::kTokens, {}, true);
  Result<ChatRequest> not_read = plain.Parse(ends_with_result);
  Result<ChatRequest> read = reading.Parse(ends_with_result);
  Result<ChatRequest> answered = reading.Parse(kTranscripts[1].body);  // a result, then text
  ASSERT_TRUE(not_read.ok() && read.ok() && answered.ok());
  EXPECT_FALSE(not_read->ends_with_tool_result);
  EXPECT_TRUE(read->ends_with_tool_result);
  EXPECT_FALSE(answered->ends_with_tool_result);
}

}  // namespace
}  // namespace turnpike::mock::testing
