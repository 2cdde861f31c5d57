#include "admin/admin_api.h"

#include <openssl/crypto.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/url/parse.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "governance/budget.h"
#include "governance/keys.h"
#include "governance/rate_limit.h"
#include "http/exchange.h"

namespace turnpike::admin {
namespace net = boost::asio;
namespace json = boost::json;
namespace bhttp = boost::beast::http;
using governance::Key;
using governance::Plan;
using governance::Tenant;

namespace {

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kPrefix = "/admin/v1/";
constexpr double kMicros = 1'000'000;
constexpr double kMaxUsd = static_cast<double>(governance::kMaxBudgetMicros) / kMicros;
constexpr int kMaxPage = 1000;
constexpr int kDefaultPage = 100;
constexpr size_t kMaxIdLength = 64;

struct Reply {
  unsigned status = 200;
  std::string body;
  std::string allow;  // 405: the methods the path takes
};

Error Bad(std::string message, std::string field) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), std::move(field)};
}

Reply ErrorReply(const Error& error) {
  return Reply{static_cast<unsigned>(HttpStatus(error.code)), AdminErrorBody(error), {}};
}

Reply JsonReply(unsigned status, const json::value& value) {
  return Reply{status, json::serialize(value), {}};
}

json::value Usd(int64_t micros) { return static_cast<double>(micros) / kMicros; }
json::value OptionalUsd(const std::optional<int64_t>& micros) {
  return micros ? Usd(*micros) : json::value(nullptr);
}
json::value OptionalInt(const std::optional<int64_t>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}
json::array Strings(const std::vector<std::string>& items) {
  json::array out;
  for (const std::string& s : items) out.emplace_back(s);
  return out;
}

json::object PlanJson(const Plan& p) {
  return {{"id", p.id},
          {"monthly_budget_usd", OptionalUsd(p.monthly_budget_micros)},
          {"rpm", OptionalInt(p.rpm)},
          {"tpm", OptionalInt(p.tpm)},
          {"allowed_models", Strings(p.allowed_models)},
          {"max_request_cost_usd", OptionalUsd(p.max_request_cost_micros)}};
}

json::object TenantJson(const Tenant& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"plan", t.plan_id},
          {"status", t.status == governance::TenantStatus::kSuspended ? "suspended" : "active"},
          {"log_bodies", t.log_bodies},
          {"created_at", t.created_at}};
}

json::object KeyJson(const Key& k) {
  return {{"id", k.public_id},
          {"tenant", k.tenant_id},
          {"name", k.name},
          {"status", k.status == governance::KeyStatus::kRevoked ? "revoked" : "active"},
          {"expires_at", k.expires_at == governance::kNeverExpires ? json::value(nullptr)
                                                                   : json::value(k.expires_at)},
          {"monthly_budget_usd", OptionalUsd(k.monthly_budget_micros)},
          {"rpm", OptionalInt(k.rpm)},
          {"tpm", OptionalInt(k.tpm)},
          {"allowed_models", Strings(k.allowed_models)},
          {"created_at", k.created_at}};
}

json::object PriceJson(const store::PriceInfo& p) {
  return {{"model", p.model},
          {"input", Usd(p.price.input_micros_per_mtok)},
          {"output", Usd(p.price.output_micros_per_mtok)},
          {"cached_input", Usd(p.price.cached_input_micros_per_mtok)},
          {"cache_write", Usd(p.price.cache_write())},
          {"max_output_tokens", p.price.max_output_tokens},
          {"source", store::PriceSourceName(p.source)}};
}

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
      {"cost_usd", Usd(c.cost_micros)},
      {"estimated", c.estimated},
      {"unpriced", c.unpriced},
      {"ttft_ms", c.ttft_ms >= 0 ? json::value(c.ttft_ms) : json::value(nullptr)},
      {"total_ms", c.total_ms},
      {"overhead_us", c.overhead_us >= 0 ? json::value(c.overhead_us) : json::value(nullptr)}};
  if (c.dropped_rows > 0) o["dropped_rows"] = c.dropped_rows;
  if (!c.request_body.empty()) o["request_body"] = c.request_body;
  return o;
}

// Reads a JSON object body field by field; the first problem is kept in `error`.
class Body {
 public:
  Body(const json::object& object, std::initializer_list<std::string_view> known)
      : object_(object) {
    for (const auto& member : object_) {
      bool ok = false;
      for (std::string_view k : known) ok = ok || member.key() == k;
      if (!ok) {
        Fail("unknown field", std::string(member.key()));
        return;
      }
    }
  }

  bool Has(std::string_view key) const { return object_.contains(key); }

  std::optional<std::string> Text(std::string_view key, bool required) {
    const json::value* v = object_.if_contains(key);
    if (v == nullptr || v->is_null()) {
      if (required) Fail("is required", std::string(key));
      return std::nullopt;
    }
    if (!v->is_string()) {
      Fail("must be a string", std::string(key));
      return std::nullopt;
    }
    return std::string(v->as_string());
  }

  std::optional<bool> Bool(std::string_view key) {
    const json::value* v = object_.if_contains(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_bool()) {
      Fail("must be true or false", std::string(key));
      return std::nullopt;
    }
    return v->as_bool();
  }

  // An integer in [min, max]; null or absent: nullopt.
  std::optional<int64_t> Int(std::string_view key, int64_t min, int64_t max,
                             bool required = false) {
    const json::value* v = object_.if_contains(key);
    if (v == nullptr || v->is_null()) {
      if (required) Fail("is required", std::string(key));
      return std::nullopt;
    }
    int64_t n = 0;
    if (v->is_int64()) {
      n = v->as_int64();
    } else if (v->is_uint64() && v->as_uint64() <= static_cast<uint64_t>(max)) {
      n = static_cast<int64_t>(v->as_uint64());
    } else if (v->is_double() && std::trunc(v->as_double()) == v->as_double() &&
               std::fabs(v->as_double()) < 9e15) {
      n = static_cast<int64_t>(v->as_double());
    } else {
      Fail("must be an integer", std::string(key));
      return std::nullopt;
    }
    if (n < min || n > max) {
      Fail("must be between " + std::to_string(min) + " and " + std::to_string(max),
           std::string(key));
      return std::nullopt;
    }
    return n;
  }

  // USD amount as micro-USD; null or absent: nullopt.
  std::optional<int64_t> Usd(std::string_view key, bool required = false) {
    const json::value* v = object_.if_contains(key);
    if (v == nullptr || v->is_null()) {
      if (required) Fail("is required", std::string(key));
      return std::nullopt;
    }
    if (!v->is_number()) {
      Fail("must be a number (USD)", std::string(key));
      return std::nullopt;
    }
    const double usd = v->to_number<double>();
    if (!std::isfinite(usd) || usd < 0 || usd > kMaxUsd) {
      Fail("must be between 0 and " + std::to_string(static_cast<int64_t>(kMaxUsd)) + " USD",
           std::string(key));
      return std::nullopt;
    }
    return static_cast<int64_t>(std::llround(usd * kMicros));
  }

  std::vector<std::string> Models(std::string_view key) {
    std::vector<std::string> out;
    const json::value* v = object_.if_contains(key);
    if (v == nullptr || v->is_null()) return out;
    if (!v->is_array()) {
      Fail("must be a list of model names", std::string(key));
      return out;
    }
    for (const json::value& item : v->as_array()) {
      if (!item.is_string() || item.as_string().empty()) {
        Fail("must be a list of model names", std::string(key));
        return {};
      }
      out.emplace_back(item.as_string());
    }
    return out;
  }

  std::optional<Error> error;

 private:
  void Fail(std::string what, std::string field) {
    if (!error) error = Bad(field + " " + what, std::move(field));
  }
  const json::object& object_;
};

// The request body as a JSON object, or a 400.
Result<json::object> ParseObject(std::string_view body) {
  boost::system::error_code ec;
  json::value value = json::parse(body.empty() ? std::string_view("{}") : body, ec);
  if (ec) return Bad("The body is not valid JSON: " + ec.message(), "");
  if (!value.is_object()) return Bad("The body must be a JSON object.", "");
  return std::move(value.as_object());
}

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Error MethodNotAllowed(std::string_view allowed) {
  return Error{ErrorCode::kMethodNotAllowed, "Use " + std::string(allowed) + " on this path.", ""};
}

Reply NotAllowed(std::string_view allowed) {
  Reply reply = ErrorReply(MethodNotAllowed(allowed));
  reply.allow = allowed;
  return reply;
}

Error NoSuchPath(std::string_view path) {
  return Error{ErrorCode::kNotFound, "No admin endpoint " + std::string(path) + ".", ""};
}

// The parsed target: path segments after /admin/v1/ and the query parameters.
struct Target {
  std::vector<std::string> segments;
  std::vector<std::pair<std::string, std::string>> query;

  std::string Param(std::string_view name) const {
    for (const auto& [k, v] : query) {
      if (k == name) return v;
    }
    return {};
  }
};

Result<Target> ParseTarget(std::string_view target) {
  boost::system::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target);
  if (!url) return Bad("The request target is not a valid URL.", "");
  Target out;
  std::string path = url->path();
  if (!path.starts_with(kPrefix)) return NoSuchPath(path);
  for (auto segment : url->segments()) out.segments.emplace_back(segment);
  // Drop "admin" and "v1".
  out.segments.erase(out.segments.begin(), out.segments.begin() + 2);
  if (!out.segments.empty() && out.segments.back().empty()) out.segments.pop_back();
  for (auto param : url->params()) out.query.emplace_back(param.key, param.value);
  return out;
}

Result<Plan> ReadPlan(std::string id, const json::object& object) {
  Body body(object,
            {"monthly_budget_usd", "rpm", "tpm", "allowed_models", "max_request_cost_usd", "id"});
  Plan plan;
  plan.id = std::move(id);
  plan.monthly_budget_micros = body.Usd("monthly_budget_usd");
  plan.rpm = body.Int("rpm", 1, governance::kMaxRateLimit);
  plan.tpm = body.Int("tpm", 1, governance::kMaxRateLimit);
  plan.allowed_models = body.Models("allowed_models");
  plan.max_request_cost_micros = body.Usd("max_request_cost_usd");
  std::optional<std::string> body_id = body.Text("id", false);
  if (!body.error && body_id && *body_id != plan.id) {
    return Bad("id in the body differs from the path", "id");
  }
  if (body.error) return *body.error;
  return plan;
}

std::optional<governance::TenantStatus> ParseTenantStatus(const std::string& s) {
  if (s == "active") return governance::TenantStatus::kActive;
  if (s == "suspended") return governance::TenantStatus::kSuspended;
  return std::nullopt;
}

}  // namespace

std::string AdminErrorBody(const Error& error) {
  json::object inner{{"type", ErrorCodeName(error.code)}, {"message", error.message}};
  if (!error.param.empty()) inner["field"] = error.param;
  return json::serialize(json::object{{"error", std::move(inner)}});
}

std::string AdminApi::RenderError(std::string_view target, const Error& error) const {
  return AdminErrorBody(error);
}

namespace {

// Everything below returns the reply to send; Handle sends it.
net::awaitable<Reply> Plans(store::GovernanceService& service, const Target& t, bhttp::verb method,
                            std::string_view raw_body) {
  if (t.segments.size() == 1) {
    if (method != bhttp::verb::get) co_return NotAllowed("GET");
    json::array data;
    for (const Plan& p : service.cell().Load()->plans()) data.push_back(PlanJson(p));
    co_return JsonReply(200, json::object{{"data", std::move(data)}});
  }
  if (t.segments.size() != 2) co_return ErrorReply(NoSuchPath("plans/..."));
  if (method != bhttp::verb::put) co_return NotAllowed("PUT");
  if (!ValidId(t.segments[1])) {
    co_return ErrorReply(Bad("plan ids are 1-64 of A-Z a-z 0-9 - _ .", "id"));
  }
  Result<json::object> object = ParseObject(raw_body);
  if (!object.ok()) co_return ErrorReply(object.error());
  Result<Plan> plan = ReadPlan(t.segments[1], object.value());
  if (!plan.ok()) co_return ErrorReply(plan.error());
  Result<Plan> saved = co_await service.PutPlan(std::move(plan.value()));
  if (!saved.ok()) co_return ErrorReply(saved.error());
  co_return JsonReply(200, PlanJson(saved.value()));
}

net::awaitable<Reply> Tenants(store::GovernanceService& service, const Target& t,
                              bhttp::verb method, std::string_view raw_body) {
  const governance::SnapshotPtr snapshot = service.cell().Load();
  if (t.segments.size() == 1 && method == bhttp::verb::get) {
    json::array data;
    for (const auto& entry : snapshot->tenants()) data.push_back(TenantJson(entry.tenant));
    co_return JsonReply(200, json::object{{"data", std::move(data)}});
  }
  if (t.segments.size() == 1 && method == bhttp::verb::post) {
    Result<json::object> object = ParseObject(raw_body);
    if (!object.ok()) co_return ErrorReply(object.error());
    Body body(object.value(), {"id", "name", "plan", "log_bodies", "status"});
    Tenant tenant;
    std::optional<std::string> id = body.Text("id", true);
    std::optional<std::string> plan = body.Text("plan", true);
    std::optional<std::string> name = body.Text("name", false);
    std::optional<std::string> status = body.Text("status", false);
    tenant.log_bodies = body.Bool("log_bodies").value_or(false);
    if (body.error) co_return ErrorReply(*body.error);
    if (!ValidId(*id)) co_return ErrorReply(Bad("tenant ids are 1-64 of A-Z a-z 0-9 - _ .", "id"));
    tenant.id = *id;
    tenant.plan_id = *plan;
    tenant.name = name.value_or(*id);
    if (status) {
      std::optional<governance::TenantStatus> parsed = ParseTenantStatus(*status);
      if (!parsed) co_return ErrorReply(Bad("status must be active or suspended", "status"));
      tenant.status = *parsed;
    }
    Result<Tenant> created = co_await service.CreateTenant(std::move(tenant));
    if (!created.ok()) co_return ErrorReply(created.error());
    co_return JsonReply(201, TenantJson(created.value()));
  }
  if (t.segments.size() == 1) co_return NotAllowed("GET, POST");
  if (t.segments.size() != 2) co_return ErrorReply(NoSuchPath("tenants/..."));
  const std::string& id = t.segments[1];
  if (method == bhttp::verb::get) {
    const governance::TenantEntry* entry = snapshot->FindTenant(id);
    if (entry == nullptr) {
      co_return ErrorReply(Error{ErrorCode::kNotFound, "No tenant " + id + ".", ""});
    }
    co_return JsonReply(200, TenantJson(entry->tenant));
  }
  if (method != bhttp::verb::patch) co_return NotAllowed("GET, PATCH");
  Result<json::object> object = ParseObject(raw_body);
  if (!object.ok()) co_return ErrorReply(object.error());
  Body body(object.value(), {"name", "plan", "status", "log_bodies"});
  store::TenantPatch patch;
  patch.id = id;
  patch.name = body.Text("name", false);
  patch.plan_id = body.Text("plan", false);
  std::optional<std::string> status = body.Text("status", false);
  patch.log_bodies = body.Bool("log_bodies");
  if (body.error) co_return ErrorReply(*body.error);
  if (status) {
    patch.status = ParseTenantStatus(*status);
    if (!patch.status) co_return ErrorReply(Bad("status must be active or suspended", "status"));
  }
  Result<Tenant> updated = co_await service.UpdateTenant(std::move(patch));
  if (!updated.ok()) co_return ErrorReply(updated.error());
  co_return JsonReply(200, TenantJson(updated.value()));
}

net::awaitable<Reply> Keys(store::GovernanceService& service, const Target& t, bhttp::verb method,
                           std::string_view raw_body) {
  if (t.segments.size() == 1 && method == bhttp::verb::get) {
    const governance::SnapshotPtr snapshot = service.cell().Load();
    const std::string tenant = t.Param("tenant");
    json::array data;
    for (const auto& entry : snapshot->keys()) {
      if (tenant.empty() || entry.key.tenant_id == tenant) data.push_back(KeyJson(entry.key));
    }
    co_return JsonReply(200, json::object{{"data", std::move(data)}});
  }
  if (t.segments.size() == 1 && method == bhttp::verb::post) {
    Result<json::object> object = ParseObject(raw_body);
    if (!object.ok()) co_return ErrorReply(object.error());
    Body body(object.value(), {"tenant", "name", "expires_at", "monthly_budget_usd", "rpm", "tpm",
                               "allowed_models"});
    Key key;
    std::optional<std::string> tenant = body.Text("tenant", true);
    key.name = body.Text("name", false).value_or("");
    std::optional<int64_t> expires = body.Int("expires_at", 1, int64_t{1} << 40);
    key.monthly_budget_micros = body.Usd("monthly_budget_usd");
    key.rpm = body.Int("rpm", 1, governance::kMaxRateLimit);
    key.tpm = body.Int("tpm", 1, governance::kMaxRateLimit);
    key.allowed_models = body.Models("allowed_models");
    if (body.error) co_return ErrorReply(*body.error);
    key.tenant_id = *tenant;
    key.expires_at = expires.value_or(governance::kNeverExpires);
    Result<store::CreatedKey> created = co_await service.CreateKey(std::move(key));
    if (!created.ok()) co_return ErrorReply(created.error());
    json::object out = KeyJson(created->key);
    out["key"] = created->secret_key;
    co_return JsonReply(201, out);
  }
  if (t.segments.size() == 1) co_return NotAllowed("GET, POST");
  if (t.segments.size() == 3 && t.segments[2] == "revoke") {
    if (method != bhttp::verb::post) co_return NotAllowed("POST");
    Result<Key> revoked = co_await service.RevokeKey(t.segments[1]);
    if (!revoked.ok()) co_return ErrorReply(revoked.error());
    co_return JsonReply(200, KeyJson(revoked.value()));
  }
  if (t.segments.size() == 2 && method == bhttp::verb::get) {
    const governance::SnapshotPtr snapshot = service.cell().Load();
    const governance::KeyEntry* entry = snapshot->FindKey(t.segments[1]);
    if (entry == nullptr) {
      co_return ErrorReply(Error{ErrorCode::kNotFound, "No key " + t.segments[1] + ".", ""});
    }
    co_return JsonReply(200, KeyJson(entry->key));
  }
  co_return ErrorReply(NoSuchPath("keys/..."));
}

net::awaitable<Reply> Prices(store::GovernanceService& service, const Target& t, bhttp::verb method,
                             std::string_view raw_body) {
  if (t.segments.size() == 1) {
    if (method != bhttp::verb::get) co_return NotAllowed("GET");
    Result<std::vector<store::PriceInfo>> prices = co_await service.Prices();
    if (!prices.ok()) co_return ErrorReply(prices.error());
    json::array data;
    for (const store::PriceInfo& p : prices.value()) data.push_back(PriceJson(p));
    co_return JsonReply(200, json::object{{"data", std::move(data)}});
  }
  if (t.segments.size() != 2) co_return ErrorReply(NoSuchPath("prices/..."));
  const std::string& model = t.segments[1];
  if (method == bhttp::verb::delete_) {
    Result<store::PriceInfo> now = co_await service.DeletePrice(model);
    if (!now.ok()) co_return ErrorReply(now.error());
    co_return JsonReply(200, PriceJson(now.value()));
  }
  if (method != bhttp::verb::put) co_return NotAllowed("PUT, DELETE");
  Result<json::object> object = ParseObject(raw_body);
  if (!object.ok()) co_return ErrorReply(object.error());
  Body body(object.value(),
            {"input", "output", "cached_input", "cache_write", "max_output_tokens"});
  store::PriceOverride price;
  price.model = model;
  std::optional<int64_t> input = body.Usd("input", true);
  std::optional<int64_t> output = body.Usd("output", true);
  std::optional<int64_t> cached = body.Usd("cached_input");
  std::optional<int64_t> cache_write = body.Usd("cache_write");
  std::optional<int64_t> max_output = body.Int("max_output_tokens", 1, 100'000'000, true);
  if (body.error) co_return ErrorReply(*body.error);
  price.price = {*input, *output, cached.value_or(*input), *max_output,
                 cache_write.value_or(*input)};
  Result<store::PriceInfo> saved = co_await service.PutPrice(std::move(price));
  if (!saved.ok()) co_return ErrorReply(saved.error());
  co_return JsonReply(200, PriceJson(saved.value()));
}

bool ValidMonth(std::string_view m) {
  if (m.size() != 7 || m[4] != '-') return false;
  for (size_t i = 0; i < 7; ++i) {
    if (i != 4 && (m[i] < '0' || m[i] > '9')) return false;
  }
  const int month = (m[5] - '0') * 10 + (m[6] - '0');
  return month >= 1 && month <= 12;
}

net::awaitable<Reply> Spend(store::GovernanceService& service, const Target& t,
                            bhttp::verb method) {
  if (t.segments.size() != 1) co_return ErrorReply(NoSuchPath("spend/..."));
  if (method != bhttp::verb::get) co_return NotAllowed("GET");
  std::string month = t.Param("month");
  if (month.empty()) month = governance::FormatMonth(governance::MonthOf(UnixSeconds()));
  if (!ValidMonth(month)) co_return ErrorReply(Bad("month must be YYYY-MM", "month"));
  const std::string tenant = t.Param("tenant");
  const std::string key = t.Param("key");
  Result<std::vector<store::SpendInfo>> spend = co_await service.Spend(month);
  if (!spend.ok()) co_return ErrorReply(spend.error());
  json::array data;
  for (const store::SpendInfo& s : spend.value()) {
    if (!tenant.empty() && s.tenant_id != tenant) continue;
    if (!key.empty() && (s.scope != store::SpendScope::kKey || s.scope_id != key)) continue;
    data.push_back(json::object{{"scope", s.scope == store::SpendScope::kKey ? "key" : "tenant"},
                                {"id", s.scope_id},
                                {"tenant", s.tenant_id},
                                {"spent_usd", Usd(s.spent_micros)},
                                {"reserved_usd", Usd(s.reserved_micros)},
                                {"budget_usd", OptionalUsd(s.budget_micros)}});
  }
  co_return JsonReply(200, json::object{{"month", month}, {"data", std::move(data)}});
}

std::optional<int64_t> ParseIntParam(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

net::awaitable<Reply> Calls(store::GovernanceService& service, const Target& t,
                            bhttp::verb method) {
  if (t.segments.size() != 1) co_return ErrorReply(NoSuchPath("calls/..."));
  if (method != bhttp::verb::get) co_return NotAllowed("GET");
  store::CallQuery q;
  q.tenant_id = t.Param("tenant");
  q.key_id = t.Param("key");
  q.model = t.Param("model");
  q.limit = kDefaultPage;
  struct IntParam {
    const char* name;
    int64_t max;
  };
  for (const IntParam& p :
       {IntParam{"status", 999}, IntParam{"since", INT64_MAX}, IntParam{"until", INT64_MAX},
        IntParam{"cursor", INT64_MAX}, IntParam{"limit", kMaxPage}}) {
    const std::string text = t.Param(p.name);
    if (text.empty()) continue;
    std::optional<int64_t> v = ParseIntParam(text);
    if (!v || *v > p.max) {
      co_return ErrorReply(Bad(
          std::string(p.name) + " must be an integer from 0 to " + std::to_string(p.max), p.name));
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
  if (!rows.ok()) co_return ErrorReply(rows.error());
  json::array data;
  for (const store::CallRow& row : rows.value()) data.push_back(CallJson(row));
  json::value next = nullptr;
  if (static_cast<int>(rows->size()) == limit && !rows->empty()) next = rows->back().id;
  co_return JsonReply(200, json::object{{"data", std::move(data)}, {"next_cursor", next}});
}

net::awaitable<Reply> Reconcile(store::GovernanceService& service, const Target& t,
                                bhttp::verb method) {
  if (t.segments.size() != 1) co_return ErrorReply(NoSuchPath("reconcile/..."));
  if (method != bhttp::verb::post) co_return NotAllowed("POST");
  Result<store::ReconcileReport> report = co_await service.ReconcileNow();
  if (!report.ok()) co_return ErrorReply(report.error());
  co_return JsonReply(200, json::object{{"drift_usd", Usd(report->drift_micros)},
                                        {"scopes_corrected", report->scopes_corrected}});
}

bool TokenMatches(std::string_view authorization, const std::string& token) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size()) return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return false;
    }
  }
  std::string_view presented = authorization.substr(kBearer.size());
  while (!presented.empty() && presented.front() == ' ') presented.remove_prefix(1);
  while (!presented.empty() && presented.back() == ' ') presented.remove_suffix(1);
  return presented.size() == token.size() &&
         CRYPTO_memcmp(presented.data(), token.data(), token.size()) == 0;
}

net::awaitable<Reply> Dispatch(store::GovernanceService& service, const std::string& token,
                               const http::Request& request) {
  if (token.empty()) {
    co_return ErrorReply(
        Error{ErrorCode::kForbidden,
              "The admin API is off: start turnpike with TURNPIKE_ADMIN_TOKEN set.", ""});
  }
  auto auth = request.find(bhttp::field::authorization);
  const std::string_view presented =
      auth == request.end() ? std::string_view{} : std::string_view(auth->value());
  if (!TokenMatches(presented, token)) {
    co_return ErrorReply(Error{ErrorCode::kUnauthorized,
                               "Send the admin token as 'Authorization: Bearer <token>'.", ""});
  }
  Result<Target> target = ParseTarget(request.target());
  if (!target.ok()) co_return ErrorReply(target.error());
  const Target& t = target.value();
  const bhttp::verb method = request.method();
  const std::string_view body = request.body();
  const std::string resource = t.segments.empty() ? "" : t.segments[0];
  if (resource == "plans") co_return co_await Plans(service, t, method, body);
  if (resource == "tenants") co_return co_await Tenants(service, t, method, body);
  if (resource == "keys") co_return co_await Keys(service, t, method, body);
  if (resource == "prices") co_return co_await Prices(service, t, method, body);
  if (resource == "spend") co_return co_await Spend(service, t, method);
  if (resource == "calls") co_return co_await Calls(service, t, method);
  if (resource == "reconcile") co_return co_await Reconcile(service, t, method);
  co_return ErrorReply(NoSuchPath(request.target()));
}

}  // namespace

net::awaitable<void> AdminApi::Handle(http::Exchange& exchange) {
  Reply reply = co_await Dispatch(service_, token_, exchange.request());
  if (!reply.allow.empty()) exchange.response_headers().Add("Allow", reply.allow);
  co_await exchange.Respond(reply.status, kJson, std::move(reply.body));
}

}  // namespace turnpike::admin
