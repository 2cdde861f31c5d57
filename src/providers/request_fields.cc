#include "providers/request_fields.h"

#include <charconv>

namespace turnpike::providers::request {

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

Error UnsupportedBy(const std::string& param, std::string_view provider) {
  return Invalid(
      "'" + param + "' is not supported by this model's provider (" + std::string(provider) + ").",
      param);
}

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("Invalid type for '" + param + "': expected " + std::string(expected) + ".",
                 param);
}

bool Present(const boost::json::object& object, std::string_view key) {
  const boost::json::value* value = object.if_contains(key);
  return value != nullptr && !value->is_null();
}

Result<std::optional<int64_t>> MaxOutputTokens(const boost::json::object& chat) {
  std::optional<int64_t> limit;
  for (std::string_view key : {"max_tokens", "max_completion_tokens"}) {
    if (!Present(chat, key)) continue;
    const boost::json::value& value = chat.at(key);
    if (!value.is_int64() || value.as_int64() < 1) {
      return WrongType(std::string(key), "a positive integer");
    }
    limit = value.as_int64();
  }
  return limit;
}

Result<std::optional<boost::json::array>> StopSequences(const boost::json::object& chat) {
  if (!Present(chat, "stop")) return std::optional<boost::json::array>{};
  const boost::json::value& stop = chat.at("stop");
  boost::json::array sequences;
  if (stop.is_string()) {
    sequences.push_back(stop);
  } else if (stop.is_array()) {
    for (const boost::json::value& s : stop.as_array()) {
      if (!s.is_string()) return WrongType("stop", "a string or an array of strings");
      sequences.push_back(s);
    }
  } else {
    return WrongType("stop", "a string or an array of strings");
  }
  return std::optional<boost::json::array>(std::move(sequences));
}

Status OneChoice(const boost::json::object& chat, std::string_view message) {
  if (!Present(chat, "n")) return Ok{};
  const boost::json::value& n = chat.at("n");
  if (!n.is_int64() || n.as_int64() != 1) return Invalid(std::string(message), "n");
  return Ok{};
}

std::optional<std::string> FirstUnhandled(const boost::json::object& object,
                                          std::span<const std::string_view> handled) {
  for (const auto& [key, value] : object) {
    if (value.is_null()) continue;
    bool known = false;
    for (std::string_view name : handled) known = known || key == name;
    if (!known) return std::string(key);
  }
  return std::nullopt;
}

std::string At(const std::string& base, size_t index) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof(digits), index).ptr;
  std::string out;
  out.reserve(base.size() + static_cast<size_t>(end - digits) + 2);
  out.append(base).push_back('[');
  out.append(digits, end).push_back(']');
  return out;
}

Result<std::string_view> ImageUrlOf(const boost::json::object& part, const std::string& param,
                                    std::string_view detail_refusal) {
  const boost::json::value* image = part.if_contains("image_url");
  if (image == nullptr || !image->is_object()) return WrongType(param + ".image_url", "an object");
  const boost::json::object& fields = image->as_object();
  const boost::json::value* url = fields.if_contains("url");
  if (url == nullptr || !url->is_string()) return WrongType(param + ".image_url.url", "a string");
  if (const boost::json::value* detail = fields.if_contains("detail");
      detail != nullptr && !detail->is_null() && *detail != "auto") {
    return Invalid(std::string(detail_refusal), param + ".image_url.detail");
  }
  return std::string_view(url->as_string());
}

namespace {
constexpr std::string_view kDataUrlPrefix = "data:";
constexpr std::string_view kBase64Marker = ";base64,";
}  // namespace

bool IsDataUrl(std::string_view url) { return url.starts_with(kDataUrlPrefix); }

std::optional<DataUrl> ParseBase64DataUrl(std::string_view url) {
  if (!IsDataUrl(url)) return std::nullopt;
  const size_t marker = url.find(kBase64Marker);
  if (marker == std::string_view::npos) return std::nullopt;
  return DataUrl{url.substr(kDataUrlPrefix.size(), marker - kDataUrlPrefix.size()),
                 url.substr(marker + kBase64Marker.size())};
}

Result<std::vector<FunctionTool>> ReadFunctionTools(const boost::json::object& chat,
                                                    std::string_view provider) {
  std::vector<FunctionTool> read;
  if (!Present(chat, "tools")) return read;
  const boost::json::value& tools = chat.at("tools");
  if (!tools.is_array()) return WrongType("tools", "an array");
  read.reserve(tools.as_array().size());
  for (const boost::json::value& tool : tools.as_array()) {
    FunctionTool& out = read.emplace_back();
    out.param = At("tools", read.size() - 1);
    if (!tool.is_object()) return WrongType(out.param, "an object");
    const boost::json::value* type = tool.as_object().if_contains("type");
    if (type == nullptr || *type != "function") return UnsupportedBy(out.param + ".type", provider);
    const boost::json::value* function = tool.as_object().if_contains("function");
    if (function == nullptr || !function->is_object()) {
      return WrongType(out.param + ".function", "an object");
    }
    const boost::json::object& f = function->as_object();
    out.name = f.if_contains("name");
    if (out.name == nullptr || !out.name->is_string()) {
      return WrongType(out.param + ".function.name", "a string");
    }
    if (Present(f, "description")) out.description = &f.at("description");
    if (Present(f, "parameters")) out.parameters = &f.at("parameters");
    const boost::json::value* strict = f.if_contains("strict");
    out.strict = strict != nullptr && *strict == true;
  }
  return read;
}

}  // namespace turnpike::providers::request
