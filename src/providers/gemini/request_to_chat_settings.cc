// Gemini GenerateContentRequest settings (tools, toolConfig, generationConfig) -> the pivot.
#include "providers/gemini/request_to_chat_settings.h"

#include <cctype>

#include "providers/reasoning.h"
#include "providers/request_fields.h"

namespace turnpike::providers::gemini::client_request {
namespace {

namespace json = boost::json;

using request::At;
using request::Invalid;
using request::Present;

constexpr std::string_view kGenerationHandled[] = {
    "temperature",      "topP",           "maxOutputTokens",    "stopSequences",
    "candidateCount",   "seed",           "presencePenalty",    "frequencyPenalty",
    "responseMimeType", "responseSchema", "responseJsonSchema", "thinkingConfig",
};
// thinkingBudget -1: the model decides how much to think.
constexpr int64_t kDynamicBudget = -1;
constexpr const char* kJsonMime = "application/json";
constexpr const char* kTextMime = "text/plain";

// Gemini's OpenAPI-subset schemas name types in upper case ("OBJECT"); JSON Schema, which
// every other dialect takes, in lower case. The rest of the subset is valid JSON Schema.
json::value JsonSchema(const json::value& schema) {
  if (schema.is_array()) {
    json::array out;
    for (const json::value& item : schema.as_array()) out.push_back(JsonSchema(item));
    return out;
  }
  if (!schema.is_object()) return schema;
  json::object out;
  for (const auto& [key, value] : schema.as_object()) {
    if (key == "type" && value.is_string()) {
      std::string type(value.as_string());
      for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out[key] = type;
    } else {
      out[key] = JsonSchema(value);
    }
  }
  return out;
}

class SettingsTranslation {
 public:
  SettingsTranslation(const json::object& in, json::object& out) : in_(in), out_(out) {}

  Status Run() {
    if (Status s = Tools(); !s.ok()) return s;
    if (Status s = ToolConfig(); !s.ok()) return s;
    return Generation();
  }

 private:
  Status Tools() {
    if (!Present(in_, "tools")) return Ok{};
    if (!in_.at("tools").is_array()) return WrongType("tools", "an array");
    json::array tools;
    size_t i = 0;
    for (const json::value& tool : in_.at("tools").as_array()) {
      const std::string param = At("tools", i++);
      if (!tool.is_object()) return WrongType(param, "a Tool object");
      for (const auto& [key, value] : tool.as_object()) {
        if (value.is_null()) continue;
        if (key != "functionDeclarations") return Unsupported(param + "." + std::string(key));
        if (!value.is_array()) return WrongType(param + ".functionDeclarations", "an array");
        size_t j = 0;
        for (const json::value& declaration : value.as_array()) {
          Result<json::object> function =
              Function(declaration, At(param + ".functionDeclarations", j++));
          if (!function.ok()) return function.error();
          tools.push_back(json::object{{"type", "function"}, {"function", function.value()}});
        }
      }
    }
    if (!tools.empty()) out_["tools"] = std::move(tools);
    return Ok{};
  }

  Result<json::object> Function(const json::value& value, const std::string& param) {
    if (!value.is_object()) return WrongType(param, "a FunctionDeclaration object");
    const json::object& d = value.as_object();
    json::object function;
    for (const auto& [key, field] : d) {
      if (field.is_null()) continue;
      if (key == "name" || key == "description") {
        if (!field.is_string()) return WrongType(param + "." + std::string(key), "a string");
        function[key] = field;
      } else if (key == "parameters" || key == "parametersJsonSchema") {
        function["parameters"] = JsonSchema(field);
      } else {
        return Unsupported(param + "." + std::string(key));
      }
    }
    if (!function.contains("name")) return WrongType(param + ".name", "a string");
    return function;
  }

  Status ToolConfig() {
    if (!Present(in_, "toolConfig")) return Ok{};
    const json::value& config = in_.at("toolConfig");
    if (!config.is_object()) return WrongType("toolConfig", "an object");
    for (const auto& [key, value] : config.as_object()) {
      if (!value.is_null() && key != "functionCallingConfig") {
        return Unsupported("toolConfig." + std::string(key));
      }
    }
    const json::value* calling = config.as_object().if_contains("functionCallingConfig");
    if (calling == nullptr || calling->is_null()) return Ok{};
    const std::string param = "toolConfig.functionCallingConfig";
    if (!calling->is_object()) return WrongType(param, "an object");
    const json::value* mode = calling->as_object().if_contains("mode");
    const json::value* names = calling->as_object().if_contains("allowedFunctionNames");
    const bool any = mode != nullptr && *mode == "ANY";
    if (names != nullptr && !names->is_null()) {
      if (!any || !names->is_array() || names->as_array().size() != 1 ||
          !names->as_array().front().is_string()) {
        return Invalid("Only one allowed function name, with mode ANY, can be translated.",
                       param + ".allowedFunctionNames");
      }
      out_["tool_choice"] = json::object{
          {"type", "function"}, {"function", json::object{{"name", names->as_array().front()}}}};
      return Ok{};
    }
    if (mode == nullptr || mode->is_null() || *mode == "AUTO" || *mode == "MODE_UNSPECIFIED") {
      return Ok{};
    }
    if (any) {
      out_["tool_choice"] = "required";
    } else if (*mode == "NONE") {
      out_["tool_choice"] = "none";
    } else {
      return Unsupported(param + ".mode");
    }
    return Ok{};
  }

  Status Generation() {
    if (!Present(in_, "generationConfig")) return Ok{};
    if (!in_.at("generationConfig").is_object()) return WrongType("generationConfig", "an object");
    const json::object& g = in_.at("generationConfig").as_object();
    if (std::optional<std::string> field = request::FirstUnhandled(g, kGenerationHandled)) {
      return Unsupported("generationConfig." + *field);
    }
    auto number = [&](std::string_view key, std::string_view to) -> Status {
      if (!Present(g, key)) return Ok{};
      if (!g.at(key).is_number()) {
        return WrongType("generationConfig." + std::string(key), "a number");
      }
      out_[to] = g.at(key);
      return Ok{};
    };
    for (auto [key, to] :
         {std::pair<std::string_view, std::string_view>{"temperature", "temperature"},
          {"topP", "top_p"},
          {"presencePenalty", "presence_penalty"},
          {"frequencyPenalty", "frequency_penalty"},
          {"seed", "seed"}}) {
      if (Status s = number(key, to); !s.ok()) return s;
    }
    if (Present(g, "maxOutputTokens")) {
      const json::value& max = g.at("maxOutputTokens");
      if (!max.is_int64() || max.as_int64() < 1) {
        return WrongType("generationConfig.maxOutputTokens", "a positive integer");
      }
      out_["max_completion_tokens"] = max;
    }
    if (Present(g, "candidateCount")) {
      const json::value& count = g.at("candidateCount");
      if (!count.is_int64() || count.as_int64() != 1) {
        return Invalid("Only one candidate can be streamed through the gateway.",
                       "generationConfig.candidateCount");
      }
    }
    if (Present(g, "stopSequences")) {
      const json::value& stops = g.at("stopSequences");
      if (!stops.is_array()) return WrongType("generationConfig.stopSequences", "an array");
      for (const json::value& stop : stops.as_array()) {
        if (!stop.is_string()) return WrongType("generationConfig.stopSequences", "strings");
      }
      out_["stop"] = stops;
    }
    if (Status s = Thinking(g); !s.ok()) return s;
    return ResponseFormat(g);
  }

  // thinkingConfig -> reasoning_effort (reasoning.h's table): thinkingBudget 0 -> none, -1
  // (dynamic) -> medium (OpenAI's default effort; Anthropic needs a budget to think at all),
  // a positive budget -> its effort; thinkingLevel LOW/MEDIUM/HIGH/MINIMAL -> that effort.
  // includeThoughts is the encoder's (whether thought parts are shown), read there.
  Status Thinking(const json::object& g) {
    if (!Present(g, "thinkingConfig")) return Ok{};
    const std::string param = "generationConfig.thinkingConfig";
    if (!g.at("thinkingConfig").is_object()) return WrongType(param, "an object");
    const json::object& t = g.at("thinkingConfig").as_object();
    constexpr std::string_view kThinkingHandled[] = {"thinkingBudget", "includeThoughts",
                                                     "thinkingLevel"};
    if (std::optional<std::string> field = request::FirstUnhandled(t, kThinkingHandled)) {
      return Unsupported(param + "." + *field);
    }
    if (Present(t, "includeThoughts") && !t.at("includeThoughts").is_bool()) {
      return WrongType(param + ".includeThoughts", "a boolean");
    }
    if (Present(t, "thinkingLevel")) {
      if (Present(t, "thinkingBudget")) {
        return Invalid("thinkingBudget and thinkingLevel cannot both be set.",
                       param + ".thinkingLevel");
      }
      const json::value& level = t.at("thinkingLevel");
      std::string name = level.is_string() ? std::string(level.as_string()) : std::string();
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (name != "minimal" && name != "low" && name != "medium" && name != "high") {
        return WrongType(param + ".thinkingLevel", "one of MINIMAL, LOW, MEDIUM, HIGH");
      }
      out_[reasoning::kEffort] = name;
      return Ok{};
    }
    if (!Present(t, "thinkingBudget")) return Ok{};
    const json::value& budget = t.at("thinkingBudget");
    if (!budget.is_int64() || budget.as_int64() < kDynamicBudget) {
      return WrongType(param + ".thinkingBudget", "-1, 0 or a positive integer");
    }
    reasoning::Effort effort = reasoning::Effort::kMedium;
    if (budget.as_int64() == 0) {
      effort = reasoning::Effort::kNone;
    } else if (budget.as_int64() > 0) {
      effort = reasoning::EffortFor(budget.as_int64());
    }
    out_[reasoning::kEffort] = reasoning::EffortName(effort);
    return Ok{};
  }

  Status ResponseFormat(const json::object& g) {
    const json::value* schema = g.if_contains("responseJsonSchema");
    if (schema == nullptr || schema->is_null()) schema = g.if_contains("responseSchema");
    const bool has_schema = schema != nullptr && !schema->is_null();
    if (!Present(g, "responseMimeType") || g.at("responseMimeType") == kTextMime) {
      if (has_schema)
        return Invalid("A response schema needs responseMimeType application/json.",
                       "generationConfig.responseMimeType");
      return Ok{};
    }
    if (g.at("responseMimeType") != kJsonMime) {
      return Unsupported("generationConfig.responseMimeType");
    }
    if (!has_schema) {
      out_["response_format"] = json::object{{"type", "json_object"}};
      return Ok{};
    }
    out_["response_format"] = json::object{
        {"type", "json_schema"},
        {"json_schema", json::object{{"name", "response"}, {"schema", JsonSchema(*schema)}}}};
    return Ok{};
  }

  const json::object& in_;
  json::object& out_;
};

}  // namespace

Error Unsupported(const std::string& param) {
  return Invalid("This field cannot be translated for the model's provider.", param);
}

Error WrongType(const std::string& param, std::string_view expected) {
  return Invalid("Invalid value at '" + param + "': expected " + std::string(expected) + ".",
                 param);
}

Status AddSettings(const json::object& request, json::object& pivot) {
  return SettingsTranslation(request, pivot).Run();
}

}  // namespace turnpike::providers::gemini::client_request
