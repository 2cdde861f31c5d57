#include "doors/agents/agent.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>

#include "governance/budget.h"
#include "providers/openai_responses/request.h"

namespace turnpike::agents {
namespace json = boost::json;

namespace {

Error Invalid(std::string message, std::string param) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(param)};
}

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

Status CheckId(std::string_view id) {
  bool ok = !id.empty() && id.size() <= 64;
  for (char c : id) ok = ok && IsIdChar(c);
  if (!ok) return Invalid("`id` must be 1 to 64 characters of [A-Za-z0-9_-].", "id");
  return Ok{};
}

Result<std::string> NonEmptyString(const json::value& v, const char* field) {
  if (!v.is_string() || v.as_string().empty()) {
    return Invalid(std::string("`") + field + "` must be a non-empty string.", field);
  }
  return std::string(v.as_string());
}

// Tools are checked by the Responses translation itself (the same errors a turn would get),
// so an agent never holds a tool its turns would refuse.
Status ApplyTools(Agent& agent, const json::value& tools) {
  if (!tools.is_array()) return Invalid("`tools` must be an array.", "tools");
  if (tools.as_array().size() > kMaxTools)
    return Invalid("`tools` has more than 128 tools.", "tools");
  json::object probe{{"model", "agent"}, {"input", "x"}, {"tools", tools}};
  Result<json::object> pivot = providers::openai_responses::ParseResponsesDocument(probe);
  if (!pivot.ok()) return pivot.error();
  agent.tool_names.clear();
  for (const json::value& tool : tools.as_array()) {
    const json::string& name = tool.as_object().at("name").as_string();
    for (const std::string& seen : agent.tool_names) {
      if (seen == name) return Invalid("Two tools are named `" + seen + "`.", "tools");
    }
    agent.tool_names.emplace_back(name);
  }
  agent.tools = tools.as_array();
  agent.tools_text = json::serialize(agent.tools);
  // What the translation made of them, which every turn offering them all takes as it is.
  const json::value* chat_tools = pivot->if_contains("tools");
  agent.chat_tools = chat_tools != nullptr ? chat_tools->as_array() : json::array();
  agent.chat_tools_text = json::serialize(agent.chat_tools);
  return Ok{};
}

Result<std::optional<int64_t>> PositiveOrNull(const json::value& v, const char* field,
                                              int64_t max) {
  if (v.is_null()) return std::optional<int64_t>();
  if (!v.is_int64() || v.as_int64() < 1 || v.as_int64() > max) {
    return Invalid(std::string("`") + field + "` must be a whole number from 1 to " +
                       std::to_string(max) + ", or null.",
                   field);
  }
  return std::optional<int64_t>(v.as_int64());
}

constexpr double kMicrosPerUsd = 1e6;

Status ApplyBudget(Agent& agent, const json::value& v) {
  if (v.is_null()) {
    agent.monthly_budget_micros.reset();
    return Ok{};
  }
  constexpr double kMaxUsd = static_cast<double>(governance::kMaxBudgetMicros) / kMicrosPerUsd;
  const double usd = v.is_number() ? v.to_number<double>() : -1;
  if (!std::isfinite(usd) || usd < 0 || usd > kMaxUsd) {
    return Invalid("`monthly_budget_usd` must be a number of USD from 0 to " +
                       std::to_string(static_cast<int64_t>(kMaxUsd)) + ", or null.",
                   "monthly_budget_usd");
  }
  agent.monthly_budget_micros = static_cast<int64_t>(std::llround(usd * kMicrosPerUsd));
  return Ok{};
}

Status ApplyHistory(Agent& agent, const json::value& v) {
  if (!v.is_object()) return Invalid("`history` must be an object.", "history");
  for (const auto& member : v.as_object()) {
    if (member.key() == "items") {
      Result<std::optional<int64_t>> items =
          PositiveOrNull(member.value(), "history.items", kMaxHistoryItems);
      if (!items.ok()) return items.error();
      agent.history_items = items->value_or(kDefaultHistoryItems);
    } else if (member.key() == "tokens") {
      Result<std::optional<int64_t>> tokens =
          PositiveOrNull(member.value(), "history.tokens", int64_t{1} << 40);
      if (!tokens.ok()) return tokens.error();
      agent.history_tokens = *tokens;
    } else {
      return Invalid("Unknown field `history." + std::string(member.key()) + "`.",
                     "history." + std::string(member.key()));
    }
  }
  return Ok{};
}

Status ApplyGuard(Agent& agent, const json::value& v) {
  if (!v.is_object()) return Invalid("`guard` must be an object.", "guard");
  for (const auto& member : v.as_object()) {
    const std::string field = "guard." + std::string(member.key());
    const json::value& value = member.value();
    if (member.key() == "urls") {
      if (!value.is_bool()) return Invalid("`" + field + "` must be a boolean.", field);
      agent.guard_urls = value.as_bool();
    } else if (member.key() == "allow_hosts") {
      if (!value.is_array() || value.as_array().size() > 1000) {
        return Invalid("`" + field + "` must be an array of at most 1000 hosts.", field);
      }
      agent.allow_hosts.clear();
      for (const json::value& host : value.as_array()) {
        if (!host.is_string() || host.as_string().empty() || host.as_string().size() > 253) {
          return Invalid("`" + field + "` must hold host names.", field);
        }
        agent.allow_hosts.emplace_back(host.as_string());
      }
    } else if (member.key() == "marker") {
      if (!value.is_string() || value.as_string().size() > 256) {
        return Invalid("`" + field + "` must be a string of at most 256 characters.", field);
      }
      agent.guard_marker = std::string(value.as_string());
    } else {
      return Invalid("Unknown field `" + field + "`.", field);
    }
  }
  return Ok{};
}

// The fields every body may set; `create` adds id and tenant.
Status Apply(Agent& agent, const json::object& body, bool create) {
  for (const auto& member : body) {
    const std::string_view key = member.key();
    const json::value& v = member.value();
    if (key == "model") {
      Result<std::string> model = NonEmptyString(v, "model");
      if (!model.ok()) return model.error();
      agent.model = std::move(*model);
    } else if (key == "instructions") {
      if (!v.is_string() && !v.is_null()) {
        return Invalid("`instructions` must be a string.", "instructions");
      }
      agent.instructions = v.is_null() ? "" : std::string(v.as_string());
      if (agent.instructions.size() > kMaxInstructionsBytes) {
        return Invalid("`instructions` is longer than 256 KiB.", "instructions");
      }
    } else if (key == "tools") {
      if (Status s = ApplyTools(agent, v); !s.ok()) return s;
    } else if (key == "max_output_tokens") {
      Result<std::optional<int64_t>> cap = PositiveOrNull(v, "max_output_tokens", int64_t{1} << 30);
      if (!cap.ok()) return cap.error();
      agent.max_output_tokens = *cap;
    } else if (key == "history") {
      if (Status s = ApplyHistory(agent, v); !s.ok()) return s;
    } else if (key == "guard") {
      if (Status s = ApplyGuard(agent, v); !s.ok()) return s;
    } else if (key == "monthly_budget_usd") {
      if (Status s = ApplyBudget(agent, v); !s.ok()) return s;
    } else if (key == "metadata") {
      if (Status s = CheckMetadata(v, "metadata"); !s.ok()) return s;
      agent.metadata = json::serialize(v);
    } else if (create && key == "id") {
      if (!v.is_string()) return Invalid("`id` must be a string.", "id");
      if (Status s = CheckId(v.as_string()); !s.ok()) return s;
      agent.id = std::string(v.as_string());
    } else if (create && key == "tenant") {
      Result<std::string> tenant = NonEmptyString(v, "tenant");
      if (!tenant.ok()) return tenant.error();
      agent.tenant = std::move(*tenant);
    } else if (key == "id" || key == "tenant") {
      return Invalid("`" + std::string(key) + "` cannot change.", std::string(key));
    } else {
      return Invalid("Unknown field `" + std::string(key) + "`.", std::string(key));
    }
  }
  return Ok{};
}

}  // namespace

bool Agent::AllowsTool(std::string_view name) const {
  for (const std::string& allowed : tool_names) {
    if (allowed == name) return true;
  }
  return false;
}

Result<Agent> AgentFromCreate(const json::object& body) {
  Agent agent;
  if (Status s = Apply(agent, body, true); !s.ok()) return s.error();
  if (agent.tenant.empty()) return Invalid("`tenant` is required.", "tenant");
  if (agent.model.empty()) return Invalid("`model` is required.", "model");
  return agent;
}

Result<Agent> AgentFromUpdate(const Agent& base, const json::object& body) {
  Agent agent = base;
  if (Status s = Apply(agent, body, false); !s.ok()) return s.error();
  return agent;
}

std::string RenderAgent(const Agent& a) { return json::serialize(AgentObject(a)); }

json::object AgentObject(const Agent& a) {
  json::object o;
  o["id"] = a.id;
  o["object"] = "agent";
  o["tenant"] = a.tenant;
  o["version"] = a.version;
  o["model"] = a.model;
  o["instructions"] = a.instructions;
  o["tools"] = a.tools;
  o["max_output_tokens"] = a.max_output_tokens ? json::value(*a.max_output_tokens) : nullptr;
  o["history"] = json::object{
      {"items", a.history_items},
      {"tokens", a.history_tokens ? json::value(*a.history_tokens) : json::value(nullptr)}};
  json::array hosts;
  for (const std::string& host : a.allow_hosts) hosts.emplace_back(host);
  o["guard"] = json::object{
      {"urls", a.guard_urls}, {"allow_hosts", std::move(hosts)}, {"marker", a.guard_marker}};
  o["monthly_budget_usd"] =
      a.monthly_budget_micros
          ? json::value(static_cast<double>(*a.monthly_budget_micros) / kMicrosPerUsd)
          : json::value(nullptr);
  o["metadata"] = json::parse(a.metadata);
  o["created_at"] = a.created_at;
  o["updated_at"] = a.updated_at;
  return o;
}

Result<Agent> AgentFromStored(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return Error{ErrorCode::kInternal, "a stored agent is not JSON", ""};
  json::object& o = v.as_object();
  Agent agent;
  const json::value* id = o.if_contains("id");
  const json::value* tenant = o.if_contains("tenant");
  const json::value* version = o.if_contains("version");
  if (id == nullptr || !id->is_string() || tenant == nullptr || !tenant->is_string() ||
      version == nullptr || !version->is_int64()) {
    return Error{ErrorCode::kInternal, "a stored agent lacks its id, tenant or version", ""};
  }
  agent.id = std::string(id->as_string());
  agent.tenant = std::string(tenant->as_string());
  agent.version = version->as_int64();
  const json::value* created = o.if_contains("created_at");
  const json::value* updated = o.if_contains("updated_at");
  agent.created_at = created != nullptr && created->is_int64() ? created->as_int64() : 0;
  agent.updated_at = updated != nullptr && updated->is_int64() ? updated->as_int64() : 0;
  for (const char* k : {"id", "tenant", "version", "object", "created_at", "updated_at"}) {
    o.erase(k);
  }
  if (Status s = Apply(agent, o, false); !s.ok()) return s.error();
  return agent;
}

Status CheckMetadata(const json::value& metadata, const std::string& param) {
  if (metadata.is_null()) return Ok{};
  if (!metadata.is_object()) return Invalid("`" + param + "` must be an object.", param);
  const json::object& o = metadata.as_object();
  if (o.size() > 16) return Invalid("`" + param + "` has more than 16 keys.", param);
  for (const auto& member : o) {
    if (member.key().size() > 64) {
      return Invalid("A key of `" + param + "` is longer than 64 characters.", param);
    }
    if (!member.value().is_string() || member.value().as_string().size() > 512) {
      return Invalid("`" + param + "." + std::string(member.key()) +
                         "` must be a string of at most 512 characters.",
                     param + "." + std::string(member.key()));
    }
  }
  return Ok{};
}

std::string MintId(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  constexpr int kRandomBitsHigh = 12;                   // 3 hex digits, then 16 from a second draw
  constexpr uint64_t kMicrosMask = 0xfffffffffffffULL;  // 13 hex digits
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const uint64_t high = rng() >> (64 - kRandomBitsHigh);
  const uint64_t low = rng();
  // Hex digits written by hand: snprintf cost more than the rest of an id (a turn mints three).
  std::string id(prefix);
  id.resize(prefix.size() + 32);
  char* hex = id.data() + prefix.size();
  auto put = [hex](size_t at, uint64_t bits, size_t digits) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (size_t i = digits; i > 0; --i, bits >>= 4) hex[at + i - 1] = kDigits[bits & 0xf];
  };
  put(0, static_cast<uint64_t>(micros) & kMicrosMask, 13);
  put(13, high, 3);
  put(16, low, 16);
  return id;
}

}  // namespace turnpike::agents
