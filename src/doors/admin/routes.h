// The governance resources of the admin API and what their handlers share (internal to admin/).
// Each handler answers one route (pattern + methods) of core::AdminRoute: it gets the call
// (decoded path and query parameters, the body) and returns the answer or an Error; the door
// (admin_api.h) has authenticated the request and taken the method before.
//
//   tenant_routes.cc  plans, tenants        key_routes.cc    keys, prices
//   usage_routes.cc   spend (monthly, daily), calls, reconcile
//   token_routes.cc   tenants' admin tokens
//   security_routes.cc  tenants' provider keys (BYOK), the audit log
//   governance_routes.cc   the table: every pattern, its methods, its tenant and its handler
//
// Errors: an Error value, which the door renders in the admin envelope with the field named.
// Thread safety: pure functions over the GovernanceService, which is thread-safe.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "control/governance_service.h"
#include "core/admin_route.h"

namespace turnpike::doors::admin {

inline constexpr double kMicros = 1'000'000;

using core::AdminAnswer;
using core::AdminCall;
using Answer = boost::asio::awaitable<Result<AdminAnswer>>;
using Service = control::GovernanceService;

// A 400 naming `field`.
Error Bad(std::string message, std::string field);
Result<AdminAnswer> JsonAnswer(unsigned status, const boost::json::value& value);
Error NoSuchPath(std::string_view path);
// The 404 for an object that does not exist, or that the caller may not see: "No key abc." Every
// admin route's not-found is this one, so that the two cannot be told apart (tenant_scope.h).
Error NoSuch(std::string_view noun, std::string_view id);

boost::json::value Usd(int64_t micros);
boost::json::value OptionalUsd(const std::optional<int64_t>& micros);
boost::json::value OptionalInt(const std::optional<int64_t>& v);
boost::json::array Strings(const std::vector<std::string>& items);

// The request body as a JSON object (an empty body is {}), or a 400.
Result<boost::json::object> ParseObject(std::string_view body);
// 1-64 of A-Z a-z 0-9 - _ .
bool ValidId(std::string_view id);
// The call's Idempotency-Key: absent (""), or 1-255 visible ASCII characters; else a 400.
Result<std::string> IdempotencyKey(const AdminCall& call);

// The governance resources' routes (admin_api.h documents the API).
std::vector<core::AdminRoute> GovernanceRoutes(Service& service);

// The virtual key `id` (not an admin token), or nullptr.
const governance::KeyEntry* FindVirtualKey(const governance::GovernanceSnapshot& snapshot,
                                           std::string_view id);

Answer ListPlans(Service& service, const AdminCall& call);
Answer PutPlan(Service& service, const AdminCall& call);
Answer ListTenants(Service& service, const AdminCall& call);
Answer CreateTenant(Service& service, const AdminCall& call);
Answer GetTenant(Service& service, const AdminCall& call);
Answer UpdateTenant(Service& service, const AdminCall& call);
Answer ListKeys(Service& service, const AdminCall& call);
Answer CreateKey(Service& service, const AdminCall& call);
Answer GetKey(Service& service, const AdminCall& call);
Answer RevokeKey(Service& service, const AdminCall& call);
Answer DeleteKey(Service& service, const AdminCall& call);
Answer ListAdminTokens(Service& service, const AdminCall& call);
Answer CreateAdminToken(Service& service, const AdminCall& call);
Answer RevokeAdminToken(Service& service, const AdminCall& call);
Answer ListPrices(Service& service, const AdminCall& call);
Answer PutPrice(Service& service, const AdminCall& call);
Answer DeletePrice(Service& service, const AdminCall& call);
Answer Spend(Service& service, const AdminCall& call);
Answer DailySpend(Service& service, const AdminCall& call);
Answer Calls(Service& service, const AdminCall& call);
Answer Reconcile(Service& service, const AdminCall& call);
Answer ListProviderKeys(Service& service, const AdminCall& call);
Answer PutProviderKey(Service& service, const AdminCall& call);
Answer DeleteProviderKey(Service& service, const AdminCall& call);
Answer RotateProviderKeys(Service& service, const AdminCall& call);
Answer ListAudit(Service& service, const AdminCall& call);

}  // namespace turnpike::doors::admin
