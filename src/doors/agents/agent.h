// An agent: what a tenant defines once and its end users talk to (one turn = this config + a
// conversation's memory + a governed model call + accounting). Every update is a new version;
// a turn records the version it ran.
//
// The admin API's shape (also what the store keeps, as one JSON text per version):
//   {"id": "agt_...", "object": "agent", "tenant": T, "version": 1, "model": M,
//    "instructions": TEXT, "tools": [{"type": "function", "name", "description", "parameters",
//    "strict"}...], "max_output_tokens": N|null, "history": {"items": 50, "tokens": N|null},
//    "guard": {"urls": false, "allow_hosts": [HOST...], "marker": "[link removed]"},
//    "monthly_budget_usd": USD|null, "metadata": {...}, "created_at": unix, "updated_at": unix}
// `tools` are Responses-style function tools (flat); `max_output_tokens` caps every turn (a
// turn's own value is clamped to it); `history` is the memory window: the last `items` items
// of the conversation, fewer when their estimated tokens (bytes / 4) pass `tokens`; `guard`
// the output guard (guard/output_guard.h): with `urls` on, a URL in the answer whose host is
// neither under an `allow_hosts` entry nor named in the turn's context is replaced by `marker`.
// `monthly_budget_usd` caps the agent's spend per UTC month, across its versions and tenants'
// keys, the way a plan's caps a tenant's (budgets.h; null: spend is tracked, not capped). The
// admin API adds `spend` ({"month", "spent_usd"}: this replica's view of this month) to what
// it answers; that is not stored.
//
// Errors: kInvalidRequest naming the field (`param`). Pure functions; thread-safe.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace turnpike::agents {

inline constexpr int64_t kDefaultHistoryItems = 50;
inline constexpr int64_t kMaxHistoryItems = 1000;
inline constexpr size_t kMaxInstructionsBytes = 256 << 10;
inline constexpr size_t kMaxTools = 128;

struct Agent {
  std::string id;
  std::string tenant;
  int64_t version = 0;
  std::string model;
  std::string instructions;
  boost::json::array tools;             // checked by ApplyTools; read by every turn, never parsed
  std::string tools_text = "[]";        // `tools` serialized: a turn's echo of them
  boost::json::array chat_tools;        // `tools` translated for the pivot (chat tools)
  std::string chat_tools_text;          // `chat_tools` serialized: an upstream body's
  std::vector<std::string> tool_names;  // in `tools`' order
  std::optional<int64_t> max_output_tokens;
  int64_t history_items = kDefaultHistoryItems;
  std::optional<int64_t> history_tokens;
  bool guard_urls = false;
  std::vector<std::string> allow_hosts;
  std::string guard_marker = "[link removed]";
  std::optional<int64_t> monthly_budget_micros;  // micro-USD; unset: no cap
  std::string metadata = "{}";                   // a JSON object's text
  int64_t created_at = 0;
  int64_t updated_at = 0;

  bool AllowsTool(std::string_view name) const;
};

// A new agent from a create body (`tenant` and `model` required; `id`, when given, must be
// [A-Za-z0-9_-]{1,64}); id, version and times are the caller's to set when absent.
Result<Agent> AgentFromCreate(const boost::json::object& body);
// `base` with an update body's fields applied (every field but id and tenant may change);
// the version and times are the caller's to set.
Result<Agent> AgentFromUpdate(const Agent& base, const boost::json::object& body);
// The admin API's JSON (and the stored form), as text and as an object.
std::string RenderAgent(const Agent& agent);
boost::json::object AgentObject(const Agent& agent);
// The stored form read back.
Result<Agent> AgentFromStored(std::string_view json);

// Metadata as the Responses and Conversations APIs take it: an object of at most 16 string
// values, keys of at most 64 characters, values of at most 512; `param` names the field.
Status CheckMetadata(const boost::json::value& metadata, const std::string& param);

// "<prefix><32 hex digits>": 13 of the wall clock's microseconds, then 19 random (76 bits, a
// per-thread source). Time-ordered, so that the store's indexes on ids (items, responses) take
// new ids at their right edge, where concurrent turns share the pages a commit writes
// (turn_writer.h), instead of one random page each. The order is only as good as the clocks
// (a replica's skew, a clock step): ids stay unique, only their locality suffers. An id tells
// when it was made, to the microsecond. Thread-safe.
std::string MintId(std::string_view prefix);

}  // namespace turnpike::agents
