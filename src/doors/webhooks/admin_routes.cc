// The webhook outbox's admin resources (core/admin_route.h), all under one tenant, so that a
// tenant's admin token reaches only its own (TenantFrom::Path("id")):
//   POST   /admin/v1/tenants/{id}/webhooks                  register: {url, event_types?,
//          enabled?, secret?}; 201 with the secret, the only answer that shows it
//   GET    /admin/v1/tenants/{id}/webhooks                  the tenant's endpoints
//   GET    /admin/v1/tenants/{id}/webhooks/{wid}            one
//   DELETE /admin/v1/tenants/{id}/webhooks/{wid}            with its deliveries
//   GET    /admin/v1/tenants/{id}/webhooks/{wid}/deliveries newest first; ?limit= (1..100,
//          default 20), ?after=<delivery id> for the next page
//   POST   /admin/v1/tenants/{id}/webhook-deliveries/{did}/replay   pending again, due now, the
//          same id; 202
// Another tenant's endpoint or delivery is a 404 like a missing one.
#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <chrono>

#include "common/clock.h"
#include "doors/webhooks/delivery.h"
#include "doors/webhooks/feature.h"
#include "doors/webhooks/outbox.h"
#include "doors/webhooks/signature.h"
#include "doors/webhooks/webhook_store.h"

namespace turnpike::webhooks {
namespace net = boost::asio;
namespace json = boost::json;

namespace {

using Answer = Result<core::AdminAnswer>;
constexpr int64_t kDefaultPage = 20;
constexpr int64_t kMaxPage = 100;

Error NoEndpoint(std::string_view id) {
  return Error{ErrorCode::kNotFound, "No webhook " + std::string(id) + ".", "id"};
}

json::object EndpointObject(const EndpointRow& e) {
  json::array types;
  std::string_view rest = e.event_types;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    types.emplace_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return json::object{
      {"id", e.id},           {"object", "webhook"},  {"tenant", e.tenant},        {"url", e.url},
      {"event_types", types}, {"enabled", e.enabled}, {"created_at", e.created_at}};
}

json::object DeliveryObject(const DeliveryRow& d) {
  json::object o{{"id", d.id},
                 {"object", "webhook.delivery"},
                 {"webhook_id", d.endpoint_id},
                 {"event_type", d.event_type},
                 {"status", d.status},
                 {"attempts", d.attempts},
                 {"last_error", d.last_error},
                 {"created_at", d.created_at}};
  o["next_attempt_at"] =
      d.status == "pending" ? json::value(d.next_attempt_at / 1000) : json::value(nullptr);
  o["delivered_at"] = d.delivered_at != 0 ? json::value(d.delivered_at) : json::value(nullptr);
  boost::system::error_code ec;
  json::value payload = json::parse(d.payload, ec);
  o["payload"] = ec ? json::value(d.payload) : std::move(payload);
  return o;
}

// A job with the session's WebhookStore.
template <typename T, typename Fn>
net::awaitable<Result<T>> WithStore(store::StoreThread* store, Fn fn, store::JobLane lane) {
  auto job = [fn = std::move(fn)](store::Engine& engine) -> Result<T> {
    WebhookStore* s = engine.role<WebhookStore>();
    if (s == nullptr) return Error{ErrorCode::kInternal, "the webhooks role is missing", ""};
    return fn(*s);
  };
  co_return co_await store->Call<T>(std::move(job), lane);
}

// {url, event_types?, enabled?, secret?} -> the row to insert (id and time not set).
Result<EndpointRow> ParseCreate(std::string_view body, std::string tenant) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) {
    return Error{ErrorCode::kInvalidRequest, "The body must be a JSON object.", ""};
  }
  EndpointRow row;
  row.tenant = std::move(tenant);
  for (const json::key_value_pair& field : v.as_object()) {
    const std::string_view key = field.key();
    const json::value& value = field.value();
    if (key == "url" && value.is_string()) {
      row.url = value.as_string();
    } else if (key == "secret" && value.is_string()) {
      row.secret = value.as_string();
    } else if (key == "enabled" && value.is_bool()) {
      row.enabled = value.as_bool();
    } else if (key == "event_types" && value.is_array()) {
      for (const json::value& t : value.as_array()) {
        if (!t.is_string() || t.as_string().empty() ||
            t.as_string().find(',') != json::string::npos) {
          return Error{ErrorCode::kInvalidRequest, "event_types must be a list of event names.",
                       "event_types"};
        }
        if (!row.event_types.empty()) row.event_types += ',';
        row.event_types += t.as_string();
      }
    } else {
      return Error{ErrorCode::kInvalidRequest,
                   std::string(key) + " is not a field of a webhook or has the wrong type.",
                   std::string(key)};
    }
  }
  if (row.url.empty()) return Error{ErrorCode::kInvalidRequest, "url is required.", "url"};
  if (Status ok = CheckEndpointUrl(row.url); !ok.ok()) {
    return Error{ErrorCode::kInvalidRequest, "url: " + ok.error().message, "url"};
  }
  if (row.secret.empty()) row.secret = MintSecret();
  return row;
}

net::awaitable<Answer> Create(store::StoreThread* store, std::string tenant, std::string body) {
  Result<EndpointRow> row = ParseCreate(body, std::move(tenant));
  if (!row.ok()) co_return row.error();
  row->id = "wh_" + MintDeliveryId(0).substr(16);  // 16 random hex digits
  row->created_at = UnixSeconds();
  auto put = [r = *row](WebhookStore& s) -> Result<bool> {
    Status done = s.CreateEndpoint(r);
    if (!done.ok()) return done.error();
    return true;
  };
  const Result<bool> done =
      co_await WithStore<bool>(store, std::move(put), store::JobLane::kControl);
  if (!done.ok()) co_return done.error();
  json::object o = EndpointObject(*row);
  o["secret"] = row->secret;
  co_return core::AdminAnswer{201, json::serialize(o)};
}

net::awaitable<Answer> List(store::StoreThread* store, std::string tenant) {
  auto read = [tenant](WebhookStore& s) { return s.ListEndpoints(tenant); };
  const Result<std::vector<EndpointRow>> rows =
      co_await WithStore<std::vector<EndpointRow>>(store, std::move(read), store::JobLane::kRead);
  if (!rows.ok()) co_return rows.error();
  json::array data;
  for (const EndpointRow& e : *rows) data.push_back(EndpointObject(e));
  co_return core::AdminAnswer{200,
                              json::serialize(json::object{{"object", "list"}, {"data", data}})};
}

// The tenant's endpoint `id`, or nullopt.
net::awaitable<Result<std::optional<EndpointRow>>> Find(store::StoreThread* store,
                                                        std::string tenant, std::string id) {
  auto read = [id](WebhookStore& s) { return s.GetEndpoint(id); };
  Result<std::optional<EndpointRow>> row =
      co_await WithStore<std::optional<EndpointRow>>(store, std::move(read), store::JobLane::kRead);
  if (row.ok() && row->has_value() && (*row)->tenant != tenant) {
    co_return std::optional<EndpointRow>();
  }
  co_return row;
}

net::awaitable<Answer> One(store::StoreThread* store, core::Verb method, std::string tenant,
                           std::string id) {
  if (method == core::Verb::delete_) {
    auto erase = [tenant, id](WebhookStore& s) { return s.DeleteEndpoint(tenant, id); };
    const Result<bool> gone =
        co_await WithStore<bool>(store, std::move(erase), store::JobLane::kControl);
    if (!gone.ok()) co_return gone.error();
    if (!*gone) co_return NoEndpoint(id);
    co_return core::AdminAnswer{
        200, json::serialize(json::object{{"id", id}, {"object", "webhook"}, {"deleted", true}})};
  }
  const Result<std::optional<EndpointRow>> row = co_await Find(store, tenant, id);
  if (!row.ok()) co_return row.error();
  if (!row->has_value()) co_return NoEndpoint(id);
  co_return core::AdminAnswer{200, json::serialize(EndpointObject(**row))};
}

net::awaitable<Answer> Deliveries(store::StoreThread* store, std::string tenant, std::string id,
                                  std::string after, std::string limit_text) {
  int64_t limit = kDefaultPage;
  if (!limit_text.empty()) {
    const auto [end, ec] =
        std::from_chars(limit_text.data(), limit_text.data() + limit_text.size(), limit);
    if (ec != std::errc() || end != limit_text.data() + limit_text.size() || limit < 1 ||
        limit > kMaxPage) {
      co_return Error{ErrorCode::kInvalidRequest, "limit must be an integer from 1 to 100.",
                      "limit"};
    }
  }
  const Result<std::optional<EndpointRow>> row = co_await Find(store, tenant, id);
  if (!row.ok()) co_return row.error();
  if (!row->has_value()) co_return NoEndpoint(id);
  auto read = [id, after, limit](WebhookStore& s) { return s.ListDeliveries(id, after, limit); };
  const Result<DeliveryPage> page =
      co_await WithStore<DeliveryPage>(store, std::move(read), store::JobLane::kRead);
  if (!page.ok()) co_return page.error();
  json::array data;
  for (const DeliveryRow& d : page->deliveries) data.push_back(DeliveryObject(d));
  json::object o{{"object", "list"}, {"data", data}, {"has_more", page->has_more}};
  o["last_id"] =
      page->deliveries.empty() ? json::value(nullptr) : json::value(page->deliveries.back().id);
  co_return core::AdminAnswer{200, json::serialize(o)};
}

net::awaitable<Answer> Replay(store::StoreThread* store, Outbox* outbox, std::string tenant,
                              std::string id) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  auto replay = [tenant, id, now_ms](WebhookStore& s) { return s.Replay(tenant, id, now_ms); };
  const Result<bool> done =
      co_await WithStore<bool>(store, std::move(replay), store::JobLane::kControl);
  if (!done.ok()) co_return done.error();
  if (!*done) co_return Error{ErrorCode::kNotFound, "No webhook delivery " + id + ".", "id"};
  outbox->Wake();
  co_return core::AdminAnswer{
      202, json::serialize(
               json::object{{"id", id}, {"object", "webhook.delivery"}, {"status", "pending"}})};
}

}  // namespace

std::vector<core::AdminRoute> WebhookAdminRoutes(Outbox& outbox) {
  using core::Verb;
  store::StoreThread* store = &outbox.store();
  Outbox* o = &outbox;
  const std::string base = "/admin/v1/tenants/{id}/webhooks";
  std::vector<core::AdminRoute> out;
  out.push_back(
      {base, {Verb::post}, core::TenantFrom::Path("id"), [store](const core::AdminCall& call) {
         return Create(store, call.tenant, std::string(call.body));
       }});
  out.push_back(
      {base, {Verb::get}, core::TenantFrom::Path("id"), [store](const core::AdminCall& call) {
         return List(store, call.tenant);
       }});
  const Verb methods[] = {Verb::get, Verb::delete_};
  for (Verb method : methods) {
    out.push_back({base + "/{wid}",
                   {method},
                   core::TenantFrom::Path("id"),
                   [store, method](const core::AdminCall& call) {
                     return One(store, method, call.tenant, std::string(call.Param("wid")));
                   }});
  }
  out.push_back({base + "/{wid}/deliveries",
                 {Verb::get},
                 core::TenantFrom::Path("id"),
                 [store](const core::AdminCall& call) {
                   return Deliveries(store, call.tenant, std::string(call.Param("wid")),
                                     std::string(call.Query("after")),
                                     std::string(call.Query("limit")));
                 }});
  out.push_back({"/admin/v1/tenants/{id}/webhook-deliveries/{did}/replay",
                 {Verb::post},
                 core::TenantFrom::Path("id"),
                 [store, o](const core::AdminCall& call) {
                   return Replay(store, o, call.tenant, std::string(call.Param("did")));
                 }});
  return out;
}

}  // namespace turnpike::webhooks
