#include <boost/json/object.hpp>
#include <charconv>
#include <cstdint>

#include "common/clock.h"
#include "doors/admin/routes.h"
#include "governance/budget.h"
#include "store/call_log.h"
#include "store/daily_spend.h"

namespace turnpike::doors::admin {
namespace json = boost::json;

namespace {

constexpr int kMaxPage = 1000;
constexpr int kDefaultPage = 100;
// The daily spend read: 30 days unless asked; at most a year and kMaxDailyRows rows.
constexpr int64_t kDefaultDays = 30;
constexpr int64_t kMaxDays = 366;
constexpr int kMaxDailyRows = 10'000;

json::object CallJson(const store::CallRow& row) {
  const store::CallRecord& c = row.record;
  json::object o{
      {"id", row.id},
      {"time_ms", c.time_ms},
      {"request_id", c.request_id},
      {"tenant", c.tenant_id},
      {"key", c.key_id},
      {"model", c.model},
      {"deployment", c.deployment},
      {"status", c.status},
      {"error", c.error.empty() ? json::value(nullptr) : json::value(c.error)},
      {"prompt_tokens", c.prompt_tokens},
      {"completion_tokens", c.completion_tokens},
      {"cached_tokens", c.cached_tokens},
      {"cache_creation_tokens", c.cache_creation_tokens},
      {"reasoning_tokens", c.reasoning_tokens},
      {"cost_usd", Usd(c.cost_micros)},
      {"estimated", c.estimated},
      {"unpriced", c.unpriced},
      {"ttft_ms", c.ttft_ms >= 0 ? json::value(c.ttft_ms) : json::value(nullptr)},
      {"total_ms", c.total_ms},
      {"overhead_us", c.overhead_us >= 0 ? json::value(c.overhead_us) : json::value(nullptr)}};
  if (c.cache_status != store::CacheStatus::kNone) o["cache"] = CacheStatusName(c.cache_status);
  if (c.dropped_rows > 0) o["dropped_rows"] = c.dropped_rows;
  // An agent turn's (the agent door's): which agent and version ran, the response id the client
  // was given, the spans its guard replaced.
  if (!c.agent_id.empty()) {
    o["agent_id"] = c.agent_id;
    o["agent_version"] = c.agent_version;
    o["guard_replacements"] = c.guard_replacements;
  }
  if (!c.response_id.empty()) o["response_id"] = c.response_id;
  if (!c.request_body.empty()) o["request_body"] = c.request_body;
  return o;
}

bool ValidMonth(std::string_view m) {
  if (m.size() != 7 || m[4] != '-') return false;
  for (size_t i = 0; i < 7; ++i) {
    if (i != 4 && (m[i] < '0' || m[i] > '9')) return false;
  }
  const int month = (m[5] - '0') * 10 + (m[6] - '0');
  return month >= 1 && month <= 12;
}

std::optional<int64_t> ParseIntParam(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

Answer Spend(Service& service, const AdminCall& call) {
  std::string month(call.Query("month"));
  if (month.empty()) month = governance::FormatMonth(governance::MonthOf(UnixSeconds()));
  if (!ValidMonth(month)) co_return Bad("month must be YYYY-MM", "month");
  const std::string_view tenant = call.Query("tenant");
  const std::string_view key = call.Query("key");
  Result<std::vector<control::SpendInfo>> spend = co_await service.Spend(month);
  if (!spend.ok()) co_return spend.error();
  json::array data;
  for (const control::SpendInfo& s : spend.value()) {
    if (!tenant.empty() && s.tenant_id != tenant) continue;
    if (!key.empty() && (s.scope != store::SpendScope::kKey || s.scope_id != key)) continue;
    data.push_back(json::object{{"scope", s.scope == store::SpendScope::kKey ? "key" : "tenant"},
                                {"id", s.scope_id},
                                {"tenant", s.tenant_id},
                                {"spent_usd", Usd(s.spent_micros)},
                                {"reserved_usd", Usd(s.reserved_micros)},
                                {"budget_usd", OptionalUsd(s.budget_micros)}});
  }
  co_return JsonAnswer(200, json::object{{"month", month}, {"data", std::move(data)}});
}

Answer DailySpend(Service& service, const AdminCall& call) {
  const int64_t today = store::DayOf(UnixSeconds() * 1000);
  const std::string_view from_text = call.Query("from");
  const std::string_view to_text = call.Query("to");
  const int64_t to = to_text.empty() ? today : store::ParseDay(to_text);
  if (to < 0) co_return Bad("to must be a date YYYY-MM-DD", "to");
  const int64_t from = from_text.empty() ? to - (kDefaultDays - 1) : store::ParseDay(from_text);
  if (from < 0) co_return Bad("from must be a date YYYY-MM-DD", "from");
  if (from > to) co_return Bad("from must not be after to", "from");
  if (to - from >= kMaxDays) {
    co_return Bad("at most " + std::to_string(kMaxDays) + " days at a time", "from");
  }
  store::DailySpendQuery q;
  q.from_day = store::FormatDay(from);
  q.to_day = store::FormatDay(to);
  q.tenant_id = call.Query("tenant");
  q.key_id = call.Query("key");
  q.limit = kMaxDailyRows;
  q.by_model = false;
  json::array group_by;
  std::string_view groups = call.Query("group_by");
  if (groups.empty()) groups = "model";
  while (!groups.empty()) {
    const size_t comma = groups.find(',');
    const std::string_view g = groups.substr(0, comma);
    groups.remove_prefix(comma == std::string_view::npos ? groups.size() : comma + 1);
    if (g == "model") {
      q.by_model = true;
    } else if (g == "key") {
      q.by_key = true;
    } else if (g == "tenant") {
      q.by_tenant = true;
    } else if (g != "day") {
      co_return Bad("group_by is a list of day, model, key, tenant", "group_by");
    }
  }
  if (q.by_tenant) group_by.push_back("tenant");
  if (q.by_key) group_by.push_back("key");
  if (q.by_model) group_by.push_back("model");
  std::string from_day = q.from_day;
  std::string to_day = q.to_day;
  Result<std::vector<store::DailySpendRow>> rows = co_await service.DailySpend(std::move(q));
  if (!rows.ok()) co_return rows.error();
  json::array data;
  for (const store::DailySpendRow& r : rows.value()) {
    json::object o{{"day", r.day},
                   {"cost_usd", Usd(r.cost_micros)},
                   {"prompt_tokens", r.prompt_tokens},
                   {"completion_tokens", r.completion_tokens},
                   {"requests", r.requests}};
    for (const json::value& g : group_by) {
      const json::string& name = g.as_string();
      o[name] = name == "tenant" ? r.tenant_id : name == "key" ? r.key_id : r.model;
    }
    data.push_back(std::move(o));
  }
  co_return JsonAnswer(200, json::object{{"from", std::move(from_day)},
                                         {"to", std::move(to_day)},
                                         {"group_by", std::move(group_by)},
                                         {"data", std::move(data)}});
}

Answer Calls(Service& service, const AdminCall& call) {
  store::CallQuery q;
  q.tenant_id = call.Query("tenant");
  q.key_id = call.Query("key");
  q.model = call.Query("model");
  q.limit = kDefaultPage;
  struct IntParam {
    const char* name;
    int64_t max;
  };
  for (const IntParam& p :
       {IntParam{"status", 999}, IntParam{"since", INT64_MAX}, IntParam{"until", INT64_MAX},
        IntParam{"cursor", INT64_MAX}, IntParam{"limit", kMaxPage}}) {
    const std::string text(call.Query(p.name));
    if (text.empty()) continue;
    std::optional<int64_t> v = ParseIntParam(text);
    if (!v || *v > p.max) {
      co_return Bad(std::string(p.name) + " must be an integer from 0 to " + std::to_string(p.max),
                    p.name);
    }
    const std::string_view name = p.name;
    if (name == "status") q.status = static_cast<int>(*v);
    if (name == "since") q.since_ms = *v;
    if (name == "until") q.until_ms = *v;
    if (name == "cursor") q.before_id = *v;
    if (name == "limit") q.limit = static_cast<int>(std::max<int64_t>(*v, 1));
  }
  const int limit = q.limit;
  Result<std::vector<store::CallRow>> rows = co_await service.Calls(std::move(q));
  if (!rows.ok()) co_return rows.error();
  json::array data;
  for (const store::CallRow& row : rows.value()) data.push_back(CallJson(row));
  json::value next = nullptr;
  if (static_cast<int>(rows->size()) == limit && !rows->empty()) next = rows->back().id;
  co_return JsonAnswer(200, json::object{{"data", std::move(data)}, {"next_cursor", next}});
}

Answer Reconcile(Service& service, const AdminCall&) {
  Result<control::ReconcileReport> report = co_await service.ReconcileNow();
  if (!report.ok()) co_return report.error();
  co_return JsonAnswer(200, json::object{{"drift_usd", Usd(report->drift_micros)},
                                         {"scopes_corrected", report->scopes_corrected}});
}

}  // namespace turnpike::doors::admin
