// OpenAI chat messages (the pivot's) -> Cohere v2 Chat messages, and the error helpers the
// request translation shares.
#include "providers/cohere/requests.h"

namespace turnpike::providers::cohere {

namespace json = boost::json;

Error Unsupported(const std::string& param) { return request::UnsupportedBy(param, "Cohere"); }

namespace {

// An OpenAI image_url part -> Cohere's, which has the same shape (url, optional detail).
Result<json::object> ImagePart(const json::object& part, const std::string& param,
                               const json::storage_ptr& sp) {
  const json::value* image = part.if_contains("image_url");
  if (image == nullptr || !image->is_object()) return WrongType(param + ".image_url", "an object");
  const json::object& fields = image->as_object();
  const json::value* url = fields.if_contains("url");
  if (url == nullptr || !url->is_string()) return WrongType(param + ".image_url.url", "a string");
  json::object converted({{"url", *url}}, sp);
  if (Present(fields, "detail")) {
    const json::value& detail = fields.at("detail");
    if (detail != "auto" && detail != "low" && detail != "high") {
      return Invalid("'detail' must be auto, low or high.", param + ".image_url.detail");
    }
    converted["detail"] = detail;
  }
  return json::object({{"type", "image_url"}, {"image_url", std::move(converted)}}, sp);
}

// Message content: a string passes as is; parts become Cohere content blocks. Text parts are
// always allowed, images only where `allow_images`.
Result<json::value> Content(const json::value& content, const std::string& param, bool allow_images,
                            const json::storage_ptr& sp) {
  if (content.is_string()) return json::value(content, sp);
  if (!content.is_array()) return WrongType(param, "a string or an array");
  json::array blocks(sp);
  size_t i = 0;
  for (const json::value& part : content.as_array()) {
    const std::string at = At(param, i++);
    if (!part.is_object()) return WrongType(at, "an object");
    const json::object& fields = part.as_object();
    const json::value* type = fields.if_contains("type");
    if (type && *type == "text") {
      const json::value* text = fields.if_contains("text");
      if (text == nullptr || !text->is_string()) return WrongType(at + ".text", "a string");
      blocks.push_back(json::object({{"type", "text"}, {"text", *text}}, sp));
    } else if (type && *type == "image_url" && allow_images) {
      Result<json::object> image = ImagePart(fields, at, sp);
      if (!image.ok()) return image.error();
      blocks.push_back(std::move(image.value()));
    } else {
      return Unsupported(at + ".type");
    }
  }
  return json::value(std::move(blocks));
}

// The text of assistant content (a string or text parts), for `tool_plan`.
Result<std::string> PlanText(const json::value& content, const std::string& param,
                             const json::storage_ptr& sp) {
  Result<json::value> converted = Content(content, param, false, sp);
  if (!converted.ok()) return converted.error();
  if (converted->is_string()) return std::string(converted->as_string());
  std::string text;
  for (const json::value& block : converted->as_array()) text += block.at("text").as_string();
  return text;
}

Result<json::object> ToolCall(const json::value& call, const std::string& param,
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
  return json::object(
      {{"id", *id},
       {"type", "function"},
       {"function", json::object({{"name", *name}, {"arguments", *arguments}}, sp)}},
      sp);
}

}  // namespace

Result<json::object> MessageFromChat(const json::object& message, const std::string& param,
                                     const json::storage_ptr& sp) {
  const json::value* role_value = message.if_contains("role");
  if (role_value == nullptr || !role_value->is_string()) {
    return WrongType(param + ".role", "a string");
  }
  const std::string_view role = role_value->as_string();
  if (Present(message, "name")) return Unsupported(param + ".name");
  const json::value* content = message.if_contains("content");
  const bool has_content = content != nullptr && !content->is_null();
  const std::string content_param = param + ".content";
  if (role == "system" || role == "developer" || role == "user") {
    if (!has_content) return Invalid("Missing required parameter.", content_param);
    Result<json::value> converted = Content(*content, content_param, role == "user", sp);
    if (!converted.ok()) return converted.error();
    const std::string_view cohere_role = role == "user" ? "user" : "system";
    return json::object({{"role", cohere_role}, {"content", std::move(converted.value())}}, sp);
  }
  if (role == "tool") {
    const json::value* id = message.if_contains("tool_call_id");
    if (id == nullptr || !id->is_string()) return WrongType(param + ".tool_call_id", "a string");
    if (!has_content) return Invalid("Missing required parameter.", content_param);
    Result<json::value> converted = Content(*content, content_param, false, sp);
    if (!converted.ok()) return converted.error();
    return json::object(
        {{"role", "tool"}, {"tool_call_id", *id}, {"content", std::move(converted.value())}}, sp);
  }
  if (role != "assistant") return Unsupported(param + ".role");
  if (Present(message, "refusal")) return Unsupported(param + ".refusal");
  if (Present(message, "audio")) return Unsupported(param + ".audio");
  json::object out({{"role", "assistant"}}, sp);
  const json::value* calls = message.if_contains("tool_calls");
  const bool has_calls = calls != nullptr && !calls->is_null();
  if (!has_calls) {
    if (has_content) {
      Result<json::value> converted = Content(*content, content_param, false, sp);
      if (!converted.ok()) return converted.error();
      out["content"] = std::move(converted.value());
    }
    return out;
  }
  // Cohere's text before tool calls is the `tool_plan`, not content.
  if (has_content) {
    Result<std::string> plan = PlanText(*content, content_param, sp);
    if (!plan.ok()) return plan.error();
    if (!plan->empty()) out["tool_plan"] = plan.value();
  }
  if (!calls->is_array()) return WrongType(param + ".tool_calls", "an array");
  json::array converted(sp);
  size_t j = 0;
  for (const json::value& call : calls->as_array()) {
    Result<json::object> c = ToolCall(call, At(param + ".tool_calls", j++), sp);
    if (!c.ok()) return c.error();
    converted.push_back(std::move(c.value()));
  }
  out["tool_calls"] = std::move(converted);
  return out;
}

}  // namespace turnpike::providers::cohere
