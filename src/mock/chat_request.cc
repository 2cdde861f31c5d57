#include "mock/chat_request.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "mock/anthropic_render.h"
#include "mock/gemini_render.h"
#include "mock/openai_render.h"

namespace turnpike::mock {
namespace {

using Field = simdjson::simdjson_result<simdjson::dom::element>;

// OpenAI's rule of thumb: about four bytes of English per token.
constexpr uint64_t kBytesPerPromptToken = 4;
// `x-mock-fault: slow-headers` without --slow-headers or x-mock-slow-headers-ms.
constexpr Millis kDefaultSlowHeadersFault{5'000};
// Longest delay a header may ask for (one hour).
constexpr int64_t kMaxHeaderDelayMs = 3'600'000;

constexpr std::string_view kFaultHeader = "x-mock-fault";
constexpr std::string_view kTokensHeader = "x-mock-tokens";
constexpr std::string_view kFirstTokenHeader = "x-mock-first-token-delay-ms";
constexpr std::string_view kInterTokenHeader = "x-mock-inter-token-ms";
constexpr std::string_view kSlowHeadersHeader = "x-mock-slow-headers-ms";
constexpr std::string_view kToolCallHeader = "x-mock-tool-call";

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

bool Absent(const Field& field) {
  return field.error() == simdjson::NO_SUCH_FIELD || field.is_null();
}

// An optional integer header in [0, max]; nullopt when absent.
Result<std::optional<int64_t>> HeaderInt(const http::Request& request, std::string_view name,
                                         int64_t max) {
  auto it = request.find(name);
  if (it == request.end()) return std::optional<int64_t>();
  const std::string_view text = it->value();
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || rest != end || value < 0 || value > max) {
    return Invalid(std::string(name) + " must be an integer between 0 and " + std::to_string(max),
                   std::string(name));
  }
  return std::optional<int64_t>(value);
}

Status ParseLimits(const simdjson::dom::object& root, ChatRequest& chat) {
  for (std::string_view key : {"max_completion_tokens", "max_tokens"}) {
    const Field field = root[key];
    if (Absent(field)) continue;
    int64_t limit = 0;
    if (field.get_int64().get(limit) || limit < 1) {
      return Invalid("'" + std::string(key) + "' must be a positive integer", std::string(key));
    }
    chat.max_tokens = limit;
    return Ok{};
  }
  return Ok{};
}

Status ParseStreamFields(const simdjson::dom::object& root, ChatRequest& chat) {
  const Field stream = root["stream"];
  if (!Absent(stream) && stream.get_bool().get(chat.stream)) {
    return Invalid("'stream' must be a boolean", "stream");
  }
  const Field usage = root["stream_options"]["include_usage"];
  if (usage.error() == simdjson::INCORRECT_TYPE && !root["stream_options"].is_null()) {
    return Invalid("'stream_options' must be an object", "stream_options");
  }
  if (!Absent(usage) && usage.get_bool().get(chat.include_usage)) {
    return Invalid("'stream_options.include_usage' must be a boolean",
                   "stream_options.include_usage");
  }
  return Ok{};
}

Status ParseTools(const simdjson::dom::object& root, ChatRequest& chat) {
  const Field tools = root["tools"];
  if (Absent(tools)) return Ok{};
  simdjson::dom::array list;
  if (tools.get_array().get(list)) return Invalid("'tools' must be an array", "tools");
  if (list.size() == 0) return Ok{};
  std::string_view name;
  if (list.at(0)["function"]["name"].get_string().get(name)) {
    return Invalid("'tools[0].function.name' must be a string", "tools[0].function.name");
  }
  chat.first_tool = std::string(name);
  return Ok{};
}

// With thinking on, as Anthropic checks: every thinking block sent back carries the signature
// the mock issued, and a final assistant turn that called tools starts with its thinking (so a
// gateway that loses the signature of a tool loop's turn hears the 400 Anthropic sends).
Status CheckThinkingBlocks(simdjson::dom::object root) {
  simdjson::dom::array messages;
  if (root["messages"].get_array().get(messages)) return Ok{};
  size_t i = 0;
  size_t last_assistant = messages.size();
  for (simdjson::dom::element message : messages) {
    std::string_view role;
    if (!message["role"].get_string().get(role) && role == "assistant") last_assistant = i;
    simdjson::dom::array blocks;
    if (role == "assistant" && !message["content"].get_array().get(blocks)) {
      size_t j = 0;
      for (simdjson::dom::element block : blocks) {
        std::string_view type, signature;
        if (!block["type"].get_string().get(type) && type == "thinking" &&
            (block["signature"].get_string().get(signature) ||
             signature != kMockThinkingSignature)) {
          const std::string at = "messages." + std::to_string(i) + ".content." + std::to_string(j);
          return Invalid(at + ": Invalid `signature` in `thinking` block", at);
        }
        ++j;
      }
    }
    ++i;
  }
  if (last_assistant == messages.size()) return Ok{};
  simdjson::dom::array blocks;
  if (messages.at(last_assistant)["content"].get_array().get(blocks)) return Ok{};
  bool calls = false;
  for (simdjson::dom::element block : blocks) {
    std::string_view type;
    calls = calls || (!block["type"].get_string().get(type) && type == "tool_use");
  }
  std::string_view first;
  if (!calls || blocks.size() == 0 || blocks.at(0)["type"].get_string().get(first) ||
      first == "thinking" || first == "redacted_thinking") {
    return Ok{};
  }
  const std::string at = "messages." + std::to_string(last_assistant) + ".content.0.type";
  return Invalid(at + ": Expected `thinking` or `redacted_thinking`, but found `" +
                     std::string(first) +
                     "`. When `thinking` is enabled, a final `assistant` message must start "
                     "with a thinking block.",
                 at);
}

// Anthropic's thinking: {type: "enabled", budget_tokens >= 1024 and below max_tokens} or
// {type: "disabled"}; checked as the API does, so a gateway that maps it wrong hears a 400.
Status ParseThinking(simdjson::dom::object root, ChatRequest& chat) {
  constexpr int64_t kMinBudget = 1024;
  const Field thinking = root["thinking"];
  if (Absent(thinking)) return Ok{};
  std::string_view type;
  if (thinking["type"].get_string().get(type)) return Invalid("Field required", "thinking.type");
  if (type == "disabled") return Ok{};
  if (type != "enabled") {
    return Invalid("Input tag does not match any of the expected tags", "thinking.type");
  }
  int64_t budget = 0;
  if (thinking["budget_tokens"].get_int64().get(budget) || budget < kMinBudget) {
    return Invalid("thinking.budget_tokens: Input should be greater than or equal to 1024",
                   "thinking.budget_tokens");
  }
  if (budget >= chat.max_tokens) {
    return Invalid("`max_tokens` must be greater than `thinking.budget_tokens`", "max_tokens");
  }
  chat.reasoning = true;
  return CheckThinkingBlocks(root);
}

}  // namespace

Result<simdjson::dom::object> BodyParser::ParseRoot(std::string_view body) {
  // assign() keeps the buffer's capacity, so steady-state requests do not allocate.
  padded_.assign(body);
  padded_.append(simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element doc;
  if (parser_.parse(padded_.data(), body.size(), false).get(doc)) {
    return Invalid("We could not parse the JSON body of your request.", "");
  }
  simdjson::dom::object root;
  if (doc.get_object().get(root)) return Invalid("The request body must be a JSON object.", "");
  return root;
}

std::vector<std::string> BodyParser::Describe(simdjson::dom::object root,
                                              Conversation (*read)(simdjson::dom::object)) const {
  if (reply_ == ReplyMode::kText) return SplitReplyTokens(text_);
  if (reply_ != ReplyMode::kDescribe) return {};
  return SplitReplyTokens(DescribeConversation(read(root)));
}

bool BodyParser::EndsWithToolResult(simdjson::dom::object root,
                                    Conversation (*read)(simdjson::dom::object)) const {
  if (!read_last_turn_) return false;
  const Conversation turns = read(root);
  return !turns.empty() && turns.back().role == "tool";
}

Result<ChatRequest> BodyParser::Parse(std::string_view body) {
  Result<simdjson::dom::object> parsed = ParseRoot(body);
  if (!parsed.ok()) return parsed.error();
  const simdjson::dom::object root = parsed.value();

  ChatRequest chat;
  std::string_view model;
  if (root["model"].get_string().get(model)) {
    return Invalid("'model' is required and must be a string", "model");
  }
  chat.model = std::string(model);
  simdjson::dom::array messages;
  if (root["messages"].get_array().get(messages)) {
    return Invalid("'messages' is required and must be an array", "messages");
  }
  for (auto parse : {ParseStreamFields, ParseLimits, ParseTools}) {
    Status status = parse(root, chat);
    if (!status.ok()) return status.error();
  }
  const Field effort = root["reasoning_effort"];
  if (!Absent(effort)) {
    std::string_view level;
    if (effort.get_string().get(level)) {
      return Invalid("'reasoning_effort' must be a string", "reasoning_effort");
    }
    chat.reasoning = level != "none";
  }
  // Cohere v2 bodies come through here too: their thinking {type: "enabled", token_budget}.
  std::string_view thinking_type;
  if (!root["thinking"]["type"].get_string().get(thinking_type)) {
    chat.reasoning = thinking_type == "enabled";
  }
  chat.description = Describe(root, ReadChatConversation);
  chat.ends_with_tool_result = EndsWithToolResult(root, ReadChatConversation);
  chat.prompt_tokens = body.size() / kBytesPerPromptToken;
  return chat;
}

Result<ChatRequest> BodyParser::ParseResponses(std::string_view body) {
  Result<simdjson::dom::object> parsed = ParseRoot(body);
  if (!parsed.ok()) return parsed.error();
  const simdjson::dom::object root = parsed.value();

  ChatRequest chat;
  chat.wire = Wire::kResponses;
  std::string_view model;
  if (root["model"].get_string().get(model)) {
    return Invalid("'model' is required and must be a string", "model");
  }
  chat.model = std::string(model);
  const Field input = root["input"];
  if (Absent(input) || (!input.is_string() && !input.is_array())) {
    return Invalid("'input' is required: a string or an array", "input");
  }
  bool store = true;  // the API's default
  const Field store_field = root["store"];
  if (!Absent(store_field) && store_field.get_bool().get(store)) {
    return Invalid("'store' must be a boolean", "store");
  }
  if (store) return Invalid("mock: 'store' must be false (the gateway is stateless)", "store");
  const Field stream = root["stream"];
  if (!Absent(stream) && stream.get_bool().get(chat.stream)) {
    return Invalid("'stream' must be a boolean", "stream");
  }
  const Field limit = root["max_output_tokens"];
  if (!Absent(limit) && (limit.get_int64().get(chat.max_tokens) || chat.max_tokens < 1)) {
    return Invalid("'max_output_tokens' must be a positive integer", "max_output_tokens");
  }
  const Field tools = root["tools"];
  simdjson::dom::array list;
  if (!Absent(tools) && tools.get_array().get(list)) {
    return Invalid("'tools' must be an array", "tools");
  }
  if (!Absent(tools) && list.size() > 0) {
    std::string_view name;
    if (list.at(0)["name"].get_string().get(name)) {
      return Invalid("'tools[0].name' must be a string", "tools[0].name");
    }
    chat.first_tool = std::string(name);
  }
  chat.description = Describe(root, ReadResponsesConversation);
  chat.ends_with_tool_result = EndsWithToolResult(root, ReadResponsesConversation);
  chat.prompt_tokens = body.size() / kBytesPerPromptToken;
  return chat;
}

Result<ChatRequest> BodyParser::ParseMessages(std::string_view body) {
  Result<simdjson::dom::object> parsed = ParseRoot(body);
  if (!parsed.ok()) return parsed.error();
  const simdjson::dom::object root = parsed.value();

  ChatRequest chat;
  chat.wire = Wire::kAnthropic;
  std::string_view model;
  if (root["model"].get_string().get(model)) return Invalid("Field required", "model");
  chat.model = std::string(model);
  simdjson::dom::array messages;
  if (root["messages"].get_array().get(messages)) return Invalid("Field required", "messages");
  int64_t max_tokens = 0;
  if (root["max_tokens"].get_int64().get(max_tokens) || max_tokens < 1) {
    return Invalid("Field required: a positive integer", "max_tokens");
  }
  chat.max_tokens = max_tokens;
  const Field stream = root["stream"];
  if (!Absent(stream) && stream.get_bool().get(chat.stream)) {
    return Invalid("Input should be a valid boolean", "stream");
  }
  const Field tools = root["tools"];
  if (!Absent(tools)) {
    simdjson::dom::array list;
    if (tools.get_array().get(list)) return Invalid("Input should be a valid list", "tools");
    std::string_view name;
    if (list.size() > 0 && list.at(0)["name"].get_string().get(name)) {
      return Invalid("Field required", "tools.0.name");
    }
    chat.first_tool = std::string(name);
  }
  if (Status s = ParseThinking(root, chat); !s.ok()) return s.error();
  chat.description = Describe(root, ReadMessagesConversation);
  chat.ends_with_tool_result = EndsWithToolResult(root, ReadMessagesConversation);
  chat.prompt_tokens = body.size() / kBytesPerPromptToken;
  return chat;
}

Result<ChatRequest> BodyParser::ParseOllama(std::string_view body) {
  Result<simdjson::dom::object> parsed = ParseRoot(body);
  if (!parsed.ok()) return parsed.error();
  const simdjson::dom::object root = parsed.value();

  ChatRequest chat;
  chat.wire = Wire::kOllama;
  chat.stream = true;  // Ollama streams unless told not to
  std::string_view model;
  if (root["model"].get_string().get(model)) return Invalid("model is required", "");
  chat.model = std::string(model);
  simdjson::dom::array messages;
  if (root["messages"].get_array().get(messages)) return Invalid("messages is required", "");
  const Field stream = root["stream"];
  if (!Absent(stream) && stream.get_bool().get(chat.stream)) {
    return Invalid("stream must be a boolean", "");
  }
  const Field limit = root["options"]["num_predict"];
  int64_t num_predict = 0;
  if (!Absent(limit) && limit.get_int64().get(num_predict)) {
    return Invalid("options.num_predict must be an integer", "");
  }
  if (num_predict > 0) chat.max_tokens = num_predict;
  // think: true, or a level ("low", "medium", "high") for the models that take one.
  const Field think = root["think"];
  bool thinks = false;
  std::string_view level;
  if (!Absent(think) && think.get_bool().get(thinks) && think.get_string().get(level)) {
    return Invalid("think must be a boolean or a level", "");
  }
  chat.reasoning = thinks || !level.empty();
  if (Status tools = ParseTools(root, chat); !tools.ok()) return tools.error();
  chat.description = Describe(root, ReadChatConversation);
  chat.ends_with_tool_result = EndsWithToolResult(root, ReadChatConversation);
  chat.prompt_tokens = body.size() / kBytesPerPromptToken;
  return chat;
}

Result<ChatRequest> BodyParser::ParseGenerateContent(std::string_view body, std::string_view model,
                                                     bool stream) {
  Result<simdjson::dom::object> parsed = ParseRoot(body);
  if (!parsed.ok()) return parsed.error();
  const simdjson::dom::object root = parsed.value();

  ChatRequest chat;
  chat.wire = Wire::kGemini;
  chat.model = std::string(model);
  chat.stream = stream;
  simdjson::dom::array contents;
  if (root["contents"].get_array().get(contents) || contents.size() == 0) {
    return Invalid("contents is not specified", "contents");
  }
  if (Status signatures = CheckThoughtSignatures(contents); !signatures.ok()) {
    return signatures.error();
  }
  const Field limit = root["generationConfig"]["maxOutputTokens"];
  if (!Absent(limit) && (limit.get_int64().get(chat.max_tokens) || chat.max_tokens < 1)) {
    return Invalid("max_output_tokens must be positive", "generation_config.max_output_tokens");
  }
  // Thought summaries come back only with includeThoughts (and a budget other than 0).
  const Field thinking = root["generationConfig"]["thinkingConfig"];
  bool include_thoughts = false;
  int64_t budget = -1;
  if (!Absent(thinking["includeThoughts"]) &&
      thinking["includeThoughts"].get_bool().get(include_thoughts)) {
    return Invalid("include_thoughts must be a boolean",
                   "generation_config.thinking_config.include_thoughts");
  }
  if (!Absent(thinking["thinkingBudget"]) && thinking["thinkingBudget"].get_int64().get(budget)) {
    return Invalid("thinking_budget must be an integer",
                   "generation_config.thinking_config.thinking_budget");
  }
  chat.reasoning = include_thoughts && budget != 0;
  // The first function declaration, if any (a tool of another kind declares none).
  std::string_view name;
  if (!root["tools"].at(0)["functionDeclarations"].at(0)["name"].get_string().get(name)) {
    chat.first_tool = std::string(name);
  }
  chat.description = Describe(root, ReadGeminiConversation);
  chat.ends_with_tool_result = EndsWithToolResult(root, ReadGeminiConversation);
  chat.prompt_tokens = body.size() / kBytesPerPromptToken;
  return chat;
}

Result<ChatPlan> MakePlan(const MockOptions& options, const ChatRequest& chat,
                          const http::Request& request, std::mt19937_64& random) {
  ChatPlan plan;
  plan.first_token_delay = options.first_token_delay;
  plan.inter_token = options.inter_token;
  plan.slow_headers = options.slow_headers;

  auto tokens = HeaderInt(request, kTokensHeader, kMaxTokens);
  auto first = HeaderInt(request, kFirstTokenHeader, kMaxHeaderDelayMs);
  auto inter = HeaderInt(request, kInterTokenHeader, kMaxHeaderDelayMs);
  auto slow = HeaderInt(request, kSlowHeadersHeader, kMaxHeaderDelayMs);
  for (const auto* header : {&tokens, &first, &inter, &slow}) {
    if (!header->ok()) return header->error();
  }
  int64_t count = tokens.value().value_or(options.tokens);
  if (first.value()) plan.first_token_delay = Millis(*first.value());
  if (inter.value()) plan.inter_token = Millis(*inter.value());

  auto tool = request.find(kToolCallHeader);
  const bool until_result = options.tool_calls_until_result && !chat.ends_with_tool_result;
  plan.tool_call = !chat.first_tool.empty() && (options.tool_calls || until_result ||
                                                (tool != request.end() && tool->value() == "1"));
  if (plan.tool_call) {
    count = static_cast<int64_t>(kToolArgumentFragments.size());
  } else if (options.reply != ReplyMode::kTokens) {
    // The whole description, whatever the limits: a test reads all of it.
    count = static_cast<int64_t>(chat.description.size());
  } else if (chat.max_tokens >= 0 && chat.max_tokens < count) {
    count = chat.max_tokens;
    plan.truncated = true;
  }
  plan.tokens = static_cast<int>(count);

  auto fault = request.find(kFaultHeader);
  if (fault == request.end()) {
    plan.fault = DrawFault(options, chat.stream, random);
  } else {
    std::optional<FaultKind> kind = ParseFault(fault->value());
    if (!kind)
      return Invalid("unknown x-mock-fault \"" + std::string(fault->value()) + "\"",
                     std::string(kFaultHeader));
    plan.fault = *kind;
  }
  if (plan.fault == FaultKind::kSlowHeaders) {
    Millis fallback =
        options.slow_headers > Millis(0) ? options.slow_headers : kDefaultSlowHeadersFault;
    plan.slow_headers = slow.value() ? Millis(*slow.value()) : fallback;
  }
  return plan;
}

}  // namespace turnpike::mock
