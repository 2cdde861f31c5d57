// Responses and completions request parsing beyond the golden transcripts: what is refused and
// by which name, and the shapes of the pivot for the input forms.
#include "providers/openai_responses/request.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/request_input.h"
#include "providers/openai_responses/responses_provider.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

struct Refusal {
  std::string name, body, param;
};

class ResponsesRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(ResponsesRefusalTest, NamesTheField) {
  Result<json::object> out = ParseResponsesRequest(GetParam().body);
  ASSERT_FALSE(out.ok()) << json::serialize(out.value());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(out.error().param, GetParam().param);
  EXPECT_FALSE(out.error().message.empty());
}

const std::string kModel = R"("model":"m")";

INSTANTIATE_TEST_SUITE_P(
    Responses, ResponsesRefusalTest,
    ::testing::Values(
        Refusal{"not_json", "{", ""}, Refusal{"not_object", "[]", ""},
        Refusal{"no_model", R"({"input":"hi"})", "model"},
        Refusal{"no_input", "{" + kModel + "}", "input"},
        Refusal{"empty_input", "{" + kModel + R"(,"input":[]})", "input"},
        Refusal{"store", "{" + kModel + R"(,"input":"hi","store":true})", "store"},
        Refusal{"store_type", "{" + kModel + R"(,"input":"hi","store":"yes"})", "store"},
        Refusal{"previous", "{" + kModel + R"(,"input":"hi","previous_response_id":"resp_1"})",
                "previous_response_id"},
        Refusal{"conversation", "{" + kModel + R"(,"input":"hi","conversation":"conv_1"})",
                "conversation"},
        Refusal{"background", "{" + kModel + R"(,"input":"hi","background":true})", "background"},
        Refusal{
            "include",
            "{" + kModel +
                R"(,"input":"hi","include":["reasoning.encrypted_content","message.output_text.logprobs"]})",
            "include[1]"},
        Refusal{"truncation", "{" + kModel + R"(,"input":"hi","truncation":"auto"})", "truncation"},
        Refusal{"builtin_tool", "{" + kModel + R"(,"input":"hi","tools":[{"type":"file_search"}]})",
                "tools[0].type"},
        Refusal{"tool_field",
                "{" + kModel + R"(,"input":"hi","tools":[{"type":"function","name":"f","x":1}]})",
                "tools[0].x"},
        Refusal{"tool_choice_builtin",
                "{" + kModel + R"(,"input":"hi","tool_choice":{"type":"web_search"}})",
                "tool_choice"},
        Refusal{"reasoning_summary",
                "{" + kModel + R"(,"input":"hi","reasoning":{"summary":"auto"}})",
                "reasoning.summary"},
        Refusal{
            "reasoning_item_content",
            "{" + kModel +
                R"(,"input":[{"type":"reasoning","id":"rs_1","summary":[{"type":"reasoning_text","text":"x"}]}]})",
            "input[0].summary[0].type"},
        Refusal{"item_reference",
                "{" + kModel + R"(,"input":[{"type":"item_reference","id":"msg_1"}]})",
                "input[0].type"},
        Refusal{"bad_role", "{" + kModel + R"(,"input":[{"role":"tool","content":"x"}]})",
                "input[0].role"},
        Refusal{
            "input_file",
            "{" + kModel +
                R"(,"input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]})",
            "input[0].content[0].type"},
        Refusal{
            "image_by_file_id",
            "{" + kModel +
                R"(,"input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]})",
            "input[0].content[0].file_id"},
        Refusal{
            "image_for_system",
            "{" + kModel +
                R"(,"input":[{"role":"system","content":[{"type":"input_image","image_url":"u"}]}]})",
            "input[0].content[0].type"},
        Refusal{
            "call_without_id",
            "{" + kModel + R"(,"input":[{"type":"function_call","name":"f","arguments":"{}"}]})",
            "input[0].call_id"},
        Refusal{
            "output_not_text",
            "{" + kModel +
                R"(,"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image"}]}]})",
            "input[0].output[0].type"},
        Refusal{"max_output_tokens", "{" + kModel + R"(,"input":"hi","max_output_tokens":0})",
                "max_output_tokens"},
        Refusal{"text_format",
                "{" + kModel + R"(,"input":"hi","text":{"format":{"type":"grammar"}}})",
                "text.format.type"},
        Refusal{
            "json_schema_without_schema",
            "{" + kModel + R"(,"input":"hi","text":{"format":{"type":"json_schema","name":"a"}}})",
            "text.format.schema"},
        Refusal{"metadata", "{" + kModel + R"(,"input":"hi","metadata":"x"})", "metadata"},
        Refusal{"unknown", "{" + kModel + R"(,"input":"hi","top_logprobs":2})", "top_logprobs"}),
    [](const auto& info) { return info.param.name; });

json::object Pivot(std::string_view body) {
  Result<json::object> out = ParseResponsesRequest(body);
  EXPECT_TRUE(out.ok()) << out.error().param << ": " << out.error().message;
  return out.ok() ? out.value() : json::object{};
}

TEST(ResponsesRequest, DefaultsAndNullsAddNothing) {
  const json::object pivot = Pivot(
      R"({"model":"m","input":"hi","store":false,"truncation":"disabled","include":[],
          "metadata":{"k":"v"},"background":false,"temperature":null,"text":{"format":{"type":"text"}},
          "stream":false,"stream_options":{"include_obfuscation":false}})");
  EXPECT_EQ(pivot, json::parse(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})"));
}

TEST(ResponsesRequest, ConsecutiveCallsAreOneAssistantTurn) {
  const json::object pivot = Pivot(R"({"model":"m","input":[
      {"role":"user","content":"both"},
      {"type":"function_call","call_id":"a","name":"f","arguments":"{\"x\":1}"},
      {"type":"function_call","call_id":"b","name":"g","arguments":"{}"},
      {"type":"function_call_output","call_id":"a","output":"1"},
      {"type":"function_call_output","call_id":"b","output":"2"},
      {"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]})");
  const json::array& messages = pivot.at("messages").as_array();
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[1].at("role"), "assistant");
  EXPECT_TRUE(messages[1].at("content").is_null());
  EXPECT_EQ(messages[1].at("tool_calls").as_array().size(), 2u);
  EXPECT_EQ(messages[2].at("tool_call_id"), "a");
  EXPECT_EQ(messages[3].at("tool_call_id"), "b");
  // A call after tool results starts a new assistant turn.
  EXPECT_EQ(messages[4].at("role"), "assistant");
  EXPECT_EQ(messages[4].at("tool_calls").as_array().size(), 1u);
}

TEST(ResponsesRequest, DeveloperIsSystemAndStreamAsksForUsage) {
  const json::object pivot = Pivot(R"({"model":"m","instructions":"I","input":[
      {"role":"developer","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},
      {"role":"user","content":"hi"}],"stream":true,"max_output_tokens":5})");
  EXPECT_EQ(pivot.at("messages"), json::parse(R"([{"role":"system","content":"I"},
      {"role":"system","content":"ab"},{"role":"user","content":"hi"}])"));
  EXPECT_EQ(pivot.at("stream_options"), json::parse(R"({"include_usage":true})"));
  EXPECT_EQ(pivot.at("max_completion_tokens"), 5);
}

TEST(ResponsesRequest, EchoFieldsUseTheRequestOrTheDefaults) {
  const json::value echo = json::parse("{" + EchoFields(R"({"model":"m","input":"x",
      "instructions":"I","tools":[{"type":"function","name":"f"}],"metadata":{"k":"v"},
      "max_output_tokens":9,"text":{"verbosity":"low"}})") +
                                       "}");
  EXPECT_EQ(echo.at("instructions"), "I");
  EXPECT_EQ(echo.at("tools").as_array().size(), 1u);
  EXPECT_EQ(echo.at("metadata").at("k"), "v");
  EXPECT_EQ(echo.at("max_output_tokens"), 9);
  EXPECT_EQ(echo.at("text"), json::parse(R"({"verbosity":"low","format":{"type":"text"}})"));
  EXPECT_EQ(echo.at("store"), false);
  const json::value defaults = json::parse("{" + EchoFields(R"({"model":"m","input":"x"})") + "}");
  EXPECT_EQ(defaults.at("tool_choice"), "auto");
  EXPECT_EQ(defaults.at("parallel_tool_calls"), true);
  EXPECT_TRUE(defaults.at("instructions").is_null());
  EXPECT_EQ(defaults.at("tools"), json::array{});
  // A text that is not an object echoes as absent (found by fuzz_responses_request).
  const json::value odd = json::parse("{" + EchoFields(R"({"model":"m","text":"x"})") + "}");
  EXPECT_EQ(odd.at("text"), json::parse(R"({"format":{"type":"text"}})"));
}

// The echoed members as an object (what EchoFields writes directly), and its members' text.
json::value Or(const json::object& request, std::string_view key, json::value fallback) {
  const json::value* value = request.if_contains(key);
  return value != nullptr && !value->is_null() ? *value : fallback;
}

json::object EchoObject(const json::object& request) {
  json::object reasoning{{"effort", nullptr}, {"summary", nullptr}};
  if (const json::value* effort = request.if_contains("reasoning");
      effort && effort->is_object() && effort->as_object().if_contains("effort")) {
    reasoning["effort"] = effort->at("effort");
  }
  // A `text` that is not an object echoes as if absent.
  const json::value text_in = Or(request, "text", json::object{});
  json::object text = text_in.is_object() ? text_in.as_object() : json::object{};
  if (!text.contains("format")) text["format"] = json::object{{"type", "text"}};
  return json::object{{"instructions", Or(request, "instructions", nullptr)},
                      {"max_output_tokens", Or(request, "max_output_tokens", nullptr)},
                      {"metadata", Or(request, "metadata", json::object{})},
                      {"parallel_tool_calls", Or(request, "parallel_tool_calls", true)},
                      {"previous_response_id", nullptr},
                      {"reasoning", std::move(reasoning)},
                      {"store", false},
                      {"temperature", Or(request, "temperature", 1.0)},
                      {"text", std::move(text)},
                      {"tool_choice", Or(request, "tool_choice", "auto")},
                      {"tools", Or(request, "tools", json::array{})},
                      {"top_p", Or(request, "top_p", 1.0)},
                      {"truncation", "disabled"},
                      {"user", Or(request, "user", nullptr)}};
}

std::string EchoMembers(const json::object& echo) {
  std::string members = json::serialize(echo);
  return members.substr(1, members.size() - 2);
}

// A bare request and one with every echoed member set.
const char* const kEchoedRequests[] = {
    R"({"model":"m","input":"x"})",
    R"({"model":"m","input":"x","instructions":"I","max_output_tokens":9,
        "metadata":{"k":"v"},"parallel_tool_calls":false,"reasoning":{"effort":"low"},
        "temperature":0.5,"text":{"verbosity":"low"},"tool_choice":"none",
        "tools":[{"type":"function","name":"f"}],"top_p":0.25,"user":"u"})",
};

TEST(ResponsesRequest, EchoFieldsWriteWhatTheEchoObjectSerializesTo) {
  // EchoFields writes the members directly; EchoObject + EchoMembers build them as an object.
  // Byte for byte the same.
  for (const char* body : {
           kEchoedRequests[0],
           kEchoedRequests[1],
           R"({"text":{"format":{"type":"json_object"},"verbosity":"high"},"reasoning":{}})",
           R"({"text":{},"reasoning":{"effort":null},"metadata":null,"temperature":null})",
           R"({"text":"x","reasoning":"high","tools":null,"top_p":1})",
           R"(not json)",
       }) {
    boost::system::error_code ec;
    const json::value doc = json::parse(body, ec);
    const json::object request = !ec && doc.is_object() ? doc.as_object() : json::object{};
    EXPECT_EQ(EchoFields(body), EchoMembers(EchoObject(request))) << body;
  }
}

TEST(ResponsesRequest, EchoFieldsWithOwnMembersWriteTheEditedEchoObject) {
  // An agent turn echoes its own instructions, metadata, store, previous_response_id and
  // conversation: EchoFields with those members is what editing the EchoObject serializes to.
  for (const char* body : kEchoedRequests) {
    const json::object request = json::parse(body).as_object();
    for (const bool in_conversation : {false, true}) {
      const json::value metadata = json::parse(R"({"a":"b \"q\" \u00e9"})");
      json::object echo = EchoObject(request);
      echo["instructions"] = nullptr;
      echo["metadata"] = metadata;
      echo["store"] = true;
      echo["previous_response_id"] = in_conversation ? json::value(nullptr) : "resp_\"1";
      echo["conversation"] =
          in_conversation ? json::value(json::object{{"id", "conv_\u00e9"}}) : json::value(nullptr);
      const std::string metadata_text = json::serialize(metadata);
      const std::string previous = json::serialize(echo["previous_response_id"]);
      const std::string conversation = json::serialize(echo["conversation"]);
      const EchoMember own[] = {{"instructions", "null"},
                                {"metadata", metadata_text},
                                {"store", "true"},
                                {"previous_response_id", previous},
                                {"conversation", conversation}};
      EXPECT_EQ(EchoFields(request, own), EchoMembers(echo)) << body;
    }
  }
}

TEST(ResponsesRequest, TheSameTranslationInAnotherMemory) {
  // A pivot made in an agent turn's arena is the pivot made on the heap.
  const json::object request = json::parse(R"({"model":"m","instructions":"Be brief.",
      "input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},
               {"type":"function_call","call_id":"c","name":"f","arguments":"{}"}],
      "tools":[{"type":"function","name":"f"}],"max_output_tokens":5,"stream":true})")
                                   .as_object();
  json::monotonic_resource arena;
  Result<json::object> heap = ParseResponsesDocument(request);
  Result<json::object> in_arena = ParseResponsesDocument(request, json::storage_ptr(&arena));
  ASSERT_TRUE(heap.ok() && in_arena.ok());
  EXPECT_EQ(json::serialize(*in_arena), json::serialize(*heap));
  EXPECT_EQ(in_arena->storage().get(), &arena);
  EXPECT_EQ(in_arena->at("messages").as_array().storage().get(), &arena);
}

TEST(ResponsesRequest, AnItemTranslatesAloneAsTheRequestOfThatItem) {
  for (const char* item : {
           R"({"type":"message","id":"msg_1","status":"completed","role":"assistant",
               "content":[{"type":"output_text","text":"Hello.","annotations":[]}]})",
           R"({"role":"developer","content":"Answer in French."})",
           R"({"role":"user","content":[{"type":"input_text","text":"look"},
               {"type":"input_image","image_url":"https://example.com/a.png"}]})",
           R"({"type":"function_call","call_id":"c1","name":"f","arguments":"{}"})",
           R"({"type":"function_call_output","call_id":"c1","output":"42"})",
           R"({"type":"reasoning","summary":[{"type":"summary_text","text":"hm"}]})",
           R"({"role":"robot","content":"x"})",
           R"({"role":"user","content":[{"type":"output_image"}]})",
           R"({"type":"web_search_call"})",
           R"("just a string")",
       }) {
    const json::value value = json::parse(item);
    json::object request;
    request["input"] = json::array{value};
    Result<json::array> whole = TranslateMessages(request);
    Result<json::array> alone = TranslateItem(value);
    ASSERT_EQ(alone.ok(), whole.ok()) << item;
    if (whole.ok()) {
      EXPECT_EQ(json::serialize(*alone), json::serialize(*whole)) << item;
    } else {
      EXPECT_EQ(alone.error().param, whole.error().param) << item;
      EXPECT_EQ(alone.error().message, whole.error().message) << item;
    }
  }
}

TEST(ResponsesRequest, PivotNamesBecomeClientNames) {
  EXPECT_EQ(ClientParam("max_completion_tokens"), "max_output_tokens");
  EXPECT_EQ(ClientParam("response_format"), "text.format");
  EXPECT_EQ(ClientParam("response_format.json_schema.strict"), "text.format.strict");
  EXPECT_EQ(ClientParam("tools[3].function.strict"), "tools[3].strict");
  EXPECT_EQ(ClientParam("messages[2].content[0].image_url.detail"), "input");
  EXPECT_EQ(ClientParam("reasoning_effort"), "reasoning.effort");
  EXPECT_EQ(ClientParam("temperature"), "temperature");
  EXPECT_EQ(ClientParam("max_tokensx"), "max_tokensx");
}

TEST(ResponsesProvider, RendersErrorsInClientNames) {
  const ResponsesProvider provider;
  const ErrorReply reply = provider.RenderError(
      Error{ErrorCode::kInvalidRequest, "'tools[0].function.strict' is not supported.",
            "tools[0].function.strict"});
  EXPECT_EQ(reply.status, 400);
  const json::value error = json::parse(reply.body).at("error");
  EXPECT_EQ(error.at("param"), "tools[0].strict");
  EXPECT_EQ(error.at("message"), "'tools[0].strict' is not supported.");
  EXPECT_EQ(error.at("type"), "invalid_request_error");
}

// Completions.
TEST(CompletionsProvider, IsClientOnly) {
  // Responses serves both roles (upstream_test.cc); legacy completions only the client's.
  EXPECT_FALSE(openai_completions::CompletionsProvider().serves_upstream());
}

class CompletionsRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(CompletionsRefusalTest, NamesTheField) {
  const openai_completions::CompletionsProvider provider;
  Result<json::object> out = provider.ParseRequest(GetParam().body);
  ASSERT_FALSE(out.ok()) << json::serialize(out.value());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidRequest);
  EXPECT_EQ(out.error().param, GetParam().param);
}

INSTANTIATE_TEST_SUITE_P(
    Completions, CompletionsRefusalTest,
    ::testing::Values(
        Refusal{"no_prompt", "{" + kModel + "}", "prompt"},
        Refusal{"prompts", "{" + kModel + R"(,"prompt":["a","b"]})", "prompt"},
        Refusal{"tokens", "{" + kModel + R"(,"prompt":[1,2,3]})", "prompt"},
        Refusal{"token_arrays", "{" + kModel + R"(,"prompt":[[1,2]]})", "prompt"},
        Refusal{"n", "{" + kModel + R"(,"prompt":"a","n":2})", "n"},
        Refusal{"best_of", "{" + kModel + R"(,"prompt":"a","best_of":3})", "best_of"},
        Refusal{"echo", "{" + kModel + R"(,"prompt":"a","echo":true})", "echo"},
        Refusal{"logprobs", "{" + kModel + R"(,"prompt":"a","logprobs":2})", "logprobs"},
        Refusal{"suffix", "{" + kModel + R"(,"prompt":"a","suffix":"end"})", "suffix"},
        Refusal{"max_tokens", "{" + kModel + R"(,"prompt":"a","max_tokens":"9"})", "max_tokens"},
        Refusal{"stop", "{" + kModel + R"(,"prompt":"a","stop":["1","2","3","4","5"]})", "stop"},
        Refusal{"stream_options",
                "{" + kModel + R"(,"prompt":"a","stream":true,"stream_options":{"x":1}})",
                "stream_options.x"},
        Refusal{"unknown", "{" + kModel + R"(,"prompt":"a","tools":[]})", "tools"}),
    [](const auto& info) { return info.param.name; });

TEST(CompletionsRequest, DefaultMaxTokensIsSixteenAndTrivialDefaultsPass) {
  const openai_completions::CompletionsProvider provider;
  Result<json::object> out = provider.ParseRequest(
      R"({"model":"m","prompt":["only"],"n":1,"best_of":1,"echo":false,"suffix":null,"logprobs":null,"seed":3})");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out.value(), json::parse(R"({"model":"m","messages":[{"role":"user","content":"only"}],
      "max_completion_tokens":16,"seed":3})"));
}

}  // namespace
}  // namespace turnpike::providers::openai_responses
