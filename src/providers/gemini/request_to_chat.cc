// Gemini GenerateContentRequest -> OpenAI chat request (the pivot), for Gemini clients: the
// contents (system instruction, turns, parts, function calls and responses) here, the settings
// in request_to_chat_settings.cc.
#include <boost/json/serialize.hpp>
#include <deque>
#include <map>

#include "providers/gemini/client_requests.h"
#include "providers/gemini/request_to_chat_settings.h"
#include "providers/gemini/thought_signature.h"
#include "providers/reasoning.h"
#include "providers/request_fields.h"
#include "providers/scratch_json.h"

namespace turnpike::providers::gemini {
namespace {

namespace json = boost::json;

using client_request::Unsupported;
using client_request::WrongType;
using request::At;
using request::Invalid;
using request::Present;

// Top-level fields with a pivot equivalent; anything else present is refused by name.
constexpr std::string_view kHandled[] = {"contents", "systemInstruction", "tools", "toolConfig",
                                         "generationConfig"};
constexpr std::string_view kImageMimePrefix = "image/";

class Translation {
 public:
  explicit Translation(const json::object& in) : in_(in) {}

  Result<json::object> Run() {
    if (std::optional<std::string> field = request::FirstUnhandled(in_, kHandled)) {
      return Unsupported(*field);
    }
    out_["model"] = "";
    if (Status s = System(); !s.ok()) return s.error();
    if (Status s = Contents(); !s.ok()) return s.error();
    out_["messages"] = std::move(messages_);
    if (Status s = client_request::AddSettings(in_, out_); !s.ok()) return s.error();
    return std::move(out_);
  }

 private:
  // The text of a Content's parts (systemInstruction); only text parts are allowed.
  Result<std::string> TextOf(const json::value& content, const std::string& param) {
    if (content.is_string()) return std::string(content.as_string());
    if (!content.is_object()) return WrongType(param, "a Content object");
    const json::value* parts = content.as_object().if_contains("parts");
    if (parts == nullptr || !parts->is_array()) return WrongType(param + ".parts", "an array");
    std::string text;
    size_t j = 0;
    for (const json::value& part : parts->as_array()) {
      const std::string at = At(param + ".parts", j++);
      const json::value* piece = part.is_object() ? part.as_object().if_contains("text") : nullptr;
      if (piece == nullptr || !piece->is_string()) return Unsupported(at);
      if (!text.empty()) text += "\n";
      text += piece->as_string();
    }
    return text;
  }

  Status System() {
    if (!Present(in_, "systemInstruction")) return Ok{};
    Result<std::string> text = TextOf(in_.at("systemInstruction"), "systemInstruction");
    if (!text.ok()) return text.error();
    messages_.push_back(json::object{{"role", "system"}, {"content", text.value()}});
    return Ok{};
  }

  Status Contents() {
    const json::value* contents = in_.if_contains("contents");
    if (contents == nullptr || !contents->is_array() || contents->as_array().empty()) {
      return WrongType("contents", "a non-empty array");
    }
    size_t i = 0;
    for (const json::value& content : contents->as_array()) {
      const std::string param = At("contents", i++);
      if (!content.is_object()) return WrongType(param, "a Content object");
      const json::object& c = content.as_object();
      const json::value* role = c.if_contains("role");
      const json::value* parts = c.if_contains("parts");
      if (parts == nullptr || !parts->is_array()) return WrongType(param + ".parts", "an array");
      const bool model = role != nullptr && *role == "model";
      if (role != nullptr && !role->is_null() && !model && *role != "user") {
        return WrongType(param + ".role", "'user' or 'model'");
      }
      Status s = model ? ModelTurn(parts->as_array(), param) : UserTurn(parts->as_array(), param);
      if (!s.ok()) return s;
    }
    return Ok{};
  }

  // A user turn: function responses become tool messages (first, answering the calls of the
  // turn before), the rest one user message.
  Status UserTurn(const json::array& parts, const std::string& param) {
    json::array content;
    size_t j = 0;
    for (const json::value& value : parts) {
      const std::string at = At(param + ".parts", j++);
      if (!value.is_object()) return WrongType(at, "a Part object");
      const json::object& part = value.as_object();
      if (const json::value* text = part.if_contains("text"); text != nullptr) {
        if (!text->is_string()) return WrongType(at + ".text", "a string");
        content.push_back(json::object{{"type", "text"}, {"text", *text}});
      } else if (const json::value* data = part.if_contains("inlineData"); data != nullptr) {
        Result<json::object> image = Image(*data, at + ".inlineData");
        if (!image.ok()) return image.error();
        content.push_back(std::move(image.value()));
      } else if (const json::value* response = part.if_contains("functionResponse")) {
        if (Status s = ToolResult(*response, at + ".functionResponse"); !s.ok()) return s;
      } else {
        return Unsupported(FirstKey(part, at));
      }
    }
    if (!content.empty()) {
      messages_.push_back(json::object{{"role", "user"}, {"content", std::move(content)}});
    }
    return Ok{};
  }

  Result<json::object> Image(const json::value& data, const std::string& param) {
    if (!data.is_object()) return WrongType(param, "a Blob object");
    const json::value* mime = data.as_object().if_contains("mimeType");
    const json::value* bytes = data.as_object().if_contains("data");
    if (mime == nullptr || !mime->is_string() || bytes == nullptr || !bytes->is_string()) {
      return WrongType(param, "a Blob with mimeType and data");
    }
    if (!std::string_view(mime->as_string()).starts_with(kImageMimePrefix)) {
      return Unsupported(param + ".mimeType");
    }
    std::string url = "data:" + std::string(mime->as_string()) + ";base64,";
    url += bytes->as_string();
    return json::object{{"type", "image_url"}, {"image_url", json::object{{"url", url}}}};
  }

  Status ToolResult(const json::value& value, const std::string& param) {
    if (!value.is_object()) return WrongType(param, "a FunctionResponse object");
    const json::object& fr = value.as_object();
    const json::value* name = fr.if_contains("name");
    if (name == nullptr || !name->is_string()) return WrongType(param + ".name", "a string");
    std::string id;
    auto pending = pending_.find(std::string(name->as_string()));
    if (const json::value* given = fr.if_contains("id"); given && given->is_string()) {
      id = std::string(given->as_string());
      if (pending != pending_.end()) std::erase(pending->second, id);
    } else {
      // Gemini matches results to calls by name and order: the earliest unanswered call.
      if (pending == pending_.end() || pending->second.empty()) {
        return Invalid("No earlier functionCall named '" + std::string(name->as_string()) +
                           "' is waiting for this response.",
                       param + ".name");
      }
      id = pending->second.front();
      pending->second.pop_front();
    }
    const json::value* response = fr.if_contains("response");
    const std::string text = response == nullptr ? std::string("{}") : json::serialize(*response);
    messages_.push_back(json::object{{"role", "tool"}, {"tool_call_id", id}, {"content", text}});
    return Ok{};
  }

  // A model turn: text, function calls, and thought parts (reasoning_content, with the
  // dialect-tagged signature the gateway rendered on them: thought_signature.h).
  Status ModelTurn(const json::array& parts, const std::string& param) {
    std::string text, thinking;
    json::array calls;
    json::value signature;
    size_t j = 0;
    for (const json::value& value : parts) {
      const std::string at = At(param + ".parts", j++);
      if (!value.is_object()) return WrongType(at, "a Part object");
      const json::object& part = value.as_object();
      if (const json::value* thought = part.if_contains("thought"); thought && *thought == true) {
        const json::value* piece = part.if_contains("text");
        if (piece != nullptr && !piece->is_string()) return WrongType(at + ".text", "a string");
        if (piece != nullptr) thinking += piece->as_string();
        const json::value* sig = part.if_contains("thoughtSignature");
        if (sig != nullptr && !sig->is_null() && !sig->is_string()) {
          return WrongType(at + ".thoughtSignature", "a string");
        }
        if (sig != nullptr && sig->is_string()) {
          const reasoning::Tagged tagged = reasoning::SplitTagged(sig->as_string(), kOwnDialect);
          signature = json::object{{"dialect", tagged.dialect}, {"value", tagged.value}};
        }
        continue;
      }
      if (const json::value* piece = part.if_contains("text"); piece != nullptr) {
        if (!piece->is_string()) return WrongType(at + ".text", "a string");
        text += piece->as_string();
      } else if (const json::value* call = part.if_contains("functionCall")) {
        Result<json::object> tool_call = ToolCall(*call, at + ".functionCall");
        if (!tool_call.ok()) return tool_call.error();
        calls.push_back(std::move(tool_call.value()));
      } else if (part.size() == 1 && part.contains("thoughtSignature")) {
        continue;
      } else {
        return Unsupported(FirstKey(part, at));
      }
    }
    json::object message{{"role", "assistant"}};
    message["content"] = text.empty() ? json::value(nullptr) : json::value(text);
    if (!calls.empty()) message["tool_calls"] = std::move(calls);
    if (!thinking.empty()) message[reasoning::kContent] = std::move(thinking);
    if (!signature.is_null()) message[reasoning::kSignature] = std::move(signature);
    messages_.push_back(std::move(message));
    return Ok{};
  }

  Result<json::object> ToolCall(const json::value& value, const std::string& param) {
    if (!value.is_object()) return WrongType(param, "a FunctionCall object");
    const json::object& fc = value.as_object();
    const json::value* name = fc.if_contains("name");
    if (name == nullptr || !name->is_string()) return WrongType(param + ".name", "a string");
    const json::value* args = fc.if_contains("args");
    if (args != nullptr && !args->is_null() && !args->is_object()) {
      return WrongType(param + ".args", "an object");
    }
    std::string id;
    if (const json::value* given = fc.if_contains("id"); given && given->is_string()) {
      id = std::string(given->as_string());
    } else {
      id = "call_" + std::to_string(calls_made_);
    }
    pending_[std::string(name->as_string())].push_back(id);
    ++calls_made_;
    const std::string arguments =
        args == nullptr || args->is_null() ? std::string("{}") : json::serialize(*args);
    return json::object{{"id", id},
                        {"type", "function"},
                        {"function", json::object{{"name", *name}, {"arguments", arguments}}}};
  }

  static std::string FirstKey(const json::object& part, const std::string& at) {
    for (const auto& [key, value] : part) {
      if (key != "thoughtSignature") return at + "." + std::string(key);
    }
    return at;
  }

  const json::object& in_;
  json::object out_;
  json::array messages_;
  // The ids of calls not answered yet, by function name, in order.
  std::map<std::string, std::deque<std::string>> pending_;
  size_t calls_made_ = 0;
};

}  // namespace

Result<json::object> ParseGenerateContentRequest(std::string_view body) {
  boost::system::error_code ec;
  // Read into the pivot (copied out of the scratch buffer) and dropped.
  ScratchJson scratch;
  json::value doc = scratch.Parse(body, ec);
  if (ec || !doc.is_object()) {
    return Invalid("Invalid JSON payload received: the body is not a JSON object.", "");
  }
  return Translation(doc.as_object()).Run();
}

}  // namespace turnpike::providers::gemini
