// Golden transcripts: every tests/testdata/providers/<dialect>/<case>/ directory is one case.
//
// case.json names the client and upstream dialects (the pair the case applies to), the
// upstream model, `created`, and optionally default_max_tokens, upstream_status,
// client_status and the usage the upstream reported (in the common convention; absent
// counts are -1). Then, each step asserting its own result:
//   client_request.json   -> client.ParseRequest -> upstream.BuildRequest
//                            == upstream_request.json (or, with client_status and no
//                            upstream_request.json, the refusal rendered by the client
//                            dialect == client_body.json)
//   upstream_stream.sse   -> decoder/encoder, fed whole and in small pieces (NDJSON dialects:
//   (.ndjson)                upstream_stream.ndjson, split in lines by stream::NdjsonParser)
//                            == client_stream.sse (events compared by name and JSON value);
//                            with client_body.json, the final body a client SDK assembles
//                            from that stream == client_body.json (for the Responses API:
//                            the final event's response, after checking that the deltas
//                            add up to it and that sequence numbers count from 0)
//   upstream_body.json    -> ParseResponse/RenderResponse (2xx; an error object in it is
//                            rendered as the client's error) or ParseError/RenderError
//                            == client_body.json with client_status
// and the usage the translation extracted equals case.json's `usage`.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "providers/anthropic/anthropic_provider.h"
#include "providers/cohere/cohere_provider.h"
#include "providers/gemini/gemini_provider.h"
#include "providers/ollama/ollama_provider.h"
#include "providers/openai/openai_provider.h"
#include "providers/openai_completions/completions_provider.h"
#include "providers/openai_responses/responses_provider.h"
#include "providers/translator.h"
#include "stream/ndjson_parser.h"
#include "stream/sse_parser.h"

namespace turnpike::providers {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json::value ReadJson(const fs::path& path) { return json::parse(Read(path)); }

const Provider& ByName(std::string_view name) {
  static const openai::OpenAiProvider kOpenAi;
  static const anthropic::AnthropicProvider kAnthropic;
  static const ollama::OllamaProvider kOllama;
  static const cohere::CohereProvider kCohere;
  static const gemini::GeminiProvider kGemini;
  static const openai_responses::ResponsesProvider kResponses;
  static const openai_completions::CompletionsProvider kCompletions;
  if (name == "anthropic") return kAnthropic;
  if (name == "ollama") return kOllama;
  if (name == "cohere") return kCohere;
  if (name == "gemini") return kGemini;
  if (name == "openai_responses") return kResponses;
  if (name == "openai_completions") return kCompletions;
  return kOpenAi;
}

// (event name, data as JSON, or the raw data when it is not JSON such as [DONE]).
using Events = std::vector<std::pair<std::string, json::value>>;

Events ParseSse(std::string_view text) {
  Events events;
  stream::SseParser parser;
  Status fed = parser.Feed(text, [&](const stream::SseEvent& event) {
    if (!event.has_data) return;
    boost::system::error_code ec;
    json::value data = json::parse(event.data, ec);
    if (ec) data = json::string(event.data);
    events.emplace_back(std::string(event.event), std::move(data));
  });
  EXPECT_TRUE(fed.ok());
  EXPECT_EQ(parser.buffered_bytes(), 0u) << "an incomplete event at the end";
  return events;
}

std::string Show(const Events& events) {
  std::string out;
  for (const auto& [name, data] : events) out += name + " " + json::serialize(data) + "\n";
  return out;
}

int64_t UsageField(const json::object& usage, std::string_view key) {
  const json::value* value = usage.if_contains(key);
  return value ? value->as_int64() : -1;
}

void ExpectUsage(const json::object& spec, const TokenUsage& usage) {
  const json::value* expected = spec.if_contains("usage");
  if (expected == nullptr) return;
  const json::object& u = expected->as_object();
  EXPECT_EQ(usage.prompt_tokens, UsageField(u, "prompt_tokens"));
  EXPECT_EQ(usage.completion_tokens, UsageField(u, "completion_tokens"));
  EXPECT_EQ(usage.cached_tokens, UsageField(u, "cached_tokens"));
  EXPECT_EQ(usage.cache_creation_tokens, UsageField(u, "cache_creation_tokens"));
  EXPECT_EQ(usage.reasoning_tokens, UsageField(u, "reasoning_tokens"));
}

// What an OpenAI SDK assembles from a chat.completion.chunk stream: one chat.completion.
json::value AssembleOpenAi(const Events& events) {
  json::object completion{{"object", "chat.completion"}};
  json::object message{{"role", nullptr}, {"content", nullptr}};
  json::array calls;
  json::value finish = nullptr;
  for (const auto& [name, chunk] : events) {
    if (!chunk.is_object() || chunk.as_object().contains("error")) continue;
    for (const char* key : {"id", "created", "model"}) completion[key] = chunk.at(key);
    if (chunk.as_object().contains("usage") && chunk.at("usage").is_object()) {
      completion["usage"] = chunk.at("usage");
    }
    for (const json::value& choice : chunk.at("choices").as_array()) {
      const json::object& delta = choice.at("delta").as_object();
      if (delta.contains("role")) message["role"] = delta.at("role");
      if (delta.contains("content") && delta.at("content").is_string()) {
        json::string text = message["content"].is_string() ? message["content"].as_string() : "";
        text.append(delta.at("content").as_string());
        message["content"] = text;
      }
      // As vLLM/DeepSeek clients accumulate it (the SDK passes unknown delta fields through).
      if (delta.contains("reasoning_content")) {
        json::string text = message.contains("reasoning_content")
                                ? message["reasoning_content"].as_string()
                                : json::string();
        text.append(delta.at("reasoning_content").as_string());
        message["reasoning_content"] = text;
      }
      if (delta.contains("tool_calls")) {
        for (const json::value& call : delta.at("tool_calls").as_array()) {
          const size_t index = static_cast<size_t>(call.at("index").as_int64());
          if (index >= calls.size()) calls.resize(index + 1, json::object{});
          json::object& into = calls[index].as_object();
          for (const char* key : {"id", "type"}) {
            if (call.as_object().contains(key)) into[key] = call.at(key);
          }
          const json::object& function = call.at("function").as_object();
          json::value& function_value = into["function"];
          if (!function_value.is_object()) function_value.emplace_object();
          json::object& f = function_value.as_object();
          if (function.contains("name")) f["name"] = function.at("name");
          json::string arguments = f.contains("arguments") ? f["arguments"].as_string() : "";
          arguments.append(function.at("arguments").as_string());
          f["arguments"] = arguments;
        }
      }
      if (!choice.at("finish_reason").is_null()) finish = choice.at("finish_reason");
    }
  }
  if (message["content"] == "") message["content"] = nullptr;
  if (!calls.empty()) message["tool_calls"] = calls;
  message["refusal"] = nullptr;
  completion["choices"] = json::array{json::object{
      {"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", finish}}};
  return completion;
}

// What an Anthropic SDK assembles from a Messages event stream: one Message.
json::value AssembleAnthropic(const Events& events) {
  json::object message;
  json::array content;
  std::vector<std::string> partial_json;
  for (const auto& [name, data] : events) {
    if (name == "message_start") {
      message = data.at("message").as_object();
    } else if (name == "content_block_start") {
      content.push_back(data.at("content_block"));
      partial_json.emplace_back();
    } else if (name == "content_block_delta") {
      const size_t index = static_cast<size_t>(data.at("index").as_int64());
      const json::object& delta = data.at("delta").as_object();
      if (delta.at("type") == "text_delta" || delta.at("type") == "thinking_delta" ||
          delta.at("type") == "signature_delta") {
        const char* field = delta.at("type") == "text_delta"       ? "text"
                            : delta.at("type") == "thinking_delta" ? "thinking"
                                                                   : "signature";
        json::string text = content.at(index).at(field).as_string();
        text.append(delta.at(field).as_string());
        content.at(index).as_object()[field] = text;
      } else {
        partial_json.at(index) += delta.at("partial_json").as_string();
      }
    } else if (name == "content_block_stop") {
      const size_t index = static_cast<size_t>(data.at("index").as_int64());
      if (!partial_json.at(index).empty()) {
        content.at(index).as_object()["input"] = json::parse(partial_json.at(index));
      }
    } else if (name == "message_delta") {
      for (const auto& [key, value] : data.at("delta").as_object()) message[key] = value;
      for (const auto& [key, value] : data.at("usage").as_object()) {
        message["usage"].as_object()[key] = value;
      }
    }
  }
  message["content"] = content;
  return message;
}

// What an OpenAI SDK's ResponseStream assembles from a Responses event stream: the response of
// the final response.completed / response.incomplete / response.failed event. Along the way,
// checks what the SDK relies on: sequence numbers 0, 1, 2...; every delta lands on an item
// that was added; and the snapshot built from the deltas has the final event's output.
json::value AssembleResponses(const Events& events) {
  json::value final_response;
  json::array output;  // the SDK's snapshot of output items
  int64_t expected_sequence = 0;
  for (const auto& [name, data] : events) {
    EXPECT_EQ(name, data.at("type").as_string()) << "the SSE event name is the event's type";
    EXPECT_EQ(data.at("sequence_number").as_int64(), expected_sequence++) << name;
    if (name == "response.output_item.added") {
      EXPECT_EQ(data.at("output_index").as_int64(), static_cast<int64_t>(output.size()));
      output.push_back(data.at("item"));
    } else if (name == "response.content_part.added") {
      json::object& item = output.at(data.at("output_index").as_int64()).as_object();
      item["content"].as_array().push_back(data.at("part"));
    } else if (name == "response.output_text.delta") {
      json::object& item = output.at(data.at("output_index").as_int64()).as_object();
      EXPECT_EQ(item["id"], data.at("item_id"));
      json::object& part = item["content"].as_array().at(0).as_object();
      json::string text = part["text"].as_string();
      text.append(data.at("delta").as_string());
      part["text"] = text;
    } else if (name == "response.reasoning_summary_part.added") {
      json::object& item = output.at(data.at("output_index").as_int64()).as_object();
      EXPECT_EQ(item["id"], data.at("item_id"));
      item["summary"].as_array().push_back(data.at("part"));
    } else if (name == "response.reasoning_summary_text.delta") {
      json::object& item = output.at(data.at("output_index").as_int64()).as_object();
      EXPECT_EQ(item["id"], data.at("item_id"));
      json::object& part =
          item["summary"].as_array().at(data.at("summary_index").as_int64()).as_object();
      json::string text = part["text"].as_string();
      text.append(data.at("delta").as_string());
      part["text"] = text;
    } else if (name == "response.function_call_arguments.delta") {
      json::object& item = output.at(data.at("output_index").as_int64()).as_object();
      EXPECT_EQ(item["id"], data.at("item_id"));
      json::string arguments = item["arguments"].as_string();
      arguments.append(data.at("delta").as_string());
      item["arguments"] = arguments;
    } else if (name == "response.output_item.done") {
      json::object& item = output.at(data.at("output_index").as_int64()).as_object();
      item["status"] = data.at("item").at("status");
      // A reasoning item's encrypted_content has no delta event: it first shows here.
      if (const json::value* encrypted =
              data.at("item").as_object().if_contains("encrypted_content")) {
        item["encrypted_content"] = *encrypted;
      }
      EXPECT_EQ(item, data.at("item").as_object()) << "the done item differs from its deltas";
    } else if (name == "response.completed" || name == "response.incomplete" ||
               name == "response.failed") {
      final_response = data.at("response");
      if (name == "response.failed") {
        // No done events after a failure: the open item's status is only in the final event.
        const json::array& final_output = final_response.at("output").as_array();
        for (size_t i = 0; i < output.size() && i < final_output.size(); ++i) {
          output[i].as_object()["status"] = final_output[i].at("status");
        }
      }
      EXPECT_EQ(final_response.at("output"), output) << "deltas and the final response differ";
    }
  }
  return final_response;
}

// What a client assembles from text_completion chunks: one text_completion.
json::value AssembleCompletions(const Events& events) {
  json::object completion;
  json::string text;
  json::value finish = nullptr;
  for (const auto& [name, chunk] : events) {
    if (!chunk.is_object() || chunk.as_object().contains("error")) continue;
    for (const char* key : {"id", "object", "created", "model"}) completion[key] = chunk.at(key);
    if (chunk.as_object().contains("usage") && chunk.at("usage").is_object()) {
      completion["usage"] = chunk.at("usage");
    }
    for (const json::value& choice : chunk.at("choices").as_array()) {
      text.append(choice.at("text").as_string());
      if (!choice.at("finish_reason").is_null()) finish = choice.at("finish_reason");
    }
  }
  completion["choices"] = json::array{
      json::object{{"text", text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish}}};
  return completion;
}

// What a Gemini client assembles from streamGenerateContent chunks: one
// GenerateContentResponse, consecutive text parts merged, the last finishReason and
// usageMetadata. An error chunk is kept as the body.
json::value AssembleGemini(const Events& events) {
  json::array parts;
  json::object answer;
  json::object candidate{{"index", 0}};
  for (const auto& [name, chunk] : events) {
    EXPECT_EQ(name, "") << "Gemini's SSE events are unnamed";
    if (chunk.as_object().contains("error")) return chunk;
    for (const char* key : {"usageMetadata", "modelVersion", "responseId"}) {
      if (chunk.as_object().contains(key)) answer[key] = chunk.at(key);
    }
    const json::object& c = chunk.at("candidates").as_array().at(0).as_object();
    if (c.contains("finishReason")) candidate["finishReason"] = c.at("finishReason");
    for (const json::value& part : c.at("content").at("parts").as_array()) {
      if (part.as_object().contains("text")) {
        // As the SDK's text accessors do: adjacent parts of the same kind (thought or answer)
        // read as one; a thought's signature lands on the thought it closes.
        const json::value* sig = part.as_object().if_contains("thoughtSignature");
        const bool thought = part.as_object().contains("thought");
        if (part.at("text") == "" && sig == nullptr) continue;
        if (!parts.empty() && parts.back().as_object().contains("text") &&
            parts.back().as_object().contains("thought") == thought) {
          json::string text = parts.back().at("text").as_string();
          text.append(part.at("text").as_string());
          parts.back().as_object()["text"] = text;
          if (sig != nullptr) parts.back().as_object()["thoughtSignature"] = *sig;
          continue;
        }
      }
      parts.push_back(part);
    }
  }
  candidate["content"] = json::object{{"parts", parts}, {"role", "model"}};
  answer["candidates"] = json::array{candidate};
  return answer;
}

// What a Cohere client assembles from v2 chat stream events: the whole-answer shape. Checks
// that every event's name is its data's type and that deltas land on opened blocks.
json::value AssembleCohere(const Events& events) {
  json::object answer;
  json::array content;
  json::array calls;
  for (const auto& [name, data] : events) {
    EXPECT_EQ(name, data.at("type").as_string()) << "the SSE event name is the event's type";
    const json::object& d = data.as_object();
    if (name == "message-start") {
      answer["id"] = d.at("id");
    } else if (name == "content-start") {
      EXPECT_EQ(d.at("index").as_int64(), static_cast<int64_t>(content.size()));
      content.push_back(d.at("delta").at("message").at("content"));
    } else if (name == "content-delta") {
      json::object& block = content.at(d.at("index").as_int64()).as_object();
      const std::string_view key = block.at("type") == "thinking" ? "thinking" : "text";
      json::string text = block[key].as_string();
      text.append(d.at("delta").at("message").at("content").at(key).as_string());
      block[key] = text;
    } else if (name == "tool-call-start") {
      EXPECT_EQ(d.at("index").as_int64(), static_cast<int64_t>(calls.size()));
      calls.push_back(d.at("delta").at("message").at("tool_calls"));
    } else if (name == "tool-call-delta") {
      json::object& f = calls.at(d.at("index").as_int64()).as_object()["function"].as_object();
      json::string arguments = f["arguments"].as_string();
      arguments.append(
          d.at("delta").at("message").at("tool_calls").at("function").at("arguments").as_string());
      f["arguments"] = arguments;
    } else if (name == "message-end") {
      answer["finish_reason"] = d.at("delta").at("finish_reason");
      answer["usage"] = d.at("delta").at("usage");
      if (d.at("delta").as_object().contains("error")) answer["error"] = d.at("delta").at("error");
    }
  }
  json::object message{{"role", "assistant"}, {"content", content}};
  if (!calls.empty()) message["tool_calls"] = calls;
  answer["message"] = message;
  return answer;
}

json::value Assemble(std::string_view client, const Events& events) {
  if (client == "anthropic") return AssembleAnthropic(events);
  if (client == "gemini") return AssembleGemini(events);
  if (client == "cohere") return AssembleCohere(events);
  if (client == "openai_responses") return AssembleResponses(events);
  if (client == "openai_completions") return AssembleCompletions(events);
  return AssembleOpenAi(events);
}

class GoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::path(TESTDATA_DIR) / GetParam();
    spec_ = ReadJson(dir_ / "case.json").as_object();
    client_request_ = Read(dir_ / "client_request.json");
  }
  const Provider& client() const { return ByName(spec_.at("client").as_string()); }
  const Provider& upstream() const { return ByName(spec_.at("upstream").as_string()); }
  bool Has(std::string_view file) const { return fs::exists(dir_ / file); }
  int64_t Int(std::string_view key, int64_t fallback) const {
    const json::value* value = spec_.if_contains(key);
    return value ? value->as_int64() : fallback;
  }

  // Runs the upstream stream through a fresh translator, fed in pieces of `piece` bytes.
  std::string Translate(std::string_view upstream_stream, size_t piece, bool include_usage,
                        TokenUsage* usage) const {
    EncoderOptions options;
    options.created = Int("created", 0);
    options.include_usage = include_usage;
    options.client_body = client_request_;
    StreamTranslator translator(upstream().NewDecoder(), client().NewEncoder(options));
    translator.set_fallback_model(spec_.at("upstream_model").as_string());  // as the relay does
    stream::SseParser sse;
    stream::NdjsonParser ndjson;
    const bool lines = upstream().stream_framing() == StreamFraming::kNdjson;
    std::string out;
    auto on_event = [&](const stream::SseEvent& e) {
      Status translated = translator.Translate(e, out);
      EXPECT_TRUE(translated.ok()) << translated.error().message;
    };
    for (size_t at = 0; at < upstream_stream.size(); at += piece) {
      const std::string_view chunk = upstream_stream.substr(at, piece);
      Status fed = lines ? ndjson.Feed(chunk, on_event) : sse.Feed(chunk, on_event);
      EXPECT_TRUE(fed.ok());
    }
    // Nothing incomplete is left, except the LF of a final CRLF fed apart from its CR: the
    // SseParser dispatches the event at the CR and counts that LF in the next event (Gemini
    // frames its SSE with CRLF).
    const bool split_crlf = !lines && piece < upstream_stream.size() &&
                            upstream_stream.ends_with("\r\n") &&
                            (upstream_stream.size() - 1) % piece == 0;
    EXPECT_EQ(lines ? ndjson.buffered_bytes() : sse.buffered_bytes(), split_crlf ? 1u : 0u);
    translator.Finish(out);
    if (usage) *usage = translator.usage();
    return out;
  }

  fs::path dir_;
  json::object spec_;
  std::string client_request_;
};

TEST_P(GoldenTest, Transcript) {
  SCOPED_TRACE(spec_.at("description").as_string().c_str());
  Result<json::object> pivot = client().ParseRequest(client_request_);
  // What the LLM door splices in from a client API's URL (doors/llm/chat_flow.h PathRequest).
  if (pivot.ok() && spec_.contains("path_model")) pivot->at("model") = spec_.at("path_model");
  if (pivot.ok() && spec_.contains("path_stream") && spec_.at("path_stream") == true) {
    (*pivot)["stream"] = true;
    (*pivot)["stream_options"] = json::object{{"include_usage", true}};
  }
  UpstreamRequestOptions options;
  const std::string upstream_model(spec_.at("upstream_model").as_string());
  options.upstream_model = upstream_model;
  options.default_max_tokens = Int("default_max_tokens", 0);
  Result<std::string> request = pivot.ok() ? upstream().BuildRequest(pivot.value(), options)
                                           : Result<std::string>(pivot.error());

  if (!Has("upstream_request.json")) {
    // A refusal: rendered in the client's dialect, with its status.
    ASSERT_FALSE(request.ok()) << "expected the request to be refused";
    ErrorReply reply = client().RenderError(request.error());
    EXPECT_EQ(reply.status, Int("client_status", 0));
    EXPECT_EQ(json::parse(reply.body), ReadJson(dir_ / "client_body.json")) << reply.body;
    return;
  }
  ASSERT_TRUE(request.ok()) << request.error().param << ": " << request.error().message;
  EXPECT_EQ(json::parse(request.value()), ReadJson(dir_ / "upstream_request.json"))
      << request.value();

  // The upstream's stream in its dialect's framing (stream_framing()).
  const char* stream_file = upstream().stream_framing() == StreamFraming::kNdjson
                                ? "upstream_stream.ndjson"
                                : "upstream_stream.sse";
  if (Has(stream_file)) {
    const std::string upstream_stream = Read(dir_ / stream_file);
    const json::value* stream_options = pivot->if_contains("stream_options");
    const bool include_usage = stream_options && stream_options->is_object() &&
                               stream_options->as_object().if_contains("include_usage") &&
                               stream_options->at("include_usage") == true;
    TokenUsage usage;
    const std::string whole =
        Translate(upstream_stream, upstream_stream.size(), include_usage, &usage);
    const Events expected = ParseSse(Read(dir_ / "client_stream.sse"));
    const Events actual = ParseSse(whole);
    EXPECT_EQ(Show(actual), Show(expected));
    ExpectUsage(spec_, usage);
    if (Has("client_body.json")) {
      // The final body a client SDK builds from the translated stream.
      const json::value assembled = Assemble(client().name(), actual);
      EXPECT_EQ(assembled, ReadJson(dir_ / "client_body.json")) << json::serialize(assembled);
    }
    // Translation is per event: any split of the upstream bytes gives the same client bytes.
    for (size_t piece : {1, 2, 7, 64}) {
      EXPECT_EQ(Translate(upstream_stream, piece, include_usage, nullptr), whole)
          << "fed in pieces of " << piece;
    }
  }

  if (Has("upstream_body.json") && !Has(stream_file)) {
    const std::string body = Read(dir_ / "upstream_body.json");
    const int64_t status = Int("upstream_status", 200);
    std::string rendered;
    int64_t rendered_status = 200;
    Result<Response> response =
        status / 100 == 2 ? upstream().ParseResponse(body)
                          : Result<Response>(upstream().ParseError(static_cast<int>(status), body));
    if (response.ok()) {
      // As the gateway does for an answer that names no model.
      if (response->model.empty()) response->model = spec_.at("upstream_model").as_string();
      EncoderOptions render;
      render.created = Int("created", 0);
      render.client_body = client_request_;
      rendered = client().RenderWholeResponse(response.value(), render);
      ExpectUsage(spec_, response->usage);
    } else {
      // An error answer, or an error object in a 2xx body: the client's error, never a 200.
      ErrorReply reply = client().RenderError(response.error());
      rendered = reply.body;
      rendered_status = reply.status;
    }
    EXPECT_EQ(rendered_status, Int("client_status", 200));
    EXPECT_EQ(json::parse(rendered), ReadJson(dir_ / "client_body.json")) << rendered;
  }
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  for (const auto& dialect : fs::directory_iterator(TESTDATA_DIR)) {
    if (!dialect.is_directory()) continue;  // README.md
    for (const auto& entry : fs::directory_iterator(dialect.path())) {
      if (fs::exists(entry.path() / "case.json")) {
        cases.push_back(dialect.path().filename().string() + "/" +
                        entry.path().filename().string());
      }
    }
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Providers, GoldenTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

TEST(GoldenCases, AreFound) { EXPECT_GE(Cases().size(), 5u); }

}  // namespace
}  // namespace turnpike::providers
