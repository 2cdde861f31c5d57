// The webhook outbox's store role ("webhooks", store/role.h): endpoints, deliveries and the
// budget alerts already fired, on both engines from one set of statements (a portable role over
// store::SqlSession), with the purposes webhook_read and webhook_write counted in
// turnpike_store_statements_total{op}.
//
// Tables (created_at, delivered_at, fired_at: unix seconds; next_attempt_at, claimed_until:
// unix milliseconds; JSON as text):
//   webhook_endpoints   id -> tenant_id, url, secret, event_types (comma-separated; "" = every
//                       event), enabled, created_at. The secret is kept as given, not hashed:
//                       every attempt signs with it (HMAC needs the key itself, unlike an API
//                       key, which is only compared), so it must be recoverable; the database's
//                       own access control protects it, as it does the call log's bodies.
//   webhook_deliveries  id -> endpoint_id, tenant_id, event_type, payload, status (pending,
//                       delivered, failed), attempts, next_attempt_at, claimed_until,
//                       last_error, created_at, delivered_at. Ids sort by creation ("whd_" + the
//                       creation millisecond in hex + random), so a page is an id range.
//   budget_alerts       (tenant_id, month, threshold) -> fired_at: a threshold fires once a
//                       month per tenant, fleet-wide: the first replica's insert wins, another's
//                       is a no-op (RecordAlert answers false).
//
// Claims (fleet-safe): Claim sets claimed_until = now + lease on at most `limit` pending rows
// that are due and not claimed, in one UPDATE whose outer WHERE repeats the due-and-unclaimed
// test; on PostgreSQL a second replica's concurrent UPDATE waits on the row lock, re-checks that
// test on the row as the first one left it (READ COMMITTED re-evaluation) and skips it, so two
// replicas never send one delivery at once. A replica that dies holding a claim lets it lapse:
// the row is due again after the lease (at-least-once, the same delivery id).
//
// Threads: a WebhookStore is one engine session's, used only on its store thread (reached in a
// job with engine.role<WebhookStore>()). Errors: the engine's (kInternal, kUnavailable,
// kConflict for a duplicate id).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/role.h"
#include "store/sql_session.h"

namespace turnpike::webhooks {

struct EndpointRow {
  std::string id;
  std::string tenant;
  std::string url;
  std::string secret;
  std::string event_types;  // comma-separated; "" = every event
  bool enabled = true;
  int64_t created_at = 0;
};

struct DeliveryRow {
  std::string id;
  std::string endpoint_id;
  std::string tenant;
  std::string event_type;
  std::string payload;
  std::string status;
  int64_t attempts = 0;
  int64_t next_attempt_at = 0;  // ms
  std::string last_error;
  int64_t created_at = 0;
  int64_t delivered_at = 0;  // 0: not delivered
};

struct DeliveryPage {
  std::vector<DeliveryRow> deliveries;
  bool has_more = false;
};

// A claimed delivery with what sending it needs.
struct DueDelivery {
  DeliveryRow row;
  std::string url;
  std::string secret;
};

// An attempt's outcome, written by Finish.
struct AttemptResult {
  std::string id;
  bool delivered = false;
  bool give_up = false;         // not delivered and no attempt left: failed
  int64_t next_attempt_at = 0;  // ms, when retried
  std::string error;            // "" when delivered
  int64_t now = 0;              // seconds
};

// One event for a tenant's endpoints (Enqueue).
struct NewEvent {
  std::string tenant;
  std::string event_type;
  std::string payload;  // the JSON body sent
};

// Whether `event_types` (comma-separated, "" = all) includes `type`.
bool Subscribed(std::string_view event_types, std::string_view type);

// A delivery id: "whd_" + 12 hex digits of `now_ms` + 16 random hex digits.
std::string MintDeliveryId(int64_t now_ms);

class WebhookStore final : public store::Role {
 public:
  WebhookStore(std::unique_ptr<store::SqlSession> session, store::RoleOps ops);
  ~WebhookStore() override;

  Status CreateEndpoint(const EndpointRow& row);
  Result<std::vector<EndpointRow>> ListEndpoints(std::string_view tenant);
  Result<std::optional<EndpointRow>> GetEndpoint(std::string_view id);
  // Deletes the endpoint of `tenant` and its deliveries; false when there is none.
  Result<bool> DeleteEndpoint(std::string_view tenant, std::string_view id);

  // One delivery per enabled endpoint of the tenant subscribed to the event, due at `now_ms`;
  // one read and one insert per delivery, in one transaction. How many were queued.
  Result<int64_t> Enqueue(const NewEvent& event, int64_t now_ms);
  // Inserts (tenant, month, threshold) unless it exists; true if this call inserted it.
  Result<bool> RecordAlert(std::string_view tenant, std::string_view month, int64_t threshold,
                           int64_t now);

  // Claims up to `limit` due deliveries until now_ms + lease_ms (see above), with their
  // endpoint's url and secret (one read per distinct endpoint); oldest due first.
  Result<std::vector<DueDelivery>> Claim(int64_t now_ms, int64_t lease_ms, int64_t limit);
  // When the next pending delivery falls due (its next attempt, or the end of its claim,
  // whichever is later; unix ms); nullopt when none is pending. The delivery loop sleeps
  // until then instead of polling.
  Result<std::optional<int64_t>> NextDue();
  // Records an attempt: delivered, retried at next_attempt_at, or failed; the claim ends.
  Status Finish(const AttemptResult& result);
  // Ends the claim of a delivery not attempted (the loop is stopping): due again at once.
  Status Release(std::string_view id);

  // An endpoint's deliveries, newest first, after the id `after` ("" from the newest).
  Result<DeliveryPage> ListDeliveries(std::string_view endpoint, std::string_view after,
                                      int64_t limit);
  Result<std::optional<DeliveryRow>> GetDelivery(std::string_view id);
  // The tenant's delivery becomes pending again, due at now_ms, its attempts reset; the same id
  // (receivers deduplicate by it). False when the tenant has no such delivery.
  Result<bool> Replay(std::string_view tenant, std::string_view id, int64_t now_ms);

 private:
  std::unique_ptr<store::SqlSession> sql_;
  const store::StoreOp read_;   // webhook_read
  const store::StoreOp write_;  // webhook_write
};

// The role as app/ registers it.
store::RoleSpec WebhooksRole();

}  // namespace turnpike::webhooks
