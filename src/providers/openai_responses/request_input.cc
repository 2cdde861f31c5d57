// Responses `instructions` and `input` items -> pivot messages.
#include "providers/openai_responses/request_input.h"

#include "providers/reasoning.h"
#include "providers/request_fields.h"

namespace turnpike::providers::openai_responses {
namespace {

namespace json = boost::json;

using request::At;
using request::Invalid;
using request::Present;
using request::WrongType;

// Fields an item may carry that change nothing for the model: output items passed back as
// input carry their id and status.
bool Inert(std::string_view key) { return key == "type" || key == "id" || key == "status"; }

// `value` is the string `text`. Comparing a json::value with a literal converts the literal to a
// json::value first, which cost more than the rest of a message's translation.
bool Is(const json::value& value, std::string_view text) {
  return value.is_string() && value.as_string() == text;
}

// The issuer an encrypted_content without a tag is read as: OpenAI's own, which no deployment
// gets back (Responses upstreams' reasoning is not read).
constexpr std::string_view kOwnDialect = "openai_responses";

class MessagesTranslation {
 public:
  MessagesTranslation(const json::object& request, json::storage_ptr sp)
      : in_(request), messages_(std::move(sp)) {}

  Result<json::array> Run() {
    if (Status s = Instructions(); !s.ok()) return s.error();
    if (Status s = Input(); !s.ok()) return s.error();
    return std::move(messages_);
  }

  // `item` as the first and only input item.
  Result<json::array> RunItem(const json::value& item) {
    if (Status s = Item(item, At("input", 0)); !s.ok()) return s.error();
    if (messages_.empty()) return Invalid("'input' must not be empty.", "input");
    return std::move(messages_);
  }

 private:
  // An object in the messages' storage (an agent turn's arena, a remembered item's), so that
  // it moves into them, and what it holds is copied once.
  json::object Object(
      std::initializer_list<std::pair<json::string_view, json::value_ref>> members) const {
    return json::object(members, messages_.storage());
  }

  Status Instructions() {
    if (!Present(in_, "instructions")) return Ok{};
    const json::value& instructions = in_.at("instructions");
    if (!instructions.is_string()) return WrongType("instructions", "a string");
    messages_.push_back(Object({{"role", "system"}, {"content", instructions}}));
    return Ok{};
  }

  Status Input() {
    const json::value* input = in_.if_contains("input");
    if (input == nullptr || input->is_null()) return WrongType("input", "a string or an array");
    if (input->is_string()) {
      messages_.push_back(Object({{"role", "user"}, {"content", *input}}));
      return Ok{};
    }
    if (!input->is_array()) return WrongType("input", "a string or an array");
    size_t i = 0;
    for (const json::value& item : input->as_array()) {
      if (Status s = Item(item, At("input", i++)); !s.ok()) return s;
    }
    if (messages_.empty()) return Invalid("'input' must not be empty.", "input");
    return Ok{};
  }

  Status Item(const json::value& item, const std::string& param) {
    if (!item.is_object()) return WrongType(param, "an object");
    const json::object& o = item.as_object();
    const json::value* type = o.if_contains("type");
    if (type == nullptr || type->is_null() || Is(*type, "message")) return Message(o, param);
    if (Is(*type, "function_call")) return FunctionCall(o, param);
    if (Is(*type, "function_call_output")) return FunctionCallOutput(o, param);
    if (Is(*type, "reasoning")) return Reasoning(o, param);
    return Unsupported(param + ".type",
                       "only message, function_call, function_call_output and reasoning items "
                       "are supported.");
  }

  Status Message(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"role", "content"}, param); !s.ok()) return s;
    const json::value* role = item.if_contains("role");
    if (role == nullptr || !role->is_string() ||
        (!Is(*role, "user") && !Is(*role, "system") && !Is(*role, "developer") &&
         !Is(*role, "assistant"))) {
      return Invalid("'" + param + ".role' must be one of user, system, developer, assistant.",
                     param + ".role");
    }
    const json::value* content = item.if_contains("content");
    if (content == nullptr || (!content->is_string() && !content->is_array())) {
      return WrongType(param + ".content", "a string or an array");
    }
    const bool user = Is(*role, "user");
    const bool assistant = Is(*role, "assistant");
    // The assistant message after a reasoning item is that item's turn: its content goes there.
    const bool joins_reasoning = assistant && reasoning_open_;
    reasoning_open_ = false;
    // OpenAI-compatible servers and other dialects know `system`; `developer` means the same.
    const std::string_view chat_role =
        Is(*role, "developer") ? std::string_view("system") : std::string_view(role->as_string());
    if (content->is_string()) {
      if (joins_reasoning) {
        messages_.back().as_object()["content"] = *content;
        return Ok{};
      }
      messages_.push_back(Object({{"role", chat_role}, {"content", *content}}));
      last_assistant_ = assistant;
      return Ok{};
    }
    json::array parts(messages_.storage());
    json::string text(messages_.storage());  // system and assistant content: the text parts, joined
    const std::string content_param = param + ".content";
    size_t i = 0;
    for (const json::value& part : content->as_array()) {
      const std::string at = At(content_param, i++);
      if (!part.is_object()) return WrongType(at, "an object");
      const json::object& p = part.as_object();
      const json::value* type = p.if_contains("type");
      const bool text_type = type && (Is(*type, "input_text") || Is(*type, "output_text"));
      if (text_type) {
        if (Status s = CheckFields(p, {"text", "annotations", "logprobs"}, at); !s.ok()) return s;
        Result<json::string_view> piece = StringField(p, "text", at);
        if (!piece.ok()) return piece.error();
        if (user) {
          parts.push_back(Object({{"type", "text"}, {"text", piece.value()}}));
        } else {
          text.append(piece.value());
        }
      } else if (type && Is(*type, "input_image") && user) {
        if (Status s = CheckFields(p, {"image_url", "detail"}, at); !s.ok()) return s;
        Result<json::string_view> url = StringField(p, "image_url", at);
        if (!url.ok()) return url.error();
        json::object image = Object({{"url", url.value()}});
        if (Present(p, "detail")) image["detail"] = p.at("detail");
        parts.push_back(Object({{"type", "image_url"}, {"image_url", std::move(image)}}));
      } else {
        return Unsupported(at + ".type", user ? "user content may be input_text or input_image."
                                              : "this role's content may only be text.");
      }
    }
    if (user) {
      messages_.push_back(Object({{"role", "user"}, {"content", std::move(parts)}}));
    } else if (joins_reasoning) {
      messages_.back().as_object()["content"] = std::move(text);
    } else {
      messages_.push_back(Object({{"role", chat_role}, {"content", std::move(text)}}));
    }
    last_assistant_ = assistant;
    return Ok{};
  }

  // Consecutive function calls (and the assistant text just before them) are one chat
  // assistant turn.
  Status FunctionCall(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"call_id", "name", "arguments"}, param); !s.ok()) return s;
    Result<json::string_view> call_id = StringField(item, "call_id", param);
    if (!call_id.ok()) return call_id.error();
    Result<json::string_view> name = StringField(item, "name", param);
    if (!name.ok()) return name.error();
    Result<json::string_view> arguments = StringField(item, "arguments", param);
    if (!arguments.ok()) return arguments.error();
    json::object call =
        Object({{"id", call_id.value()},
                {"type", "function"},
                {"function", Object({{"name", name.value()}, {"arguments", arguments.value()}})}});
    reasoning_open_ = false;
    if (!last_assistant_) {
      messages_.push_back(Object({{"role", "assistant"}, {"content", nullptr}}));
      last_assistant_ = true;
    }
    json::object& assistant = messages_.back().as_object();
    json::value& calls = assistant["tool_calls"];
    if (!calls.is_array()) calls.emplace_array();
    calls.as_array().push_back(std::move(call));
    if (Is(assistant["content"], "")) assistant["content"] = nullptr;
    return Ok{};
  }

  // A reasoning item the gateway rendered, passed back: its summary text becomes the next
  // assistant turn's reasoning_content, its encrypted_content ("<issuer>:<value>", reasoning.h)
  // that turn's signature, which only the issuing dialect's deployment is sent. The turn is an
  // assistant message opened here; the function calls and message that follow join it.
  Status Reasoning(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"summary", "encrypted_content"}, param); !s.ok()) return s;
    json::string summary(messages_.storage());
    if (const json::value* parts = item.if_contains("summary"); parts && !parts->is_null()) {
      if (!parts->is_array()) return WrongType(param + ".summary", "an array");
      size_t i = 0;
      for (const json::value& part : parts->as_array()) {
        const std::string at = At(param + ".summary", i++);
        if (!part.is_object() || !part.as_object().if_contains("type") ||
            !Is(part.at("type"), "summary_text")) {
          return Unsupported(at + ".type", "a reasoning summary may only be summary_text.");
        }
        Result<json::string_view> piece = StringField(part.as_object(), "text", at);
        if (!piece.ok()) return piece.error();
        summary.append(piece.value());
      }
    }
    json::object message = Object({{"role", "assistant"}, {"content", nullptr}});
    if (!summary.empty()) message[reasoning::kContent] = std::move(summary);
    if (const json::value* encrypted = item.if_contains("encrypted_content");
        encrypted && !encrypted->is_null()) {
      if (!encrypted->is_string()) return WrongType(param + ".encrypted_content", "a string");
      const reasoning::Tagged tagged = reasoning::SplitTagged(encrypted->as_string(), kOwnDialect);
      message[reasoning::kSignature] =
          Object({{"dialect", tagged.dialect}, {"value", tagged.value}});
    }
    messages_.push_back(std::move(message));
    last_assistant_ = true;
    reasoning_open_ = true;
    return Ok{};
  }

  Status FunctionCallOutput(const json::object& item, const std::string& param) {
    if (Status s = CheckFields(item, {"call_id", "output"}, param); !s.ok()) return s;
    Result<json::string_view> call_id = StringField(item, "call_id", param);
    if (!call_id.ok()) return call_id.error();
    const json::value* output = item.if_contains("output");
    json::string text(messages_.storage());
    if (output != nullptr && output->is_string()) {
      text = output->as_string();
    } else if (output != nullptr && output->is_array()) {
      size_t i = 0;
      for (const json::value& part : output->as_array()) {
        const std::string at = At(param + ".output", i++);
        if (!part.is_object() || !part.as_object().if_contains("type") ||
            !Is(part.at("type"), "input_text")) {
          return Unsupported(at + ".type", "a function call's output may only be text.");
        }
        Result<json::string_view> piece = StringField(part.as_object(), "text", at);
        if (!piece.ok()) return piece.error();
        text.append(piece.value());
      }
    } else {
      return WrongType(param + ".output", "a string or an array");
    }
    messages_.push_back(Object(
        {{"role", "tool"}, {"tool_call_id", call_id.value()}, {"content", std::move(text)}}));
    last_assistant_ = false;
    reasoning_open_ = false;
    return Ok{};
  }

  const json::object& in_;
  json::array messages_;
  bool last_assistant_ = false;  // the last pivot message is an assistant turn from `input`
  bool reasoning_open_ = false;  // that turn was opened by a reasoning item, no message yet
};

}  // namespace

Error Unsupported(const std::string& param, std::string_view why) {
  return Invalid("'" + param + "' is not supported here: " + std::string(why), param);
}

Status CheckFields(const json::object& object, std::initializer_list<std::string_view> known,
                   const std::string& param) {
  for (const auto& [key, value] : object) {
    if (Inert(key) || value.is_null()) continue;
    bool ok = false;
    for (std::string_view name : known) ok = ok || key == name;
    if (!ok) {
      return Unsupported(param + "." + std::string(key),
                         "the gateway cannot carry it to the model's provider.");
    }
  }
  return Ok{};
}

Result<json::string_view> StringField(const json::object& object, std::string_view key,
                                      const std::string& param) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || !value->is_string()) {
    return WrongType(param + "." + std::string(key), "a string");
  }
  return json::string_view(value->as_string());
}

Result<json::array> TranslateMessages(const json::object& request, json::storage_ptr sp) {
  return MessagesTranslation(request, std::move(sp)).Run();
}

Result<json::array> TranslateItem(const json::value& item, json::storage_ptr sp) {
  static const json::object kNone;
  return MessagesTranslation(kNone, std::move(sp)).RunItem(item);
}

}  // namespace turnpike::providers::openai_responses
