#include "providers/openai_completions/completions_provider.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/json_text.h"
#include "providers/openai/stream_codec.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::openai_completions {
namespace {

namespace json = boost::json;

// The API's default when max_tokens is absent or null.
constexpr int64_t kDefaultMaxTokens = 16;
constexpr size_t kMaxStops = 4;

// Forwarded as they are: the chat completions API has the same fields with the same meaning.
constexpr std::string_view kSameInChat[] = {
    "temperature", "top_p", "presence_penalty", "frequency_penalty", "seed", "logit_bias", "user"};

// Read below; anything else present and not null is refused by name.
constexpr std::string_view kHandled[] = {"model",    "prompt",         "max_tokens", "stop",
                                         "stream",   "stream_options", "n",          "echo",
                                         "logprobs", "best_of",        "suffix"};

using request::Invalid;
using request::Present;

Error NotUpstream() {
  return Error{ErrorCode::kInternal,
               "The completions API dialect is a client API only, not an upstream provider.", ""};
}

bool Handled(std::string_view key) {
  for (std::string_view name : kHandled) {
    if (key == name) return true;
  }
  for (std::string_view name : kSameInChat) {
    if (key == name) return true;
  }
  return false;
}

Result<json::string> Prompt(const json::object& request) {
  const json::value* prompt = request.if_contains("prompt");
  if (prompt != nullptr && prompt->is_string()) return prompt->as_string();
  if (prompt != nullptr && prompt->is_array() && prompt->as_array().size() == 1 &&
      prompt->as_array()[0].is_string()) {
    return prompt->as_array()[0].as_string();
  }
  return Invalid(
      "'prompt' must be one string (or an array of one string): several prompts and token "
      "arrays cannot be translated to a chat model.",
      "prompt");
}

// Fields that only have their default value here.
Status Defaults(const json::object& request) {
  if (Present(request, "n") && request.at("n") != 1) {
    return Invalid("Only n = 1 is supported.", "n");
  }
  if (Present(request, "best_of") && request.at("best_of") != 1) {
    return Invalid("Only best_of = 1 is supported.", "best_of");
  }
  if (Present(request, "echo") && request.at("echo") != false) {
    return Invalid("'echo' is not supported: a chat model does not return the prompt.", "echo");
  }
  if (Present(request, "logprobs")) {
    return Invalid("'logprobs' is not supported through this gateway's completions API.",
                   "logprobs");
  }
  if (Present(request, "suffix") && request.at("suffix") != "") {
    return Invalid("'suffix' is not supported: a chat model cannot insert text.", "suffix");
  }
  return Ok{};
}

Result<json::object> Translate(const json::object& request) {
  for (const auto& [key, value] : request) {
    if (!value.is_null() && !Handled(key)) {
      return Invalid("Unrecognized request argument supplied: " + std::string(key),
                     std::string(key));
    }
  }
  const json::value* model = request.if_contains("model");
  if (model == nullptr || !model->is_string() || model->as_string().empty()) {
    return Invalid("'model' must be a non-empty string.", "model");
  }
  Result<json::string> prompt = Prompt(request);
  if (!prompt.ok()) return prompt.error();
  if (Status s = Defaults(request); !s.ok()) return s.error();
  json::object out{{"model", *model}};
  out["messages"] = json::array{json::object{{"role", "user"}, {"content", prompt.value()}}};
  int64_t max_tokens = kDefaultMaxTokens;
  if (Present(request, "max_tokens")) {
    const json::value& max = request.at("max_tokens");
    if (!max.is_int64() || max.as_int64() < 1) {
      return Invalid("'max_tokens' must be a positive integer.", "max_tokens");
    }
    max_tokens = max.as_int64();
  }
  out["max_completion_tokens"] = max_tokens;
  for (std::string_view key : kSameInChat) {
    if (Present(request, key)) out[key] = request.at(key);
  }
  if (Present(request, "stop")) {
    const json::value& stop = request.at("stop");
    bool ok = stop.is_string();
    if (stop.is_array()) {
      ok = stop.as_array().size() <= kMaxStops;
      for (const json::value& s : stop.as_array()) ok = ok && s.is_string();
    }
    if (!ok) return Invalid("'stop' must be a string or up to 4 strings.", "stop");
    out["stop"] = stop;
  }
  if (Present(request, "stream")) {
    if (!request.at("stream").is_bool()) return Invalid("'stream' must be a boolean.", "stream");
    if (request.at("stream") == true) out["stream"] = true;
  }
  if (Present(request, "stream_options")) {
    const json::value& options = request.at("stream_options");
    if (!options.is_object())
      return Invalid("'stream_options' must be an object.", "stream_options");
    for (const auto& [key, value] : options.as_object()) {
      if (value.is_null()) continue;
      if (key != "include_usage" || !value.is_bool()) {
        return Invalid("Only stream_options.include_usage (a boolean) is supported.",
                       "stream_options." + std::string(key));
      }
    }
    if (out.contains("stream")) {
      out["stream_options"] = options;
    } else if (!options.as_object().empty()) {
      return Invalid("'stream_options' is only allowed when 'stream' is true.", "stream_options");
    }
  }
  return out;
}

}  // namespace

UpstreamEndpoint CompletionsProvider::Endpoint(const EndpointParams&) const { return {}; }

Result<std::string> CompletionsProvider::BuildRequest(const json::object&,
                                                      const UpstreamRequestOptions&) const {
  return NotUpstream();
}

std::unique_ptr<StreamDecoder> CompletionsProvider::NewDecoder() const { return nullptr; }

Result<Response> CompletionsProvider::ParseResponse(std::string_view) const {
  return NotUpstream();
}

Error CompletionsProvider::ParseError(int, std::string_view) const { return NotUpstream(); }

Result<json::object> CompletionsProvider::ParseRequest(std::string_view body) const {
  boost::system::error_code ec;
  // Translate reads `doc` into a new DOM, so doc can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec) {
    return Invalid("We could not parse the JSON body of your request: " + ec.message(), "");
  }
  if (!doc.is_object()) return Invalid("The request body must be a JSON object.", "");
  return Translate(doc.as_object());
}

std::unique_ptr<StreamEncoder> CompletionsProvider::NewEncoder(
    const EncoderOptions& options) const {
  return std::make_unique<CompletionsStreamEncoder>(options);
}

std::string CompletionsProvider::RenderResponse(const Response& response, int64_t created) const {
  ScratchJson scratch;  // the answer is built here and serialized before it goes
  const json::storage_ptr sp = scratch.storage();
  const TokenUsage& u = response.usage;
  const int64_t prompt = std::max<int64_t>(u.prompt_tokens, 0);
  const int64_t completion = std::max<int64_t>(u.completion_tokens, 0);
  json::object usage({{"prompt_tokens", prompt},
                      {"completion_tokens", completion},
                      {"total_tokens", prompt + completion}},
                     sp);
  if (u.cached_tokens >= 0) {
    usage["prompt_tokens_details"] = json::object({{"cached_tokens", u.cached_tokens}}, sp);
  }
  json::object choice({{"text", response.text},
                       {"index", 0},
                       {"logprobs", nullptr},
                       {"finish_reason", openai::FinishReasonName(response.finish)}},
                      sp);
  json::object completion_object({{"id", "cmpl-" + response.id},
                                  {"object", "text_completion"},
                                  {"created", created},
                                  {"model", response.model},
                                  {"choices", json::array({std::move(choice)}, sp)},
                                  {"usage", std::move(usage)}},
                                 sp);
  return json::serialize(completion_object);
}

ErrorReply CompletionsProvider::RenderError(const Error& error) const {
  Error named = error;
  // The pivot's names for the client's fields.
  if (named.param.starts_with("messages")) named.param = "prompt";
  if (named.param == "max_completion_tokens") named.param = "max_tokens";
  std::string body = R"({"error":)" + openai::ErrorObject(named) + "}";
  return ErrorReply{HttpStatus(error.code), std::move(body)};
}

void CompletionsStreamEncoder::Start(const StreamEvent& event) {
  started_ = true;
  prefix_.assign(R"(data: {"id":"cmpl-)");
  prefix_.append(event.id);
  prefix_.append(R"(","object":"text_completion","created":)");
  AppendInt(prefix_, options_.created);
  prefix_.append(R"(,"model":)");
  AppendQuotedEscaped(prefix_, event.model);
  prefix_.push_back(',');
}

void CompletionsStreamEncoder::Chunk(std::string_view escaped_text, FinishReason finish) {
  std::string& o = out();
  o.append(prefix_);
  o.append(R"("choices":[{"text":)");
  AppendQuotedEscaped(o, escaped_text);
  o.append(R"(,"index":0,"logprobs":null,"finish_reason":)");
  if (finish == FinishReason::kNone) {
    o.append("null");
  } else {
    AppendJsonQuoted(o, openai::FinishReasonName(finish));
  }
  o.append("}]");
  if (options_.include_usage) o.append(R"(,"usage":null)");
  o.append("}\n\n");
}

void CompletionsStreamEncoder::OnEvent(const StreamEvent& event) {
  if (done_) return;
  std::string& o = out();
  if (event.kind == EventKind::kError) {
    done_ = true;
    o.append(R"(data: {"error":)");
    o.append(openai::ErrorObject(*event.error));
    o.append("}\n\n");
    return;
  }
  if (!started_) {
    StreamEvent start;
    if (event.kind == EventKind::kStart) start = event;
    Start(start);
    if (event.kind == EventKind::kStart) return;
  }
  switch (event.kind) {
    case EventKind::kTextDelta:
      Chunk(event.text, FinishReason::kNone);
      break;
    case EventKind::kFinish:
      Chunk("", event.finish);
      break;
    case EventKind::kUsage:
      usage_ = event.usage;
      break;
    case EventKind::kEnd:
      done_ = true;
      if (options_.include_usage) {
        const int64_t prompt = std::max<int64_t>(usage_.prompt_tokens, 0);
        const int64_t completion = std::max<int64_t>(usage_.completion_tokens, 0);
        o.append(prefix_);
        o.append(R"("choices":[],"usage":{"prompt_tokens":)");
        AppendInt(o, prompt);
        o.append(R"(,"completion_tokens":)");
        AppendInt(o, completion);
        o.append(R"(,"total_tokens":)");
        AppendInt(o, prompt + completion);
        if (usage_.cached_tokens >= 0) {
          o.append(R"(,"prompt_tokens_details":{"cached_tokens":)");
          AppendInt(o, usage_.cached_tokens);
          o.push_back('}');
        }
        o.append("}}\n\n");
      }
      o.append("data: [DONE]\n\n");
      break;
    default:
      break;
  }
}

}  // namespace turnpike::providers::openai_completions
