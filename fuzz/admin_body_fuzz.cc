// The admin API's request bodies (doors/admin): the bytes through ParseObject (the 400 for what
// is not a JSON object) and the field reader every write route uses (body_reader.h's Body:
// unknown fields, then each field as text, flag, integer in a range, USD amount and model
// list, the conversions where a number's type or size is the client's to choose).
// Each member of the object is read with every reader, over a Body whose unknown-field error is
// cleared (so the typed reads run on every member), and a plan's fields over a Body that knows
// those (ReadPlan's; any other member is the unknown-field path).
// Checks: a read that succeeded is in range (an integer within its bounds, an amount within
// 0..kMaxUsd as micro-USD); a Body that knows no field refuses any object with one.
#include <string>
#include <vector>

#include "doors/admin/body_reader.h"
#include "doors/admin/routes.h"
#include "fuzz_support.h"

namespace {
namespace admin = turnpike::doors::admin;

// Every reader on `key`; traps on a value out of what the reader promises.
void ReadAll(admin::Body& body, std::string_view key) {
  std::optional<std::string> text = body.Text(key, false);
  std::optional<bool> flag = body.Bool(key);
  std::optional<int64_t> small = body.Int(key, 1, 1'000'000);
  std::optional<int64_t> wide = body.Int(key, INT64_MIN, INT64_MAX);
  std::optional<int64_t> micros = body.Usd(key);
  std::vector<std::string> models = body.Models(key);
  if (small && (*small < 1 || *small > 1'000'000)) __builtin_trap();
  if (micros &&
      (*micros < 0 || *micros > static_cast<int64_t>(admin::kMaxUsd * admin::kMicros) + 1)) {
    __builtin_trap();
  }
  (void)text;
  (void)flag;
  (void)wide;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  turnpike::Result<boost::json::object> object =
      admin::ParseObject(turnpike::fuzz::AsText(data, size));
  if (!object.ok()) return 0;
  std::vector<std::string> keys;
  for (const auto& member : object.value()) keys.emplace_back(member.key());
  {
    admin::Body body(object.value(), {});
    if (!keys.empty() && !body.error) __builtin_trap();  // every field is unknown to it
  }
  // Every member read with every reader (a Body's reads go on after its first error, which it
  // keeps; the routes answer that error once they have read their fields).
  admin::Body all(object.value(), {});
  all.error.reset();
  for (const std::string& key : keys) ReadAll(all, key);
  ReadAll(all, "absent");
  // The plan route's fields (tenant_routes.cc's ReadPlan).
  admin::Body plan(object.value(),
                   {"monthly_budget_usd", "rpm", "tpm", "allowed_models", "max_request_cost_usd",
                    "search_query_price_usd", "fail_open", "cache", "cache_scope",
                    "cache_tool_calls", "cache_semantic", "id"});
  for (std::string_view key : {"monthly_budget_usd", "rpm", "allowed_models", "fail_open", "id"}) {
    ReadAll(plan, key);
  }
  return 0;
}
