#include "mock/conversation.h"

#include <array>
#include <utility>

namespace turnpike::mock {
namespace {

using Element = simdjson::dom::element;
using Field = simdjson::simdjson_result<Element>;

constexpr std::string_view kSystem = "system";
constexpr std::string_view kUser = "user";
constexpr std::string_view kAssistant = "assistant";
constexpr std::string_view kTool = "tool";
constexpr std::string_view kTurnSeparator = " | ";

struct RoleName {
  std::string_view wire;
  std::string_view mock;
};

// Every wire's role words; Cohere's and Ollama's are OpenAI's.
constexpr std::array<RoleName, 7> kRoles = {{{"system", kSystem},
                                             {"developer", kSystem},
                                             {"user", kUser},
                                             {"assistant", kAssistant},
                                             {"model", kAssistant},
                                             {"tool", kTool},
                                             {"function", kTool}}};

std::string_view MockRole(std::string_view wire_role) {
  for (const RoleName& role : kRoles) {
    if (role.wire == wire_role) return role.mock;
  }
  return wire_role;
}

bool Has(const Field& field) { return !field.error() && !field.is_null(); }

std::string_view StringAt(const Field& field) {
  std::string_view text;
  if (field.get_string().get(text)) return {};
  return text;
}

// A string's own text; any other value minified; nothing for an absent field.
std::string JsonText(const Field& field) {
  if (!Has(field)) return {};
  if (field.is_string()) return std::string(StringAt(field));
  return simdjson::minify(field.value_unsafe());
}

std::string CallText(std::string_view name, std::string arguments) {
  return "call " + std::string(name) + "(" + std::move(arguments) + ")";
}

enum class PartKind { kText, kCall, kResult, kOther };

struct Part {
  PartKind kind = PartKind::kOther;
  std::string text;
};

std::string ContentText(const Field& content);

// What one content part, content block or input item says, in any wire's spelling.
Part ReadPart(Element part) {
  const std::string_view type = StringAt(part["type"]);
  if (type == "tool_use") {
    return {PartKind::kCall, CallText(StringAt(part["name"]), JsonText(part["input"]))};
  }
  if (type == "function_call") {
    return {PartKind::kCall, CallText(StringAt(part["name"]), JsonText(part["arguments"]))};
  }
  if (const Field call = part["functionCall"]; Has(call)) {
    return {PartKind::kCall, CallText(StringAt(call["name"]), JsonText(call["args"]))};
  }
  if (type == "tool_result") return {PartKind::kResult, ContentText(part["content"])};
  if (type == "function_call_output") return {PartKind::kResult, ContentText(part["output"])};
  if (const Field response = part["functionResponse"]; Has(response)) {
    return {PartKind::kResult, JsonText(response["response"])};
  }
  bool thought = false;
  if (!part["thought"].get_bool().get(thought) && thought) return {};
  if (part["text"].is_string()) return {PartKind::kText, std::string(StringAt(part["text"]))};
  if (Has(part["document"])) return {PartKind::kText, JsonText(part["document"]["data"])};
  return {};
}

// A string, or the concatenated text of its parts.
std::string ContentText(const Field& content) {
  if (content.is_string()) return std::string(StringAt(content));
  simdjson::dom::array parts;
  if (content.get_array().get(parts)) return JsonText(content);
  std::string text;
  for (Element element : parts) {
    Part part = ReadPart(element);
    if (part.kind == PartKind::kText) text += part.text;
  }
  return text;
}

// The turns of one message: its text runs, and a turn of their own for its calls and results.
class MessageTurns {
 public:
  MessageTurns(Conversation& out, std::string_view role) : out_(out), role_(MockRole(role)) {}

  void Add(Part part) {
    if (part.kind == PartKind::kText) text_ += part.text;
    if (part.kind != PartKind::kCall && part.kind != PartKind::kResult) return;
    FlushText();
    const std::string_view role = part.kind == PartKind::kCall ? kAssistant : kTool;
    out_.push_back({std::string(role), std::move(part.text)});
    added_ = true;
  }

  // `content`: a string, or parts.
  void AddContent(const Field& content) {
    if (content.is_string()) Add({PartKind::kText, std::string(StringAt(content))});
    simdjson::dom::array parts;
    if (content.get_array().get(parts)) return;
    for (Element part : parts) Add(ReadPart(part));
  }

  // The last text run; the message as `role:` when it said nothing the mock describes.
  void Finish() {
    if (text_.empty() && added_) return;
    out_.push_back({std::string(role_), std::move(text_)});
  }

 private:
  void FlushText() {
    if (text_.empty()) return;
    out_.push_back({std::string(role_), std::move(text_)});
    text_.clear();
    added_ = true;
  }

  Conversation& out_;
  const std::string_view role_;
  std::string text_;
  bool added_ = false;
};

void AddMessages(Conversation& out, const Field& messages) {
  simdjson::dom::array list;
  if (messages.get_array().get(list)) return;
  for (Element message : list) {
    MessageTurns turns(out, StringAt(message["role"]));
    turns.AddContent(message["content"]);
    // Cohere's text before tool calls.
    turns.AddContent(message["tool_plan"]);
    simdjson::dom::array calls;
    if (!message["tool_calls"].get_array().get(calls)) {
      for (Element call : calls) {
        const Field function = call["function"];
        turns.Add({PartKind::kCall,
                   CallText(StringAt(function["name"]), JsonText(function["arguments"]))});
      }
    }
    turns.Finish();
  }
}

// A system message made of `content` alone, when the field is there.
void AddSystem(Conversation& out, const Field& content) {
  if (!Has(content)) return;
  MessageTurns turns(out, kSystem);
  turns.AddContent(content);
  turns.Finish();
}

}  // namespace

Conversation ReadChatConversation(simdjson::dom::object root) {
  Conversation out;
  AddMessages(out, root["messages"]);
  return out;
}

Conversation ReadMessagesConversation(simdjson::dom::object root) {
  Conversation out;
  AddSystem(out, root["system"]);
  AddMessages(out, root["messages"]);
  return out;
}

Conversation ReadResponsesConversation(simdjson::dom::object root) {
  Conversation out;
  AddSystem(out, root["instructions"]);
  const Field input = root["input"];
  if (input.is_string()) {
    out.push_back({std::string(kUser), std::string(StringAt(input))});
    return out;
  }
  simdjson::dom::array items;
  if (input.get_array().get(items)) return out;
  for (Element item : items) {
    if (item["role"].is_string()) {
      MessageTurns turns(out, StringAt(item["role"]));
      turns.AddContent(item["content"]);
      turns.Finish();
      continue;
    }
    // function_call and function_call_output items; reasoning and others say nothing.
    Part part = ReadPart(item);
    if (part.kind == PartKind::kCall || part.kind == PartKind::kResult) {
      MessageTurns(out, kAssistant).Add(std::move(part));
    }
  }
  return out;
}

Conversation ReadGeminiConversation(simdjson::dom::object root) {
  Conversation out;
  const Field system = root["systemInstruction"];
  AddSystem(out, Has(system) ? system["parts"] : root["system_instruction"]["parts"]);
  simdjson::dom::array contents;
  if (root["contents"].get_array().get(contents)) return out;
  for (Element content : contents) {
    const std::string_view role = StringAt(content["role"]);
    MessageTurns turns(out, role.empty() ? kUser : role);
    turns.AddContent(content["parts"]);
    turns.Finish();
  }
  return out;
}

std::string DescribeConversation(const Conversation& turns) {
  std::string out;
  for (const Turn& turn : turns) {
    if (!out.empty()) out += kTurnSeparator;
    out += turn.role;
    out += ':';
    if (turn.text.empty()) continue;
    out += ' ';
    out += turn.text;
  }
  return out;
}

std::vector<std::string> SplitReplyTokens(std::string_view description) {
  std::vector<std::string> tokens;
  while (!description.empty()) {
    const size_t space = description.find(' ');
    const size_t length = space == std::string_view::npos ? description.size() : space + 1;
    tokens.emplace_back(description.substr(0, length));
    description.remove_prefix(length);
  }
  return tokens;
}

}  // namespace turnpike::mock
