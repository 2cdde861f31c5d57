// (c) Anthropic Messages request -> OpenAI chat request (the pivot).
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "providers/anthropic/requests.h"
#include "providers/reasoning.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::anthropic {
namespace {

namespace json = boost::json;

constexpr size_t kMaxOpenAiStops = 4;  // OpenAI accepts up to 4 stop sequences

// Top-level fields with an OpenAI equivalent. `anthropic-version` style fields travel in
// headers, not here. Anything else present and not null is refused by name.
constexpr std::string_view kHandled[] = {
    "model",       "messages", "max_tokens", "system",      "stop_sequences", "stream",
    "temperature", "top_p",    "tools",      "tool_choice", "metadata",       "thinking",
};

constexpr std::string_view kDialect = "anthropic";  // the issuer tag of reasoning signatures

using request::Invalid;
using request::Present;

Error Unsupported(const std::string& param) {
  return Invalid("This model's provider (OpenAI-compatible) cannot express '" + param + "'.",
                 param);
}

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("Input should be " + std::string(expected) + ".", param);
}

std::string At(const std::string& base, size_t index) { return base + "." + std::to_string(index); }

// `cache_control` is a caching hint; OpenAI-compatible servers cache prompts by themselves, so
// it is accepted and not forwarded (the answer is the same). Other unknown block fields are
// refused.
Status CheckBlockFields(const json::object& block, std::initializer_list<std::string_view> known,
                        const std::string& param) {
  for (const auto& [key, value] : block) {
    if (key == "type" || key == "cache_control" || value.is_null()) continue;
    bool ok = false;
    for (std::string_view name : known) ok = ok || key == name;
    if (!ok) return Unsupported(param + "." + std::string(key));
  }
  return Ok{};
}

Result<json::string> TextOf(const json::object& block, const std::string& param) {
  if (Status s = CheckBlockFields(block, {"text"}, param); !s.ok()) return s.error();
  const json::value* text = block.if_contains("text");
  if (text == nullptr || !text->is_string()) return WrongType(param + ".text", "a valid string");
  return text->as_string();
}

Result<json::object> ImagePart(const json::object& block, const std::string& param) {
  if (Status s = CheckBlockFields(block, {"source"}, param); !s.ok()) return s.error();
  const json::value* source = block.if_contains("source");
  if (source == nullptr || !source->is_object()) {
    return WrongType(param + ".source", "a valid dictionary");
  }
  const json::object& s = source->as_object();
  const json::value* type = s.if_contains("type");
  std::string url;
  if (type && *type == "base64") {
    const json::value* media = s.if_contains("media_type");
    const json::value* data = s.if_contains("data");
    if (media == nullptr || !media->is_string() || data == nullptr || !data->is_string()) {
      return WrongType(param + ".source", "a base64 source with media_type and data");
    }
    url = "data:" + std::string(media->as_string()) + ";base64," + std::string(data->as_string());
  } else if (type && *type == "url" && s.if_contains("url") && s.at("url").is_string()) {
    url = std::string(s.at("url").as_string());
  } else {
    return Unsupported(param + ".source.type");
  }
  return json::object{{"type", "image_url"}, {"image_url", json::object{{"url", url}}}};
}

// Text of a tool_result's content: a string or text blocks.
Result<json::string> ToolResultText(const json::object& block, const std::string& param) {
  if (Status s = CheckBlockFields(block, {"tool_use_id", "content", "is_error"}, param); !s.ok()) {
    return s.error();
  }
  if (const json::value* is_error = block.if_contains("is_error"); is_error && *is_error == true) {
    // OpenAI tool messages have no error flag; dropping it would change what the model reads.
    return Unsupported(param + ".is_error");
  }
  const json::value* content = block.if_contains("content");
  if (content == nullptr || content->is_null()) return json::string();
  if (content->is_string()) return content->as_string();
  if (!content->is_array()) return WrongType(param + ".content", "a valid string or list");
  json::string text;
  size_t i = 0;
  for (const json::value& part : content->as_array()) {
    const std::string at = At(param + ".content", i++);
    if (!part.is_object() || part.as_object().if_contains("type") == nullptr ||
        part.at("type") != "text") {
      return Unsupported(at + ".type");
    }
    Result<json::string> piece = TextOf(part.as_object(), at);
    if (!piece.ok()) return piece.error();
    text.append(piece.value());
  }
  return text;
}

class Translation {
 public:
  explicit Translation(const json::object& request) : in_(request) {}

  Result<json::object> Run() {
    if (std::optional<std::string> field = request::FirstUnhandled(in_, kHandled)) {
      return Unsupported(*field);
    }
    const json::value* model = in_.if_contains("model");
    if (model == nullptr || !model->is_string()) return WrongType("model", "a valid string");
    out_["model"] = *model;
    if (Status s = System(); !s.ok()) return s.error();
    if (Status s = Messages(); !s.ok()) return s.error();
    out_["messages"] = std::move(messages_);
    const json::value* max_tokens = in_.if_contains("max_tokens");
    if (max_tokens == nullptr || !max_tokens->is_int64() || max_tokens->as_int64() < 1) {
      return WrongType("max_tokens", "a positive integer");
    }
    out_["max_completion_tokens"] = *max_tokens;
    for (std::string_view key : {"temperature", "top_p"}) {
      if (!Present(in_, key)) continue;
      if (!in_.at(key).is_number()) return WrongType(std::string(key), "a valid number");
      out_[key] = in_.at(key);
    }
    if (Status s = Stops(); !s.ok()) return s.error();
    if (Status s = Tools(); !s.ok()) return s.error();
    if (Status s = Thinking(); !s.ok()) return s.error();
    if (const json::value* stream = in_.if_contains("stream"); stream && *stream == true) {
      out_["stream"] = true;
      out_["stream_options"] = json::object{{"include_usage", true}};
    }
    if (Present(in_, "metadata")) {
      const json::value& metadata = in_.at("metadata");
      if (!metadata.is_object()) return WrongType("metadata", "a valid dictionary");
      for (const auto& [key, value] : metadata.as_object()) {
        if (value.is_null()) continue;
        if (key != "user_id") return Unsupported("metadata." + std::string(key));
        out_["user"] = value;
      }
    }
    return std::move(out_);
  }

 private:
  Status System() {
    if (!Present(in_, "system")) return Ok{};
    const json::value& system = in_.at("system");
    json::string text;
    if (system.is_string()) {
      text = system.as_string();
    } else if (system.is_array()) {
      size_t i = 0;
      for (const json::value& block : system.as_array()) {
        const std::string at = At("system", i++);
        if (!block.is_object() || block.as_object().if_contains("type") == nullptr ||
            block.at("type") != "text") {
          return Unsupported(at + ".type");
        }
        Result<json::string> piece = TextOf(block.as_object(), at);
        if (!piece.ok()) return piece.error();
        if (!text.empty()) text.append("\n");
        text.append(piece.value());
      }
    } else {
      return WrongType("system", "a valid string or list");
    }
    messages_.push_back(json::object{{"role", "system"}, {"content", text}});
    return Ok{};
  }

  Status Messages() {
    const json::value* messages = in_.if_contains("messages");
    if (messages == nullptr || !messages->is_array()) {
      return WrongType("messages", "a valid list");
    }
    size_t i = 0;
    for (const json::value& message : messages->as_array()) {
      const std::string param = At("messages", i++);
      if (!message.is_object()) return WrongType(param, "a valid dictionary");
      const json::value* role = message.as_object().if_contains("role");
      const json::value* content = message.as_object().if_contains("content");
      if (role == nullptr || (*role != "user" && *role != "assistant")) {
        return Invalid("Input should be 'user' or 'assistant'.", param + ".role");
      }
      if (content == nullptr) return WrongType(param + ".content", "a valid string or list");
      Status s = *role == "user" ? User(*content, param + ".content")
                                 : Assistant(*content, param + ".content");
      if (!s.ok()) return s;
    }
    return Ok{};
  }

  Status User(const json::value& content, const std::string& param) {
    if (content.is_string()) {
      messages_.push_back(json::object{{"role", "user"}, {"content", content}});
      return Ok{};
    }
    if (!content.is_array()) return WrongType(param, "a valid string or list");
    json::array parts;
    size_t i = 0;
    for (const json::value& block : content.as_array()) {
      const std::string at = At(param, i++);
      if (!block.is_object()) return WrongType(at, "a valid dictionary");
      const json::object& b = block.as_object();
      const json::value* type = b.if_contains("type");
      if (type && *type == "text") {
        Result<json::string> text = TextOf(b, at);
        if (!text.ok()) return text.error();
        parts.push_back(json::object{{"type", "text"}, {"text", text.value()}});
      } else if (type && *type == "image") {
        Result<json::object> image = ImagePart(b, at);
        if (!image.ok()) return image.error();
        parts.push_back(std::move(image.value()));
      } else if (type && *type == "tool_result") {
        // OpenAI wants each result as its own `tool` message right after the assistant turn.
        const json::value* id = b.if_contains("tool_use_id");
        if (id == nullptr || !id->is_string()) {
          return WrongType(at + ".tool_use_id", "a valid string");
        }
        if (!parts.empty()) {
          return Invalid("Tool results must come before other content in a user message.",
                         at + ".type");
        }
        Result<json::string> text = ToolResultText(b, at);
        if (!text.ok()) return text.error();
        messages_.push_back(
            json::object{{"role", "tool"}, {"tool_call_id", *id}, {"content", text.value()}});
      } else {
        return Unsupported(at + ".type");
      }
    }
    if (!parts.empty()) {
      messages_.push_back(json::object{{"role", "user"}, {"content", std::move(parts)}});
    }
    return Ok{};
  }

  Status Assistant(const json::value& content, const std::string& param) {
    json::object message{{"role", "assistant"}};
    if (content.is_string()) {
      message["content"] = content;
      messages_.push_back(std::move(message));
      return Ok{};
    }
    if (!content.is_array()) return WrongType(param, "a valid string or list");
    json::string text, thinking;
    json::array calls, redacted;
    json::value signature;
    size_t i = 0;
    for (const json::value& block : content.as_array()) {
      const std::string at = At(param, i++);
      if (!block.is_object()) return WrongType(at, "a valid dictionary");
      const json::object& b = block.as_object();
      const json::value* type = b.if_contains("type");
      if (type && *type == "text") {
        Result<json::string> piece = TextOf(b, at);
        if (!piece.ok()) return piece.error();
        text.append(piece.value());
      } else if (type && *type == "thinking") {
        if (Status s = CheckBlockFields(b, {"thinking", "signature"}, at); !s.ok()) return s;
        const json::value* piece = b.if_contains("thinking");
        const json::value* sig = b.if_contains("signature");
        if (piece == nullptr || !piece->is_string()) {
          return WrongType(at + ".thinking", "a valid string");
        }
        if (sig != nullptr && !sig->is_null() && !sig->is_string()) {
          return WrongType(at + ".signature", "a valid string");
        }
        thinking.append(piece->as_string());
        // The signature covers the turn's thinking; the last one given is the one to send back.
        // An empty one was rendered by the gateway for an upstream that signs nothing.
        if (sig != nullptr && sig->is_string() && !sig->as_string().empty()) {
          signature = json::object{{"dialect", kDialect}, {"value", *sig}};
        }
      } else if (type && *type == "redacted_thinking") {
        if (Status s = CheckBlockFields(b, {"data"}, at); !s.ok()) return s;
        const json::value* data = b.if_contains("data");
        if (data == nullptr || !data->is_string()) return WrongType(at + ".data", "a valid string");
        redacted.push_back(json::object{{"dialect", kDialect}, {"value", *data}});
      } else if (type && *type == "tool_use") {
        if (Status s = CheckBlockFields(b, {"id", "name", "input"}, at); !s.ok()) return s;
        const json::value* id = b.if_contains("id");
        const json::value* name = b.if_contains("name");
        const json::value* input = b.if_contains("input");
        if (id == nullptr || !id->is_string() || name == nullptr || !name->is_string() ||
            input == nullptr || !input->is_object()) {
          return WrongType(at, "a tool_use block with id, name and an input object");
        }
        calls.push_back(json::object{
            {"id", *id},
            {"type", "function"},
            {"function", json::object{{"name", *name}, {"arguments", json::serialize(*input)}}}});
      } else {
        return Unsupported(at + ".type");
      }
    }
    if (text.empty()) {
      message["content"] = nullptr;
    } else {
      message["content"] = std::move(text);
    }
    if (!calls.empty()) message["tool_calls"] = std::move(calls);
    if (!thinking.empty()) message[reasoning::kContent] = std::move(thinking);
    if (!signature.is_null()) message[reasoning::kSignature] = std::move(signature);
    if (!redacted.empty()) message[reasoning::kRedacted] = std::move(redacted);
    messages_.push_back(std::move(message));
    return Ok{};
  }

  // thinking {type: enabled, budget_tokens} -> reasoning_effort by the table of reasoning.h;
  // disabled asks for nothing. Anthropic's own bounds (>= 1024, < max_tokens) are its to check
  // on its deployments; any positive budget maps here.
  Status Thinking() {
    if (!Present(in_, "thinking")) return Ok{};
    const json::value& thinking = in_.at("thinking");
    if (!thinking.is_object()) return WrongType("thinking", "a valid dictionary");
    const json::object& t = thinking.as_object();
    const json::value* type = t.if_contains("type");
    if (type && *type == "disabled") {
      if (Status s = CheckBlockFields(t, {}, "thinking"); !s.ok()) return s;
      return Ok{};
    }
    if (type == nullptr || *type != "enabled") return Unsupported("thinking.type");
    if (Status s = CheckBlockFields(t, {"budget_tokens"}, "thinking"); !s.ok()) return s;
    const json::value* budget = t.if_contains("budget_tokens");
    if (budget == nullptr || !budget->is_int64() || budget->as_int64() < 1) {
      return WrongType("thinking.budget_tokens", "a positive integer");
    }
    out_[reasoning::kEffort] = reasoning::EffortName(reasoning::EffortFor(budget->as_int64()));
    return Ok{};
  }

  Status Stops() {
    if (!Present(in_, "stop_sequences")) return Ok{};
    const json::value& stops = in_.at("stop_sequences");
    if (!stops.is_array()) return WrongType("stop_sequences", "a valid list");
    if (stops.as_array().size() > kMaxOpenAiStops) {
      return Invalid("This model's provider accepts at most 4 stop sequences.", "stop_sequences");
    }
    for (const json::value& s : stops.as_array()) {
      if (!s.is_string()) return WrongType("stop_sequences", "a list of strings");
    }
    if (!stops.as_array().empty()) out_["stop"] = stops;
    return Ok{};
  }

  Status Tools() {
    if (Present(in_, "tools")) {
      const json::value& tools = in_.at("tools");
      if (!tools.is_array()) return WrongType("tools", "a valid list");
      json::array list;
      size_t i = 0;
      for (const json::value& tool : tools.as_array()) {
        const std::string at = At("tools", i++);
        if (!tool.is_object()) return WrongType(at, "a valid dictionary");
        const json::object& t = tool.as_object();
        // Server tools (web search, code execution...) have a versioned type; only client
        // tools ("custom" or no type) map to OpenAI functions.
        if (const json::value* type = t.if_contains("type"); type && *type != "custom") {
          return Unsupported(at + ".type");
        }
        if (Status s = CheckBlockFields(t, {"name", "description", "input_schema"}, at); !s.ok()) {
          return s;
        }
        const json::value* name = t.if_contains("name");
        const json::value* schema = t.if_contains("input_schema");
        if (name == nullptr || !name->is_string()) return WrongType(at + ".name", "a valid string");
        if (schema == nullptr || !schema->is_object()) {
          return WrongType(at + ".input_schema", "a valid dictionary");
        }
        json::object function{{"name", *name}};
        if (Present(t, "description")) function["description"] = t.at("description");
        function["parameters"] = *schema;
        list.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
      }
      if (!list.empty()) out_["tools"] = std::move(list);
    }
    if (!Present(in_, "tool_choice")) return Ok{};
    const json::value& choice = in_.at("tool_choice");
    const json::value* type = choice.is_object() ? choice.as_object().if_contains("type") : nullptr;
    if (type == nullptr) return WrongType("tool_choice", "a valid dictionary");
    if (*type == "auto") {
      out_["tool_choice"] = "auto";
    } else if (*type == "any") {
      out_["tool_choice"] = "required";
    } else if (*type == "none") {
      out_["tool_choice"] = "none";
    } else if (*type == "tool" && choice.as_object().if_contains("name")) {
      out_["tool_choice"] = json::object{{"type", "function"},
                                         {"function", json::object{{"name", choice.at("name")}}}};
    } else {
      return Unsupported("tool_choice.type");
    }
    if (const json::value* d = choice.as_object().if_contains("disable_parallel_tool_use");
        d && *d == true && *type != "none") {
      out_["parallel_tool_calls"] = false;
    }
    return Ok{};
  }

  const json::object& in_;
  json::object out_;
  json::array messages_;
};

}  // namespace

Result<json::object> ParseMessagesRequest(std::string_view body) {
  boost::system::error_code ec;
  // Translation reads `doc` into a new DOM (out_), so doc can live in a scratch buffer.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec) return Invalid("The request body is not valid JSON: " + ec.message(), "");
  if (!doc.is_object()) return Invalid("The request body must be a JSON object.", "");
  return Translation(doc.as_object()).Run();
}

}  // namespace turnpike::providers::anthropic
