// The governance records' statements, one text for every engine: the dialects agree on these
// (INSERT ... ON CONFLICT ... DO UPDATE SET col = excluded.col, UPDATE/DELETE ... RETURNING).
// Parameters are written `?` in order; an engine whose driver numbers them ($1, $2, ...) turns
// them into its form once (postgres/pg.h, Numbered). Each statement's parameters and result
// columns are listed next to it; an engine binds and reads them in that order.
//
// Values the engines store the same way: allowed-model lists as one text of names joined by
// newlines (JoinModels/SplitModels), statuses as the words below, booleans as 0/1 integers,
// times as unix seconds.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "governance/snapshot.h"

namespace turnpike::store::sql {

// Result: id, monthly_budget_micros, rpm, tpm, allowed_models, max_request_cost_micros,
// search_query_price_micros, fail_open, cache, cache_scope, cache_tool_calls,
// cache_semantic_bp, budget_alerts.
inline constexpr std::string_view kSelectPlans =
    "SELECT id, monthly_budget_micros, rpm, tpm, allowed_models, max_request_cost_micros, "
    "search_query_price_micros, fail_open, cache, cache_scope, cache_tool_calls, "
    "cache_semantic_bp, budget_alerts FROM plans ORDER BY id";
// Result: id, name, status, plan_id, log_bodies, created_at.
inline constexpr std::string_view kSelectTenants =
    "SELECT id, name, status, plan_id, log_bodies, created_at FROM tenants ORDER BY id";
// Result: public_id, tenant_id, name, secret_sha256, status, expires_at, monthly_budget_micros,
// rpm, tpm, allowed_models, created_at, kind, cache_off.
inline constexpr std::string_view kSelectKeys =
    "SELECT public_id, tenant_id, name, secret_sha256, status, expires_at, "
    "monthly_budget_micros, rpm, tpm, allowed_models, created_at, kind, cache_off FROM api_keys "
    "ORDER BY public_id";
// Result: model, input, output, cached_input, max_output_tokens, updated_at, cache_write,
// reasoning.
inline constexpr std::string_view kSelectPrices =
    "SELECT model, input_micros_per_mtok, output_micros_per_mtok, "
    "cached_input_micros_per_mtok, max_output_tokens, updated_at, "
    "cache_write_micros_per_mtok, reasoning_micros_per_mtok FROM prices ORDER BY model";

// id, monthly_budget_micros, rpm, tpm, allowed_models, max_request_cost_micros, updated_at,
// search_query_price_micros, fail_open, cache, cache_scope, cache_tool_calls,
// cache_semantic_bp, budget_alerts.
inline constexpr std::string_view kUpsertPlan =
    "INSERT INTO plans (id, monthly_budget_micros, rpm, tpm, allowed_models, "
    "max_request_cost_micros, updated_at, search_query_price_micros, fail_open, cache, "
    "cache_scope, cache_tool_calls, cache_semantic_bp, budget_alerts) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET monthly_budget_micros = excluded.monthly_budget_micros, "
    "rpm = excluded.rpm, tpm = excluded.tpm, allowed_models = excluded.allowed_models, "
    "max_request_cost_micros = excluded.max_request_cost_micros, "
    "updated_at = excluded.updated_at, "
    "search_query_price_micros = excluded.search_query_price_micros, "
    "fail_open = excluded.fail_open, cache = excluded.cache, cache_scope = excluded.cache_scope, "
    "cache_tool_calls = excluded.cache_tool_calls, cache_semantic_bp = excluded.cache_semantic_bp, "
    "budget_alerts = excluded.budget_alerts";
// id, name, status, plan_id, log_bodies, created_at, updated_at.
inline constexpr std::string_view kInsertTenant =
    "INSERT INTO tenants (id, name, status, plan_id, log_bodies, created_at, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)";
// name, status, plan_id, log_bodies, updated_at, id. Returns a row when the tenant exists.
inline constexpr std::string_view kUpdateTenant =
    "UPDATE tenants SET name = ?, status = ?, plan_id = ?, log_bodies = ?, updated_at = ? "
    "WHERE id = ? RETURNING id";
// public_id, tenant_id, name, secret_sha256, status, expires_at, monthly_budget_micros, rpm,
// tpm, allowed_models, created_at, kind, cache_off.
inline constexpr std::string_view kInsertKey =
    "INSERT INTO api_keys (public_id, tenant_id, name, secret_sha256, status, expires_at, "
    "monthly_budget_micros, rpm, tpm, allowed_models, created_at, kind, cache_off) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
// status, revoked_at (NULL unless revoked), public_id. Returns a row when the key exists.
inline constexpr std::string_view kSetKeyStatus =
    "UPDATE api_keys SET status = ?, revoked_at = ? WHERE public_id = ? RETURNING public_id";
// model, input, output, cached_input, max_output_tokens, updated_at, cache_write (NULL: as
// input), reasoning (NULL: as output).
inline constexpr std::string_view kUpsertPrice =
    "INSERT INTO prices (model, input_micros_per_mtok, output_micros_per_mtok, "
    "cached_input_micros_per_mtok, max_output_tokens, updated_at, cache_write_micros_per_mtok, "
    "reasoning_micros_per_mtok) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (model) DO UPDATE SET input_micros_per_mtok = excluded.input_micros_per_mtok, "
    "output_micros_per_mtok = excluded.output_micros_per_mtok, "
    "cached_input_micros_per_mtok = excluded.cached_input_micros_per_mtok, "
    "max_output_tokens = excluded.max_output_tokens, updated_at = excluded.updated_at, "
    "cache_write_micros_per_mtok = excluded.cache_write_micros_per_mtok, "
    "reasoning_micros_per_mtok = excluded.reasoning_micros_per_mtok";
// public_id. Returns a row when the key existed.
inline constexpr std::string_view kDeleteKey =
    "DELETE FROM api_keys WHERE public_id = ? RETURNING public_id";
// model. Returns a row when the price existed.
inline constexpr std::string_view kDeletePrice =
    "DELETE FROM prices WHERE model = ? RETURNING model";

// Spend rows. LoadSpend: month; result scope, scope_id, month, spent_micros.
inline constexpr std::string_view kSelectSpend =
    "SELECT scope, scope_id, month, spent_micros FROM spend WHERE month = ?";

inline constexpr std::string_view kActive = "active";
inline constexpr std::string_view kSuspended = "suspended";
inline constexpr std::string_view kRevoked = "revoked";
inline constexpr std::string_view kVirtualKey = "virtual";
inline constexpr std::string_view kAdminKey = "admin";
// plans.cache (CachePolicy::Mode): '' the gateway's default, 'on', 'off'; plans.cache_scope:
// 'tenant' or 'key'.
inline constexpr std::string_view kCacheOn = "on";
inline constexpr std::string_view kCacheOff = "off";
inline constexpr std::string_view kCacheScopeKey = "key";
inline constexpr std::string_view kCacheScopeTenant = "tenant";
std::string_view CacheModeText(governance::CachePolicy::Mode mode);
governance::CachePolicy::Mode CacheModeOf(std::string_view text);

std::string JoinModels(const std::vector<std::string>& models);
std::vector<std::string> SplitModels(const std::string& text);

// plans.budget_alerts (Plan::budget_alerts): '' unset (the gateway's thresholds), 'none' an
// empty list, else the percents joined by commas ("50,80,100"). A text that does not read
// back (never written by this code) is unset.
std::string BudgetAlertsText(const std::optional<std::vector<int>>& percents);
std::optional<std::vector<int>> BudgetAlertsOf(std::string_view text);

}  // namespace turnpike::store::sql
