// The role's statements are written once, with `?` parameters in order, and run on either
// engine through store::SqlSession (a portable role, store/role.h).
#include "doors/webhooks/webhook_store.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>

namespace turnpike::webhooks {

namespace {

constexpr std::array<std::string_view, 1> kSqlite = {
    "CREATE TABLE webhook_endpoints (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "url TEXT NOT NULL, secret TEXT NOT NULL, event_types TEXT NOT NULL, "
    "enabled INTEGER NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant_id, id);"
    "CREATE TABLE webhook_deliveries (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, "
    "tenant_id TEXT NOT NULL, event_type TEXT NOT NULL, payload TEXT NOT NULL, "
    "status TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, "
    "claimed_until INTEGER NOT NULL, last_error TEXT NOT NULL, created_at INTEGER NOT NULL, "
    "delivered_at INTEGER);"
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);"
    "CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);"
    "CREATE TABLE budget_alerts (tenant_id TEXT NOT NULL, month TEXT NOT NULL, "
    "threshold INTEGER NOT NULL, fired_at INTEGER NOT NULL, "
    "PRIMARY KEY (tenant_id, month, threshold))"};
constexpr std::array<std::string_view, 1> kPostgres = {
    "CREATE TABLE webhook_endpoints (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, "
    "url TEXT NOT NULL, secret TEXT NOT NULL, event_types TEXT NOT NULL, "
    "enabled BIGINT NOT NULL, created_at BIGINT NOT NULL);"
    "CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant_id, id);"
    "CREATE TABLE webhook_deliveries (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, "
    "tenant_id TEXT NOT NULL, event_type TEXT NOT NULL, payload TEXT NOT NULL, "
    "status TEXT NOT NULL, attempts BIGINT NOT NULL, next_attempt_at BIGINT NOT NULL, "
    "claimed_until BIGINT NOT NULL, last_error TEXT NOT NULL, created_at BIGINT NOT NULL, "
    "delivered_at BIGINT);"
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);"
    "CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);"
    "CREATE TABLE budget_alerts (tenant_id TEXT NOT NULL, month TEXT NOT NULL, "
    "threshold BIGINT NOT NULL, fired_at BIGINT NOT NULL, "
    "PRIMARY KEY (tenant_id, month, threshold))"};
constexpr std::array<std::string_view, 2> kPurposes = {"webhook_read", "webhook_write"};

// Parameters and result columns are listed beside each statement, in order.
// id, tenant_id, url, secret, event_types, enabled, created_at.
constexpr std::string_view kInsertEndpoint =
    "INSERT INTO webhook_endpoints (id, tenant_id, url, secret, event_types, enabled, "
    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
// tenant -> endpoint columns.
constexpr std::string_view kListEndpoints =
    "SELECT id, tenant_id, url, secret, event_types, enabled, created_at FROM webhook_endpoints "
    "WHERE tenant_id = ? ORDER BY id";
// id -> endpoint columns.
constexpr std::string_view kSelectEndpoint =
    "SELECT id, tenant_id, url, secret, event_types, enabled, created_at FROM webhook_endpoints "
    "WHERE id = ?";
// tenant, id -> id.
constexpr std::string_view kDeleteEndpoint =
    "DELETE FROM webhook_endpoints WHERE tenant_id = ? AND id = ? RETURNING id";
// endpoint id.
constexpr std::string_view kDeleteDeliveries =
    "DELETE FROM webhook_deliveries WHERE endpoint_id = ?";
// tenant -> id, event_types: the enabled endpoints.
constexpr std::string_view kEnabledEndpoints =
    "SELECT id, event_types FROM webhook_endpoints WHERE tenant_id = ? AND enabled = 1";
// id, endpoint_id, tenant_id, event_type, payload, next_attempt_at, created_at.
constexpr std::string_view kInsertDelivery =
    "INSERT INTO webhook_deliveries (id, endpoint_id, tenant_id, event_type, payload, status, "
    "attempts, next_attempt_at, claimed_until, last_error, created_at) "
    "VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, 0, '', ?)";
// tenant, month, threshold, fired_at -> tenant_id when inserted.
constexpr std::string_view kInsertAlert =
    "INSERT INTO budget_alerts (tenant_id, month, threshold, fired_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT DO NOTHING RETURNING tenant_id";
// until, now, now, limit, now, now -> delivery columns. The outer WHERE repeats the test so that
// a concurrent claimer re-checking a locked row skips it (see the header).
constexpr std::string_view kClaim =
    "UPDATE webhook_deliveries SET claimed_until = ? WHERE id IN (SELECT id FROM "
    "webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? AND claimed_until <= ? "
    "ORDER BY next_attempt_at LIMIT ?) AND status = 'pending' AND next_attempt_at <= ? AND "
    "claimed_until <= ? RETURNING id, endpoint_id, tenant_id, event_type, payload, status, "
    "attempts, next_attempt_at, last_error, created_at, delivered_at";
// The earliest time a pending row is due (claimed rows: when their claim lapses).
constexpr std::string_view kNextDue =
    "SELECT MIN(CASE WHEN claimed_until > next_attempt_at THEN claimed_until "
    "ELSE next_attempt_at END) FROM webhook_deliveries WHERE status = 'pending'";
// delivered_at, id.
constexpr std::string_view kDelivered =
    "UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, "
    "delivered_at = ?, last_error = '', claimed_until = 0 WHERE id = ?";
// status, next_attempt_at, last_error, id.
constexpr std::string_view kRetried =
    "UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?, "
    "last_error = ?, claimed_until = 0 WHERE id = ?";
// id: a claim given back unattempted.
constexpr std::string_view kRelease =
    "UPDATE webhook_deliveries SET claimed_until = 0 WHERE id = ? AND status = 'pending'";
// endpoint, after, after, limit -> delivery columns, newest first.
constexpr std::string_view kListDeliveries =
    "SELECT id, endpoint_id, tenant_id, event_type, payload, status, attempts, next_attempt_at, "
    "last_error, created_at, delivered_at FROM webhook_deliveries WHERE endpoint_id = ? AND "
    "(? = '' OR id < ?) ORDER BY id DESC LIMIT ?";
// id -> delivery columns.
constexpr std::string_view kSelectDelivery =
    "SELECT id, endpoint_id, tenant_id, event_type, payload, status, attempts, next_attempt_at, "
    "last_error, created_at, delivered_at FROM webhook_deliveries WHERE id = ?";
// now_ms, tenant, id -> id.
constexpr std::string_view kReplay =
    "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, "
    "claimed_until = 0, last_error = '', delivered_at = NULL WHERE tenant_id = ? AND id = ? "
    "RETURNING id";

std::vector<EndpointRow> EndpointsOf(const store::SqlRows& rows) {
  std::vector<EndpointRow> out;
  out.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    out.push_back({rows.Text(r, 0), rows.Text(r, 1), rows.Text(r, 2), rows.Text(r, 3),
                   rows.Text(r, 4), rows.Int(r, 5) != 0, rows.Int(r, 6)});
  }
  return out;
}

std::vector<DeliveryRow> DeliveriesOf(const store::SqlRows& rows) {
  std::vector<DeliveryRow> out;
  out.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    out.push_back({rows.Text(r, 0), rows.Text(r, 1), rows.Text(r, 2), rows.Text(r, 3),
                   rows.Text(r, 4), rows.Text(r, 5), rows.Int(r, 6), rows.Int(r, 7),
                   rows.Text(r, 8), rows.Int(r, 9), rows.Int(r, 10)});
  }
  return out;
}

}  // namespace

bool Subscribed(std::string_view event_types, std::string_view type) {
  if (event_types.empty()) return true;
  size_t start = 0;
  while (start <= event_types.size()) {
    size_t end = event_types.find(',', start);
    if (end == std::string_view::npos) end = event_types.size();
    const std::string_view one = event_types.substr(start, end - start);
    if (one == type || one == "*") return true;
    start = end + 1;
  }
  return false;
}

std::string MintDeliveryId(int64_t now_ms) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char text[48];
  std::snprintf(text, sizeof text, "whd_%012llx%016llx", static_cast<unsigned long long>(now_ms),
                static_cast<unsigned long long>(rng()));
  return text;
}

WebhookStore::WebhookStore(std::unique_ptr<store::SqlSession> session, store::RoleOps ops)
    : sql_(std::move(session)), read_(ops[0]), write_(ops[1]) {}
WebhookStore::~WebhookStore() = default;

Status WebhookStore::CreateEndpoint(const EndpointRow& row) {
  Result<store::SqlRows> done =
      sql_->Run(kInsertEndpoint,
                {std::string_view(row.id), std::string_view(row.tenant), std::string_view(row.url),
                 std::string_view(row.secret), std::string_view(row.event_types),
                 int64_t{row.enabled ? 1 : 0}, row.created_at},
                write_);
  if (!done.ok()) return done.error();
  return Ok{};
}

Result<std::vector<EndpointRow>> WebhookStore::ListEndpoints(std::string_view tenant) {
  Result<store::SqlRows> rows = sql_->Run(kListEndpoints, {tenant}, read_);
  if (!rows.ok()) return rows.error();
  return EndpointsOf(*rows);
}

Result<std::optional<EndpointRow>> WebhookStore::GetEndpoint(std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kSelectEndpoint, {id}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<EndpointRow> found = EndpointsOf(*rows);
  if (found.empty()) return std::optional<EndpointRow>();
  return std::optional<EndpointRow>(std::move(found.front()));
}

Result<bool> WebhookStore::DeleteEndpoint(std::string_view tenant, std::string_view id) {
  return store::InTransaction<bool>(*sql_, [&]() -> Result<bool> {
    Result<store::SqlRows> rows = sql_->Run(kDeleteEndpoint, {tenant, id}, write_);
    if (!rows.ok()) return rows.error();
    if (rows->size() == 0) return false;
    Result<store::SqlRows> deliveries = sql_->Run(kDeleteDeliveries, {id}, write_);
    if (!deliveries.ok()) return deliveries.error();
    return true;
  });
}

Result<int64_t> WebhookStore::Enqueue(const NewEvent& event, int64_t now_ms) {
  Result<store::SqlRows> endpoints =
      sql_->Run(kEnabledEndpoints, {std::string_view(event.tenant)}, read_);
  if (!endpoints.ok()) return endpoints.error();
  if (endpoints->size() == 0) return int64_t{0};
  const int64_t now = now_ms / 1000;
  return store::InTransaction<int64_t>(*sql_, [&]() -> Result<int64_t> {
    int64_t queued = 0;
    for (size_t r = 0; r < endpoints->size(); ++r) {
      if (!Subscribed(endpoints->Text(r, 1), event.event_type)) continue;
      const std::string id = MintDeliveryId(now_ms);
      Result<store::SqlRows> done =
          sql_->Run(kInsertDelivery,
                    {std::string_view(id), std::string_view(endpoints->Text(r, 0)),
                     std::string_view(event.tenant), std::string_view(event.event_type),
                     std::string_view(event.payload), now_ms, now},
                    write_);
      if (!done.ok()) return done.error();
      ++queued;
    }
    return queued;
  });
}

Result<bool> WebhookStore::RecordAlert(std::string_view tenant, std::string_view month,
                                       int64_t threshold, int64_t now) {
  Result<store::SqlRows> rows = sql_->Run(kInsertAlert, {tenant, month, threshold, now}, write_);
  if (!rows.ok()) return rows.error();
  return rows->size() > 0;
}

Result<std::vector<DueDelivery>> WebhookStore::Claim(int64_t now_ms, int64_t lease_ms,
                                                     int64_t limit) {
  Result<store::SqlRows> rows =
      sql_->Run(kClaim, {now_ms + lease_ms, now_ms, now_ms, limit, now_ms, now_ms}, write_);
  if (!rows.ok()) return rows.error();
  std::vector<DueDelivery> due;
  std::vector<EndpointRow> endpoints;  // read once each
  for (DeliveryRow& row : DeliveriesOf(*rows)) {
    const EndpointRow* endpoint = nullptr;
    for (const EndpointRow& e : endpoints) {
      if (e.id == row.endpoint_id) endpoint = &e;
    }
    if (endpoint == nullptr) {
      Result<std::optional<EndpointRow>> read = GetEndpoint(row.endpoint_id);
      if (!read.ok()) return read.error();
      if (!read->has_value()) continue;  // deleted meanwhile: its deliveries go with it
      endpoints.push_back(std::move(**read));
      endpoint = &endpoints.back();
    }
    DueDelivery d;
    d.url = endpoint->url;
    d.secret = endpoint->secret;
    d.row = std::move(row);
    due.push_back(std::move(d));
  }
  // Oldest due first (RETURNING keeps no order).
  std::sort(due.begin(), due.end(), [](const DueDelivery& a, const DueDelivery& b) {
    return a.row.next_attempt_at != b.row.next_attempt_at
               ? a.row.next_attempt_at < b.row.next_attempt_at
               : a.row.id < b.row.id;
  });
  return due;
}

Result<std::optional<int64_t>> WebhookStore::NextDue() {
  Result<store::SqlRows> rows = sql_->Run(kNextDue, {}, read_);
  if (!rows.ok()) return rows.error();
  if (rows->size() == 0 || rows->Text(0, 0).empty()) return std::optional<int64_t>();  // NULL
  return std::optional<int64_t>(rows->Int(0, 0));
}

Status WebhookStore::Finish(const AttemptResult& result) {
  Result<store::SqlRows> done =
      result.delivered ? sql_->Run(kDelivered, {result.now, std::string_view(result.id)}, write_)
                       : sql_->Run(kRetried,
                                   {std::string_view(result.give_up ? "failed" : "pending"),
                                    result.next_attempt_at, std::string_view(result.error),
                                    std::string_view(result.id)},
                                   write_);
  if (!done.ok()) return done.error();
  return Ok{};
}

Status WebhookStore::Release(std::string_view id) {
  Result<store::SqlRows> done = sql_->Run(kRelease, {id}, write_);
  if (!done.ok()) return done.error();
  return Ok{};
}

Result<DeliveryPage> WebhookStore::ListDeliveries(std::string_view endpoint, std::string_view after,
                                                  int64_t limit) {
  Result<store::SqlRows> rows =
      sql_->Run(kListDeliveries, {endpoint, after, after, limit + 1}, read_);
  if (!rows.ok()) return rows.error();
  DeliveryPage page;
  page.deliveries = DeliveriesOf(*rows);
  if (static_cast<int64_t>(page.deliveries.size()) > limit) {
    page.deliveries.resize(static_cast<size_t>(limit));
    page.has_more = true;
  }
  return page;
}

Result<std::optional<DeliveryRow>> WebhookStore::GetDelivery(std::string_view id) {
  Result<store::SqlRows> rows = sql_->Run(kSelectDelivery, {id}, read_);
  if (!rows.ok()) return rows.error();
  std::vector<DeliveryRow> found = DeliveriesOf(*rows);
  if (found.empty()) return std::optional<DeliveryRow>();
  return std::optional<DeliveryRow>(std::move(found.front()));
}

Result<bool> WebhookStore::Replay(std::string_view tenant, std::string_view id, int64_t now_ms) {
  Result<store::SqlRows> rows = sql_->Run(kReplay, {now_ms, tenant, id}, write_);
  if (!rows.ok()) return rows.error();
  return rows->size() > 0;
}

store::RoleSpec WebhooksRole() {
  store::RoleSpec spec;
  spec.schema = {"webhooks", {kSqlite, {}}, {kPostgres, {}}, kPurposes};
  spec.portable = [](std::unique_ptr<store::SqlSession> session,
                     store::RoleOps ops) -> std::unique_ptr<store::Role> {
    return std::make_unique<WebhookStore>(std::move(session), ops);
  };
  return spec;
}

}  // namespace turnpike::webhooks
