// (a) OpenAI chat request -> Anthropic Messages request.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/anthropic/requests.h"
#include "providers/reasoning.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::anthropic {
namespace {

namespace json = boost::json;

constexpr double kMaxTemperature = 1.0;  // Anthropic's range is [0, 1]; OpenAI's is [0, 2]

// Top-level fields that have an Anthropic equivalent (or, for stream_options, whose meaning is
// kept by the gateway: Anthropic always reports usage). Anything else present and not null is
// refused, so that nothing the client asked for is dropped silently.
constexpr std::string_view kHandled[] = {
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "stream",
    "stream_options",
    "tools",
    "tool_choice",
    "user",
    "n",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",
};

// Anthropic's smallest thinking budget; budget_tokens must also stay below max_tokens.
constexpr int64_t kMinThinkingBudget = 1024;
constexpr std::string_view kDialect = "anthropic";  // the issuer tag of reasoning signatures

using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;

constexpr std::string_view kName = "Anthropic";  // in errors: "... provider (Anthropic)."

Error Unsupported(const std::string& param) { return request::UnsupportedBy(param, kName); }

// The request is built in the caller's scratch storage (`sp`, providers/scratch_json.h) and
// serialized before it goes, so its objects, arrays and strings cost no allocation of their own.

// An OpenAI image_url part -> an Anthropic image block.
Result<json::object> ImageBlock(const json::value& part, const std::string& param,
                                const json::storage_ptr& sp) {
  Result<std::string_view> url =
      request::ImageUrlOf(part.as_object(), param,
                          "Anthropic chooses image resolution itself; 'detail' must be 'auto'.");
  if (!url.ok()) return url.error();
  const std::string_view text = url.value();
  json::object source(sp);
  if (request::IsDataUrl(text)) {
    const std::optional<request::DataUrl> data = request::ParseBase64DataUrl(text);
    if (!data)
      return Invalid("An image data URL must be base64 encoded.", param + ".image_url.url");
    source["type"] = "base64";
    source["media_type"] = data->media_type;
    source["data"] = data->data;
  } else if (text.starts_with("https://") || text.starts_with("http://")) {
    source["type"] = "url";
    source["url"] = text;
  } else {
    return Invalid("An image URL must be an http(s) URL or a base64 data URL.",
                   param + ".image_url.url");
  }
  json::object block(sp);
  block["type"] = "image";
  block["source"] = std::move(source);
  return block;
}

// Message content (a string or an array of parts) -> Anthropic content blocks.
Status AppendContent(const json::value& content, const std::string& param, bool allow_images,
                     json::array& blocks) {
  const json::storage_ptr& sp = blocks.storage();
  if (content.is_null()) return Ok{};
  if (content.is_string()) {
    if (content.as_string().empty()) return Ok{};
    blocks.push_back(json::object({{"type", "text"}, {"text", content}}, sp));
    return Ok{};
  }
  if (!content.is_array()) return WrongType(param, "a string or an array");
  size_t i = 0;
  for (const json::value& part : content.as_array()) {
    const std::string at = At(param, i++);
    if (!part.is_object()) return WrongType(at, "an object");
    const json::value* type = part.as_object().if_contains("type");
    if (type && *type == "text") {
      const json::value* text = part.as_object().if_contains("text");
      if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
      blocks.push_back(json::object({{"type", "text"}, {"text", *text}}, sp));
    } else if (type && *type == "image_url" && allow_images) {
      Result<json::object> image = ImageBlock(part, at, sp);
      if (!image.ok()) return image.error();
      blocks.push_back(std::move(image.value()));
    } else {
      return Unsupported(at + ".type");
    }
  }
  return Ok{};
}

// The text of a system or developer message, as text blocks.
Status AppendSystem(const json::object& message, const std::string& param, json::array& system) {
  const json::value* content = message.if_contains("content");
  if (content == nullptr) return Invalid("Missing required parameter.", param + ".content");
  return AppendContent(*content, param + ".content", false, system);
}

Result<json::object> ToolUseBlock(const json::value& call, const std::string& param,
                                  const json::storage_ptr& sp) {
  if (!call.is_object()) return WrongType(param, "an object");
  const json::object& fields = call.as_object();
  const json::value* type = fields.if_contains("type");
  if (type && *type != "function") return Unsupported(param + ".type");
  const json::value* id = fields.if_contains("id");
  const json::value* function = fields.if_contains("function");
  if (id == nullptr || !id->is_string()) return WrongType(param + ".id", "a string");
  if (function == nullptr || !function->is_object()) {
    return WrongType(param + ".function", "an object");
  }
  const json::value* name = function->as_object().if_contains("name");
  const json::value* arguments = function->as_object().if_contains("arguments");
  if (name == nullptr || !name->is_string()) return WrongType(param + ".function.name", "a string");
  if (arguments == nullptr || !arguments->is_string()) {
    return WrongType(param + ".function.arguments", "a string");
  }
  boost::system::error_code ec;
  json::value input = json::parse(arguments->as_string(), ec, sp);
  if (ec || !input.is_object()) {
    return Invalid("Tool call arguments must be a JSON object.", param + ".function.arguments");
  }
  return json::object(
      {{"type", "tool_use"}, {"id", *id}, {"name", *name}, {"input", std::move(input)}}, sp);
}

class Translation {
 public:
  Translation(const json::object& chat, json::storage_ptr sp)
      : chat_(chat), sp_(std::move(sp)), system_(sp_), messages_(sp_) {}

  Result<json::object> Run(const UpstreamRequestOptions& options) {
    if (std::optional<std::string> field = request::FirstUnhandled(chat_, kHandled)) {
      return Unsupported(*field);
    }
    json::object out(sp_);
    out["model"] = options.upstream_model;
    if (Status s = Messages(); !s.ok()) return s.error();
    if (!system_.empty()) out["system"] = std::move(system_);
    out["messages"] = std::move(messages_);
    if (Status s = Limits(out, options); !s.ok()) return s.error();
    if (Status s = Sampling(out); !s.ok()) return s.error();
    if (Status s = Tools(out); !s.ok()) return s.error();
    if (const json::value* stream = chat_.if_contains("stream"); stream && stream->is_bool()) {
      if (stream->as_bool()) out["stream"] = true;
    }
    if (Present(chat_, "user")) {
      if (!chat_.at("user").is_string()) return WrongType("user", "a string");
      out["metadata"] = json::object({{"user_id", chat_.at("user")}}, sp_);
    }
    return out;
  }

 private:
  // The user message that tool results and user content are being merged into.
  json::array& UserBlocks() {
    if (messages_.empty() || messages_.back().as_object().at("role") != "user") {
      messages_.push_back(json::object({{"role", "user"}, {"content", json::array(sp_)}}, sp_));
    }
    return messages_.back().as_object()["content"].as_array();
  }

  Status Messages() {
    Status read = request::ForEachMessage(
        chat_, [this](const json::object& message, const std::string& param) {
          return Message(message, param);
        });
    if (!read.ok()) return read;
    return Ok{};
  }

  Status Message(const json::object& message, const std::string& param) {
    const json::value* role_value = message.if_contains("role");
    if (role_value == nullptr || !role_value->is_string()) {
      return WrongType(param + ".role", "a string");
    }
    const std::string_view role = role_value->as_string();
    if (Present(message, "name")) return Unsupported(param + ".name");
    const json::value null_content;
    const json::value* content = message.if_contains("content");
    if (content == nullptr) content = &null_content;
    if (role == "system" || role == "developer") {
      // Anthropic has one top-level system prompt: only leading system messages fit in it.
      if (!messages_.empty()) {
        return Invalid("Anthropic accepts system messages only before the conversation.",
                       param + ".role");
      }
      return AppendSystem(message, param, system_);
    }
    if (role == "user") return AppendContent(*content, param + ".content", true, UserBlocks());
    if (role == "tool") {
      const json::value* id = message.if_contains("tool_call_id");
      if (id == nullptr || !id->is_string()) return WrongType(param + ".tool_call_id", "a string");
      json::array text(sp_);
      if (Status s = AppendContent(*content, param + ".content", false, text); !s.ok()) return s;
      // Results go first in the user turn that follows the assistant's tool calls.
      UserBlocks().push_back(json::object(
          {{"type", "tool_result"}, {"tool_use_id", *id}, {"content", std::move(text)}}, sp_));
      return Ok{};
    }
    if (role == "assistant") {
      json::array blocks(sp_);
      if (Present(message, "refusal")) return Unsupported(param + ".refusal");
      ReasoningBlocks(message, blocks);
      if (Present(message, "audio")) return Unsupported(param + ".audio");
      if (Status s = AppendContent(*content, param + ".content", false, blocks); !s.ok()) return s;
      if (const json::value* calls = message.if_contains("tool_calls");
          calls && !calls->is_null()) {
        if (!calls->is_array()) return WrongType(param + ".tool_calls", "an array");
        size_t j = 0;
        for (const json::value& call : calls->as_array()) {
          Result<json::object> block = ToolUseBlock(call, At(param + ".tool_calls", j++), sp_);
          if (!block.ok()) return block.error();
          blocks.push_back(std::move(block.value()));
        }
      }
      messages_.push_back(
          json::object({{"role", "assistant"}, {"content", std::move(blocks)}}, sp_));
      return Ok{};
    }
    return Unsupported(param + ".role");
  }

  // Thinking blocks go back first in the assistant turn, and only those Anthropic signed:
  // Anthropic refuses a thinking block without its signature, and a signature another dialect
  // issued means nothing to it (reasoning.h). Unsigned reasoning text is dropped.
  void ReasoningBlocks(const json::object& message, json::array& blocks) {
    const json::value* text = message.if_contains(reasoning::kContent);
    const json::value* signature = message.if_contains(reasoning::kSignature);
    const json::value* ours = signature ? reasoning::IssuedBy(*signature, kDialect) : nullptr;
    if (ours != nullptr) {
      blocks.push_back(json::object({{"type", "thinking"},
                                     {"thinking", text && text->is_string() ? *text : ""},
                                     {"signature", *ours}},
                                    sp_));
    }
    const json::value* redacted = message.if_contains(reasoning::kRedacted);
    if (redacted == nullptr || !redacted->is_array()) return;
    for (const json::value& entry : redacted->as_array()) {
      if (const json::value* data = reasoning::IssuedBy(entry, kDialect)) {
        blocks.push_back(json::object({{"type", "redacted_thinking"}, {"data", *data}}, sp_));
      }
    }
  }

  Status Limits(json::object& out, const UpstreamRequestOptions& options) {
    Result<std::optional<int64_t>> limit = request::MaxOutputTokens(chat_);
    if (!limit.ok()) return limit.error();
    Result<std::optional<reasoning::Effort>> effort = reasoning::ReadEffort(chat_);
    if (!effort.ok()) return effort.error();
    int64_t budget = reasoning::BudgetFor(effort->value_or(reasoning::Effort::kNone));
    int64_t max_tokens = limit->value_or(options.default_max_tokens);
    // With no limit from the client, thinking gets its budget on top of the default answer
    // length; with one, thinking shares it (budget_tokens must stay below max_tokens).
    if (budget > 0 && !limit->has_value()) max_tokens += budget;
    if (max_tokens < 1) {
      return Invalid("Anthropic requires a token limit: set max_completion_tokens.",
                     "max_completion_tokens");
    }
    out["max_tokens"] = max_tokens;
    if (budget > 0) {
      budget = std::min(budget, max_tokens - 1);
      if (budget < kMinThinkingBudget) {
        return Invalid(
            "Anthropic thinks with at least 1024 tokens: 'reasoning_effort' needs "
            "max_completion_tokens above 1024.",
            std::string(reasoning::kEffort));
      }
      out["thinking"] = json::object({{"type", "enabled"}, {"budget_tokens", budget}}, sp_);
    }
    return request::OneChoice(chat_, "Anthropic returns one choice per request; 'n' must be 1.");
  }

  Status Sampling(json::object& out) {
    if (Present(chat_, "temperature")) {
      const json::value& t = chat_.at("temperature");
      if (!t.is_number()) return WrongType("temperature", "a number");
      const double value = t.to_number<double>();
      if (value < 0 || value > kMaxTemperature) {
        return Invalid("Anthropic accepts a temperature between 0 and 1.", "temperature");
      }
      out["temperature"] = t;
    }
    if (Present(chat_, "top_p")) {
      if (!chat_.at("top_p").is_number()) return WrongType("top_p", "a number");
      out["top_p"] = chat_.at("top_p");
    }
    Result<std::optional<json::array>> stop = request::StopSequences(chat_);
    if (!stop.ok()) return stop.error();
    if (*stop) out["stop_sequences"] = std::move(**stop);
    if (Present(chat_, "response_format")) {
      const json::value* type = chat_.at("response_format").is_object()
                                    ? chat_.at("response_format").as_object().if_contains("type")
                                    : nullptr;
      // Anthropic's Messages API has no JSON mode; only plain text can be honoured.
      if (type == nullptr || *type != "text") return Unsupported("response_format");
    }
    return Ok{};
  }

  Status Tools(json::object& out) {
    Result<std::vector<request::FunctionTool>> tools = request::ReadFunctionTools(chat_, kName);
    if (!tools.ok()) return tools.error();
    json::array list(sp_);
    for (const request::FunctionTool& tool : tools.value()) {
      if (tool.strict) return Unsupported(tool.param + ".function.strict");
      json::object converted({{"name", *tool.name}}, sp_);
      if (tool.description != nullptr) converted["description"] = *tool.description;
      if (tool.parameters != nullptr) {
        converted["input_schema"] = *tool.parameters;
      } else {
        converted["input_schema"] = json::object({{"type", "object"}}, sp_);
      }
      list.push_back(std::move(converted));
    }
    if (!list.empty()) out["tools"] = std::move(list);
    json::object choice(sp_);
    if (Present(chat_, "tool_choice")) {
      const json::value& value = chat_.at("tool_choice");
      if (value == "none") {
        choice["type"] = "none";
      } else if (value == "auto") {
        choice["type"] = "auto";
      } else if (value == "required") {
        choice["type"] = "any";
      } else if (value.is_object() && value.as_object().if_contains("function") &&
                 value.at("function").is_object() &&
                 value.at("function").as_object().if_contains("name")) {
        choice["type"] = "tool";
        choice["name"] = value.at("function").at("name");
      } else {
        return Unsupported("tool_choice");
      }
    }
    if (Present(chat_, "parallel_tool_calls")) {
      const json::value& parallel = chat_.at("parallel_tool_calls");
      if (!parallel.is_bool()) return WrongType("parallel_tool_calls", "a boolean");
      if (!parallel.as_bool()) {
        if (choice.empty()) choice["type"] = "auto";
        if (choice["type"] != "none") choice["disable_parallel_tool_use"] = true;
      }
    }
    if (!choice.empty()) out["tool_choice"] = std::move(choice);
    return Ok{};
  }

  const json::object& chat_;
  json::storage_ptr sp_;
  json::array system_;
  json::array messages_;
};

}  // namespace

Result<std::string> BuildMessagesRequest(const json::object& chat,
                                         const UpstreamRequestOptions& options) {
  ScratchJson scratch;
  Result<json::object> out = Translation(chat, scratch.storage()).Run(options);
  if (!out.ok()) return out.error();
  return json::serialize(out.value());
}

}  // namespace turnpike::providers::anthropic
