// The webhooks role's behaviour, written once and run on both engines (webhook_store_test.cc on
// SQLite, webhook_store_postgres_test.cc on PostgreSQL).
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "doors/webhooks/webhook_store.h"

namespace turnpike::webhooks::testing {

inline EndpointRow Endpoint(std::string id, std::string tenant, std::string types = "") {
  EndpointRow e;
  e.id = std::move(id);
  e.tenant = std::move(tenant);
  e.url = "http://127.0.0.1:1/hook";
  e.secret = "whsec_c2VjcmV0";
  e.event_types = std::move(types);
  e.created_at = 1'700'000'000;
  return e;
}

// Endpoints per tenant, subscriptions, enqueue, claim, retry, deliver, replay, paging.
inline void ExpectOutboxLifecycle(WebhookStore& s) {
  ASSERT_TRUE(s.CreateEndpoint(Endpoint("wh_a", "t1")).ok());
  ASSERT_TRUE(s.CreateEndpoint(Endpoint("wh_b", "t1", "budget.exceeded")).ok());
  ASSERT_TRUE(s.CreateEndpoint(Endpoint("wh_c", "t2")).ok());
  EXPECT_EQ(s.CreateEndpoint(Endpoint("wh_a", "t1")).error().code, ErrorCode::kConflict);
  EXPECT_EQ(s.ListEndpoints("t1")->size(), 2u);

  const int64_t t0 = 1'700'000'000'000;
  // wh_b is not subscribed to this one: one delivery, wh_a's.
  EXPECT_EQ(*s.Enqueue({"t1", "budget.threshold_crossed", "{\"n\":1}"}, t0), 1);
  EXPECT_EQ(*s.Enqueue({"t1", "budget.exceeded", "{\"n\":2}"}, t0 + 1), 2);
  EXPECT_EQ(*s.Enqueue({"nobody", "budget.exceeded", "{}"}, t0 + 2), 0);

  // Not yet due, then all three; a second claim within the lease finds none.
  EXPECT_TRUE(s.Claim(t0 - 1, 1000, 10)->empty());
  Result<std::vector<DueDelivery>> due = s.Claim(t0 + 5, 1000, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 3u);
  EXPECT_EQ(due->front().row.event_type, "budget.threshold_crossed");
  EXPECT_EQ(due->front().url, "http://127.0.0.1:1/hook");
  EXPECT_EQ(due->front().secret, "whsec_c2VjcmV0");
  EXPECT_TRUE(s.Claim(t0 + 6, 1000, 10)->empty());

  // One retried later, one delivered, one failed.
  const std::string retried = (*due)[0].row.id;
  ASSERT_TRUE(s.Finish({retried, false, false, t0 + 500, "HTTP 500", 1}).ok());
  ASSERT_TRUE(s.Finish({(*due)[1].row.id, true, false, 0, "", 2}).ok());
  ASSERT_TRUE(s.Finish({(*due)[2].row.id, false, true, 0, "HTTP 410", 3}).ok());
  EXPECT_TRUE(s.Claim(t0 + 499, 1000, 10)->empty());
  due = s.Claim(t0 + 500, 1000, 10);
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ(due->front().row.id, retried);
  EXPECT_EQ(due->front().row.attempts, 1);
  EXPECT_EQ(due->front().row.last_error, "HTTP 500");
  // A claim that lapses (its replica died) is claimed again, the same id.
  due = s.Claim(t0 + 1600, 1000, 10);
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ(due->front().row.id, retried);

  // A claim given back unattempted (a loop that stops) is due again at once, not counted.
  ASSERT_TRUE(s.Release(retried).ok());
  due = s.Claim(t0 + 1601, 1000, 10);
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ(due->front().row.attempts, 1);
  // Replay: another tenant cannot; the owner makes it pending again under the same id.
  const std::string delivered = s.ListDeliveries("wh_a", "", 10)->deliveries.front().id;
  EXPECT_FALSE(*s.Replay("t2", delivered, t0 + 2000));
  EXPECT_TRUE(*s.Replay("t1", delivered, t0 + 2000));
  Result<std::optional<DeliveryRow>> again = s.GetDelivery(delivered);
  EXPECT_EQ((*again)->status, "pending");
  EXPECT_EQ((*again)->attempts, 0);

  // Paging, newest first.
  for (int i = 0; i < 5; ++i) ASSERT_EQ(*s.Enqueue({"t2", "x", "{}"}, t0 + 10 + i), 1);
  Result<DeliveryPage> page = s.ListDeliveries("wh_c", "", 3);
  ASSERT_EQ(page->deliveries.size(), 3u);
  EXPECT_TRUE(page->has_more);
  Result<DeliveryPage> rest = s.ListDeliveries("wh_c", page->deliveries.back().id, 3);
  ASSERT_EQ(rest->deliveries.size(), 2u);
  EXPECT_FALSE(rest->has_more);
  EXPECT_LT(rest->deliveries.front().id, page->deliveries.back().id);

  // Deleting an endpoint takes its deliveries; another tenant cannot delete it.
  EXPECT_FALSE(*s.DeleteEndpoint("t1", "wh_c"));
  EXPECT_TRUE(*s.DeleteEndpoint("t2", "wh_c"));
  EXPECT_TRUE(s.ListDeliveries("wh_c", "", 10)->deliveries.empty());
  EXPECT_FALSE(s.GetEndpoint("wh_c")->has_value());
}

// A threshold fires once per tenant and month.
inline void ExpectAlertsOnce(WebhookStore& s) {
  EXPECT_TRUE(*s.RecordAlert("t1", "2026-12", 50, 1));
  EXPECT_FALSE(*s.RecordAlert("t1", "2026-12", 50, 2));
  EXPECT_TRUE(*s.RecordAlert("t1", "2026-12", 80, 3));
  EXPECT_TRUE(*s.RecordAlert("t1", "2027-01", 50, 4));
  EXPECT_TRUE(*s.RecordAlert("t2", "2026-12", 50, 5));
}

}  // namespace turnpike::webhooks::testing
