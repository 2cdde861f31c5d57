// The Responses API's upstream role beyond the golden transcripts: what BuildRequest refuses
// (naming the client's field), the stream decoder's events one by one (also fed a byte at a
// time), whole answers and errors, and the identity path's body splices.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "providers/openai_responses/responses_provider.h"
#include "stream/sse_parser.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

const ResponsesProvider kResponses;

Result<std::string> Build(std::string_view chat) {
  UpstreamRequestOptions options;
  options.upstream_model = "up";
  return kResponses.BuildRequest(json::parse(chat).as_object(), options);
}

// The field a refused request names.
std::string Refused(std::string_view chat) {
  Result<std::string> built = Build(chat);
  EXPECT_FALSE(built.ok()) << chat;
  if (built.ok()) return "";
  EXPECT_EQ(built.error().code, ErrorCode::kInvalidRequest);
  return built.error().param;
}

constexpr std::string_view kUser = R"("messages":[{"role":"user","content":"Hi"}])";

std::string With(std::string_view fields) {
  return "{\"model\":\"m\"," + std::string(kUser) + "," + std::string(fields) + "}";
}

TEST(ResponsesBuildRequest, RefusesWhatTheResponsesApiCannotExpress) {
  EXPECT_EQ(Refused(With(R"("stop":"x")")), "stop");
  EXPECT_EQ(Refused(With(R"("n":2)")), "n");
  EXPECT_EQ(Refused(With(R"("logprobs":true)")), "logprobs");
  EXPECT_EQ(Refused(With(R"("top_logprobs":2)")), "top_logprobs");
  EXPECT_EQ(Refused(With(R"("seed":7)")), "seed");
  EXPECT_EQ(Refused(With(R"("frequency_penalty":0.5)")), "frequency_penalty");
  EXPECT_EQ(Refused(With(R"("presence_penalty":0.5)")), "presence_penalty");
  EXPECT_EQ(Refused(With(R"("logit_bias":{"1":2})")), "logit_bias");
  EXPECT_EQ(Refused(With(R"("store":true)")), "store");
  EXPECT_EQ(Refused(With(R"("stream":true,"stream_options":{"include_obfuscation":false})")),
            "stream_options.include_obfuscation");
  EXPECT_EQ(Refused(With(R"("response_format":{"type":"grammar"})")), "response_format.type");
  EXPECT_EQ(Refused(With(R"("tools":[{"type":"custom","custom":{"name":"x"}}])")), "tools[0].type");
  EXPECT_EQ(Refused(With(R"("tool_choice":{"type":"allowed_tools"})")), "tool_choice");
  EXPECT_EQ(Refused(R"({"model":"m","messages":[{"role":"user","name":"bob","content":"Hi"}]})"),
            "messages[0].name");
  EXPECT_EQ(Refused(R"({"model":"m","messages":[{"role":"function","name":"f","content":"x"}]})"),
            "messages[0].name");
  EXPECT_EQ(
      Refused(
          R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]})"),
      "messages[0].content[0].type");
  EXPECT_EQ(Refused(R"({"model":"m","messages":[{"role":"assistant","refusal":"no"}]})"),
            "messages[0].refusal");
  EXPECT_EQ(
      Refused(
          R"({"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"http://x"}}]}]})"),
      "messages[0].content[0].type");
  EXPECT_EQ(
      Refused(
          R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x","detail":"ultra"}}]}]})"),
      "messages[0].content[0].image_url.detail");
}

TEST(ResponsesBuildRequest, AcceptsTheNeutralValuesAndAlwaysSaysStoreFalse) {
  Result<std::string> built = Build(With(R"("n":1,"logprobs":false,"store":false,"stop":null)"));
  ASSERT_TRUE(built.ok()) << built.error().message;
  const json::object request = json::parse(built.value()).as_object();
  EXPECT_EQ(request.at("store"), false);
  EXPECT_EQ(request.at("model"), "up");
  EXPECT_FALSE(request.contains("stream"));
  EXPECT_FALSE(request.contains("n"));
}

// Decodes an SSE text fed `piece` bytes at a time; returns the events as short strings.
std::vector<std::string> Decode(std::string_view sse, size_t piece, Status* last = nullptr) {
  class Sink final : public EventSink {
   public:
    void OnEvent(const StreamEvent& e) override {
      std::string line;
      switch (e.kind) {
        case EventKind::kStart:
          line = "start " + std::string(e.id) + " " + std::string(e.model);
          break;
        case EventKind::kTextDelta:
          line = "text " + std::string(e.text);
          break;
        case EventKind::kToolCallStart:
          line = "call " + std::to_string(e.tool_index) + " " + std::string(e.id) + " " +
                 std::string(e.name);
          break;
        case EventKind::kToolArgsDelta:
          line = "args " + std::to_string(e.tool_index) + " " + std::string(e.text);
          break;
        case EventKind::kReasoningDelta:
        case EventKind::kReasoningSignature:
        case EventKind::kRedactedReasoning:
          line = "reasoning " + std::string(e.text);
          break;
        case EventKind::kFinish:
          line = "finish " + std::to_string(static_cast<int>(e.finish));
          break;
        case EventKind::kUsage:
          line = "usage " + std::to_string(e.usage.prompt_tokens) + " " +
                 std::to_string(e.usage.completion_tokens) + " " +
                 std::to_string(e.usage.cached_tokens);
          break;
        case EventKind::kError:
          line = "error " + std::string(ErrorCodeName(e.error->code)) + " " + e.error->message;
          break;
        case EventKind::kEnd:
          line = "end";
          break;
      }
      lines.push_back(std::move(line));
    }
    std::vector<std::string> lines;
  } sink;
  std::unique_ptr<StreamDecoder> decoder = kResponses.NewDecoder();
  stream::SseParser parser;
  Status status = Ok{};
  for (size_t at = 0; at < sse.size(); at += piece) {
    Status fed = parser.Feed(sse.substr(at, piece), [&](const stream::SseEvent& event) {
      Status decoded = decoder->Decode(event, sink);
      if (!decoded.ok()) status = decoded;
    });
    EXPECT_TRUE(fed.ok());
  }
  if (last) *last = status;
  return sink.lines;
}

constexpr std::string_view kCallStream =
    "event: response.created\n"
    R"(data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-x","output":[],"usage":null}})"
    "\n\n"
    "event: response.output_item.added\n"
    R"(data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","content":[]}})"
    "\n\n"
    "event: response.content_part.added\n"
    R"(data: {"type":"response.content_part.added","output_index":0,"part":{"type":"output_text","text":""}})"
    "\n\n"
    "event: response.output_text.delta\n"
    R"(data: {"type":"response.output_text.delta","output_index":0,"delta":"A \"q\""})"
    "\n\n"
    "event: response.output_item.added\n"
    R"(data: {"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_a","name":"f"}})"
    "\n\n"
    "event: response.function_call_arguments.delta\n"
    R"(data: {"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"})"
    "\n\n"
    "event: response.output_item.done\n"
    R"(data: {"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","arguments":"{}","call_id":"call_a","name":"f"}})"
    "\n\n"
    // A call whose arguments come only with its done item (no deltas).
    "event: response.output_item.added\n"
    R"(data: {"type":"response.output_item.added","output_index":2,"item":{"id":"fc_2","type":"function_call","arguments":"","call_id":"call_b","name":"g"}})"
    "\n\n"
    "event: response.output_item.done\n"
    R"(data: {"type":"response.output_item.done","output_index":2,"item":{"id":"fc_2","type":"function_call","arguments":"{\"x\":1}","call_id":"call_b","name":"g"}})"
    "\n\n"
    "event: response.completed\n"
    R"(data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[{"type":"message"}],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5}}})"
    "\n\n";

TEST(ResponsesStreamDecoder, DecodesTextCallsFinishAndUsage) {
  const std::vector<std::string> expected = {
      "start resp_1 gpt-x",   "text A \\\"q\\\"", "call 0 call_a f", "args 0 {}", "call 1 call_b g",
      "args 1 {\\\"x\\\":1}", "finish 4",         "usage 10 5 4",    "end"};
  EXPECT_EQ(Decode(kCallStream, kCallStream.size()), expected);
  // Fed a byte at a time: the same events.
  EXPECT_EQ(Decode(kCallStream, 1), expected);
}

TEST(ResponsesStreamDecoder, TypeFromDataWhenTheEventHasNoName) {
  const std::string sse =
      R"(data: {"type":"response.created","response":{"id":"r","model":"m"}})"
      "\n\n"
      R"(data: {"type":"response.output_text.delta","output_index":0,"delta":"x"})"
      "\n\n";
  EXPECT_EQ(Decode(sse, sse.size()), (std::vector<std::string>{"start r m", "text x"}));
}

TEST(ResponsesStreamDecoder, IncompleteIsLengthOrContentFilter) {
  const std::string length =
      "event: response.incomplete\n"
      R"(data: {"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":1,"output_tokens":2}}})"
      "\n\n";
  EXPECT_EQ(Decode(length, length.size()),
            (std::vector<std::string>{"start r ", "finish 3", "usage 1 2 -1", "end"}));
  const std::string filtered =
      "event: response.incomplete\n"
      R"(data: {"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"content_filter"}}})"
      "\n\n";
  EXPECT_EQ(Decode(filtered, filtered.size()),
            (std::vector<std::string>{"start r ", "finish 5", "end"}));
}

TEST(ResponsesStreamDecoder, ErrorEventsEndTheStream) {
  const std::string error_event =
      "event: error\n"
      R"(data: {"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null})"
      "\n\n";
  EXPECT_EQ(Decode(error_event, 3), (std::vector<std::string>{"error rate_limited Slow down"}));
  Status last = Ok{};
  const std::string after = error_event + "event: response.completed\ndata: {}\n\n";
  Decode(after, after.size(), &last);
  EXPECT_FALSE(last.ok()) << "an event after the final one";
}

TEST(ResponsesStreamDecoder, ArgumentsForAnotherItemAreAnError) {
  const std::string sse =
      "event: response.output_item.added\n"
      R"(data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f"}})"
      "\n\n"
      "event: response.function_call_arguments.delta\n"
      R"(data: {"type":"response.function_call_arguments.delta","output_index":3,"delta":"{}"})"
      "\n\n";
  Status last = Ok{};
  Decode(sse, sse.size(), &last);
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.error().code, ErrorCode::kUpstreamBadResponse);
  Status not_json = Ok{};
  Decode("event: response.created\ndata: {nope\n\n", 64, &not_json);
  EXPECT_FALSE(not_json.ok());
}

TEST(ResponsesParseResponse, ReadsItemsAndMapsFailures) {
  Result<Response> whole = kResponses.ParseResponse(
      R"({"id":"r","model":"m","status":"completed","output":[{"type":"reasoning"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}],"usage":{"input_tokens":3,"output_tokens":4}})");
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->finish, FinishReason::kToolCalls);
  ASSERT_EQ(whole->tool_calls.size(), 1u);
  EXPECT_EQ(whole->tool_calls[0].id, "c");
  EXPECT_EQ(whole->usage.prompt_tokens, 3);
  Result<Response> limited = kResponses.ParseResponse(
      R"({"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"m"},"output":[]})");
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(limited.error().code, ErrorCode::kRateLimited);
  EXPECT_FALSE(kResponses.ParseResponse(R"({"id":"r","status":"in_progress","output":[]})").ok());
  EXPECT_FALSE(kResponses.ParseResponse("not json").ok());
  const Error error = kResponses.ParseError(
      400, R"({"error":{"message":"Bad","type":"invalid_request_error","param":"input"}})");
  EXPECT_EQ(error.code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(error.message, "Bad");
  EXPECT_EQ(error.param, "input");
  EXPECT_EQ(kResponses.ParseError(503, "<html>").code, ErrorCode::kUnavailable);
}

TEST(ResponsesEndpoint, ResponsesUnderTheBasePathWithBearer) {
  const UpstreamEndpoint endpoint = kResponses.Endpoint({"/v1", "m", "sk-1"});
  EXPECT_EQ(endpoint.path, "/v1/responses");
  EXPECT_EQ(endpoint.stream_path, "/v1/responses");
  EXPECT_EQ(endpoint.authorization, "Bearer sk-1");
  EXPECT_TRUE(kResponses.serves_upstream());
  EXPECT_EQ(kResponses.Endpoint({"", "m", ""}).authorization, "");
}

TEST(ResponsesIdentityBody, SplicesModelAndStoreOnly) {
  Result<std::string> absent =
      kResponses.IdentityBody(R"({ "model" : "pub", "input":"Hi","temperature":1.50})", "up\"x");
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent.value(),
            R"({"store":false, "model" : "up\"x", "input":"Hi","temperature":1.50})");
  Result<std::string> null_store =
      kResponses.IdentityBody(R"({"store":null,"model":"pub","input":"Hi"})", "up");
  ASSERT_TRUE(null_store.ok());
  EXPECT_EQ(null_store.value(), R"({"store":false,"model":"up","input":"Hi"})");
  Result<std::string> kept =
      kResponses.IdentityBody(R"({"model":"pub","store":false,"input":"Hi"})", "up");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept.value(), R"({"model":"up","store":false,"input":"Hi"})");
  EXPECT_FALSE(kResponses.IdentityBody(R"({"model":"a","model":"b","input":"Hi"})", "up").ok());
  EXPECT_FALSE(kResponses.IdentityBody(R"({"model":"a","store":true,"input":"Hi"})", "up").ok());
}

}  // namespace
}  // namespace turnpike::providers::openai_responses
