#include "app/admin_command.h"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "common/hex.h"

namespace turnpike::app {
namespace {
namespace net = boost::asio;
namespace bhttp = boost::beast::http;
namespace json = boost::json;

struct Connection {
  std::string url;
  std::string token;
  bool json = false;
};

struct Response {
  unsigned status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, "" when absent
};

std::string Env(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::string Encode(const std::string& s) {
  return boost::urls::encode(s, boost::urls::unreserved_chars);
}

// One request over a fresh connection. Throws std::runtime_error on connection trouble.
Response Send(const Connection& c, bhttp::verb method, const std::string& path,
              const std::optional<json::object>& body, std::string_view idempotency_key = {}) {
  boost::system::result<boost::urls::url_view> url = boost::urls::parse_absolute_uri(c.url);
  if (!url || url->scheme() != "http") {
    throw std::runtime_error("--url must be http://host:port (got " + c.url + ")");
  }
  const std::string host = url->host();
  const std::string port = url->has_port() ? std::string(url->port()) : "80";
  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  net::ip::tcp::socket socket(io);
  net::connect(socket, resolver.resolve(host, port));
  bhttp::request<bhttp::string_body> request(method, "/admin/v1/" + path, 11);
  request.set(bhttp::field::host, host + ":" + port);
  request.set(bhttp::field::authorization, "Bearer " + c.token);
  request.set(bhttp::field::connection, "close");
  if (!idempotency_key.empty()) request.set("Idempotency-Key", idempotency_key);
  if (body) {
    request.set(bhttp::field::content_type, "application/json");
    request.body() = json::serialize(*body);
  }
  request.prepare_payload();
  bhttp::write(socket, request);
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> response;
  bhttp::read(socket, buffer, response);
  auto retry_after = response.find(bhttp::field::retry_after);
  return Response{
      response.result_int(), std::move(response.body()),
      retry_after == response.end() ? std::string() : std::string(retry_after->value())};
}

std::string Cell(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_double()) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.6f", v.as_double());
    std::string out = text;
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
    return out;
  }
  if (v.is_null()) return "-";
  if (v.is_array()) {
    std::string out;
    for (const json::value& item : v.as_array()) {
      if (!out.empty()) out += ",";
      out += Cell(item);
    }
    return out.empty() ? "-" : out;
  }
  return json::serialize(v);
}

void PrintTable(const json::array& rows) {
  if (rows.empty()) {
    std::cout << "(none)\n";
    return;
  }
  std::vector<std::string> columns;
  for (const auto& member : rows.front().as_object()) columns.emplace_back(member.key());
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> widths;
  for (const std::string& c : columns) widths.push_back(c.size());
  for (const json::value& row : rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < columns.size(); ++i) {
      const json::value* v = row.as_object().if_contains(columns[i]);
      line.push_back(v != nullptr ? Cell(*v) : "-");
      widths[i] = std::max(widths[i], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    for (size_t i = 0; i < line.size(); ++i) {
      std::cout << line[i];
      if (i + 1 < line.size()) std::cout << std::string(widths[i] - line[i].size() + 2, ' ');
    }
    std::cout << "\n";
  };
  std::vector<std::string> header;
  for (const std::string& c : columns) {
    std::string upper;
    for (char ch : c) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    header.push_back(upper);
  }
  print_line(header);
  for (const auto& line : cells) print_line(line);
}

// Prints the answer; the exit status.
int Show(const Connection& c, const Response& r) {
  const bool ok = r.status / 100 == 2;
  if (c.json) {
    (ok ? std::cout : std::cerr) << r.body << "\n";
    return ok ? 0 : 1;
  }
  boost::system::error_code ec;
  json::value value = json::parse(r.body, ec);
  if (ec || !value.is_object()) {
    std::cerr << "turnpike admin: HTTP " << r.status << ": " << r.body << "\n";
    return ok ? 0 : 1;
  }
  const json::object& o = value.as_object();
  if (!ok) {
    const json::value* error = o.if_contains("error");
    std::cerr << "turnpike admin: HTTP " << r.status << ": ";
    if (error != nullptr && error->is_object()) {
      std::cerr << Cell(error->as_object().at("message"));
      if (const json::value* field = error->as_object().if_contains("field")) {
        std::cerr << " (field " << Cell(*field) << ")";
      }
    } else {
      std::cerr << r.body;
    }
    std::cerr << "\n";
    return 1;
  }
  if (const json::value* data = o.if_contains("data"); data != nullptr && data->is_array()) {
    PrintTable(data->as_array());
    if (const json::value* next = o.if_contains("next_cursor"); next && !next->is_null()) {
      std::cout << "more: --cursor " << Cell(*next) << "\n";
    }
    return 0;
  }
  if (const json::value* key = o.if_contains("key"); key != nullptr && key->is_string()) {
    std::cout << "API key (shown once, store it now): " << Cell(*key) << "\n";
  }
  for (const auto& member : o) {
    if (member.key() == "key") continue;
    std::cout << member.key() << ": " << Cell(member.value()) << "\n";
  }
  return 0;
}

// Options shared by the subcommands: stored in one struct owned by the callbacks.
struct Args {
  Connection connection;
  std::string id, plan, name, status, tenant, key, model, month, cursor, cache, cache_scope;
  std::string instructions, tools, metadata;  // agents: text, a JSON array, a JSON object
  std::string guard_marker;
  std::vector<std::string> allow_hosts;
  std::string url, after, from, to, group_by;  // webhooks; daily spend
  std::vector<std::string> event_types;
  bool daily = false;
  std::optional<bool> guard_urls;
  std::optional<double> budget, max_request_cost, search_query_price, input, output, cached_input,
      cache_write, reasoning, cache_semantic;
  std::optional<int64_t> rpm, tpm, max_output_tokens, expires_at, limit, http_status;
  std::optional<int64_t> history_items, history_tokens;
  std::optional<std::vector<int64_t>> budget_alerts;
  std::optional<bool> log_bodies;
  std::string idempotency_key;  // creates of keys and admin tokens (RunCreate)
  bool fail_open = false, cache_tool_calls = false, no_cache = false;
  std::vector<std::string> models;
};

void SetUsd(json::object& o, const char* field, const std::optional<double>& v) {
  if (v) o[field] = *v;
}
void SetInt(json::object& o, const char* field, const std::optional<int64_t>& v) {
  if (v) o[field] = *v;
}

json::object Limits(const Args& a) {
  json::object o;
  SetUsd(o, "monthly_budget_usd", a.budget);
  SetInt(o, "rpm", a.rpm);
  SetInt(o, "tpm", a.tpm);
  if (!a.models.empty()) {
    json::array models;
    for (const std::string& m : a.models) models.emplace_back(m);
    o["allowed_models"] = std::move(models);
  }
  return o;
}

std::string Query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    out += (out.empty() ? "?" : "&") + k + "=" + Encode(v);
  }
  return out;
}

// The gateway and the token: the flags, else TURNPIKE_URL and TURNPIKE_ADMIN_TOKEN.
Connection Resolve(const Args& a) {
  Connection c = a.connection;
  if (c.token.empty()) c.token = Env("TURNPIKE_ADMIN_TOKEN", "");
  if (c.url.empty()) c.url = Env("TURNPIKE_URL", "http://127.0.0.1:8080");
  return c;
}

void Run(const Args& a, bhttp::verb method, const std::string& path,
         std::optional<json::object> body = std::nullopt) {
  const Connection c = Resolve(a);
  int rc = 2;
  try {
    rc = Show(c, Send(c, method, path, body));
  } catch (const boost::system::system_error& e) {
    std::cerr << "turnpike admin: cannot reach " << c.url << ": " << e.code().message() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "turnpike admin: " << e.what() << "\n";
  }
  std::exit(rc);
}

// A create whose answer holds a secret shown once (a key, an admin token): sent with an
// Idempotency-Key (--idempotency-key, else a random one) and sent again, with the same one,
// after a 503 or a lost connection, up to 4 times, Retry-After apart (1 s when absent, at most
// 10 s). The gateway derives the new key's id from it, so the retries make one key at most: a
// retry of a create that did land answers 409 naming it.
void RunCreate(const Args& a, const std::string& path, const json::object& body) {
  const Connection c = Resolve(a);
  std::string idempotency_key = a.idempotency_key;
  if (idempotency_key.empty()) {
    std::array<unsigned char, 16> random{};
    if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
      std::cerr << "turnpike admin: random number generator failed\n";
      std::exit(2);
    }
    idempotency_key = Hex(random.data(), random.size());
  }
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    std::optional<Response> response;
    std::string trouble;
    try {
      response = Send(c, bhttp::verb::post, path, body, idempotency_key);
    } catch (const boost::system::system_error& e) {
      trouble = "cannot reach " + c.url + ": " + e.code().message();
    } catch (const std::exception& e) {
      trouble = e.what();
    }
    const bool retry = !response || response->status == 503;
    if (!retry || attempt == kAttempts) {
      if (response) std::exit(Show(c, *response));
      std::cerr << "turnpike admin: " << trouble << "\n";
      std::exit(2);
    }
    int wait_s = 1;
    if (response && !response->retry_after.empty()) {
      wait_s = std::clamp(std::atoi(response->retry_after.c_str()), 1, 10);
    }
    std::cerr << "turnpike admin: " << (response ? "HTTP 503" : trouble) << "; again in " << wait_s
              << " s with Idempotency-Key " << idempotency_key << " (" << attempt << " of "
              << kAttempts << ")\n";
    std::this_thread::sleep_for(std::chrono::seconds(wait_s));
  }
}

void AddLimitOptions(CLI::App* cmd, Args& a) {
  cmd->add_option("--budget", a.budget, "Monthly budget in USD");
  cmd->add_option("--rpm", a.rpm, "Requests per minute");
  cmd->add_option("--tpm", a.tpm, "Tokens per minute");
  cmd->add_option("--models", a.models, "Allowed models (default: all)")->delimiter(',');
}

void AddIdempotencyOption(CLI::App* cmd, Args& a) {
  cmd->add_option("--idempotency-key", a.idempotency_key,
                  "Sent as Idempotency-Key (default: a random one); retries after a 503 reuse it");
}

using ArgsPtr = std::shared_ptr<Args>;

// `turnpike admin` itself: where the gateway is, the token, the output form.
CLI::App* AddAdminRoot(CLI::App& root, Args& a) {
  CLI::App* admin = root.add_subcommand("admin",
                                        "Manage tenants, plans, keys, prices, agents, "
                                        "webhooks; read spend and the call log (the admin API)");
  admin->require_subcommand(1);
  admin->add_option("--url", a.connection.url,
                    "Gateway URL (default $TURNPIKE_URL or "
                    "http://127.0.0.1:8080)");
  admin->add_option("--token", a.connection.token, "Admin token (default $TURNPIKE_ADMIN_TOKEN)");
  admin->add_flag("--json", a.connection.json, "Print the API's JSON");
  return admin;
}

// `admin plans list|put`.
void AddPlanCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* plans = admin->add_subcommand("plans", "Plans: budgets and limits of tenants");
  plans->require_subcommand(1);
  plans->add_subcommand("list", "List plans")->callback([args] {
    Run(*args, bhttp::verb::get, "plans");
  });
  CLI::App* plan_put = plans->add_subcommand("put", "Create or replace a plan");
  plan_put->add_option("id", a.id, "Plan id")->required();
  AddLimitOptions(plan_put, a);
  plan_put->add_option("--max-request-cost", a.max_request_cost, "Per-request cap in USD");
  plan_put->add_option("--search-query-price", a.search_query_price,
                       "Price of one search query in USD (else searches are priced by tokens)");
  plan_put->add_flag("--fail-open", a.fail_open,
                     "With Redis unreachable and the budget slice spent, admit against this "
                     "replica's own count (gives up zero overshoot)");
  plan_put->add_option("--cache", a.cache, "LLM response cache: on, off or default")
      ->check(CLI::IsMember({"on", "off", "default"}));
  plan_put->add_option("--cache-scope", a.cache_scope, "Cache entries shared per tenant or key")
      ->check(CLI::IsMember({"tenant", "key"}));
  plan_put->add_flag("--cache-tool-calls", a.cache_tool_calls, "Cache answers that call tools");
  plan_put->add_option("--cache-semantic", a.cache_semantic,
                       "Semantic lookups above this similarity (0 < t <= 1, e.g. 0.97); 0: exact");
  plan_put
      ->add_option("--budget-alerts", a.budget_alerts,
                   "This plan's budget-alert thresholds, percents of its monthly budget "
                   "(e.g. 50,80,100; 0 alone: none); else the gateway's")
      ->delimiter(',');
  plan_put->callback([args] {
    json::object body = Limits(*args);
    SetUsd(body, "max_request_cost_usd", args->max_request_cost);
    SetUsd(body, "search_query_price_usd", args->search_query_price);
    if (args->fail_open) body["fail_open"] = true;
    if (!args->cache.empty()) body["cache"] = args->cache;
    if (!args->cache_scope.empty()) body["cache_scope"] = args->cache_scope;
    if (args->cache_tool_calls) body["cache_tool_calls"] = true;
    if (args->cache_semantic) body["cache_semantic"] = *args->cache_semantic;
    if (args->budget_alerts) {
      json::array percents;
      for (const int64_t p : *args->budget_alerts) {
        if (p != 0) percents.push_back(p);
      }
      body["budget_alerts"] = std::move(percents);
    }
    Run(*args, bhttp::verb::put, "plans/" + Encode(args->id), body);
  });
}

// `admin tenants list|create|update`.
void AddTenantCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* tenants = admin->add_subcommand("tenants", "Tenants");
  tenants->require_subcommand(1);
  tenants->add_subcommand("list", "List tenants")->callback([args] {
    Run(*args, bhttp::verb::get, "tenants");
  });
  CLI::App* tenant_create = tenants->add_subcommand("create", "Create a tenant");
  tenant_create->add_option("id", a.id, "Tenant id")->required();
  tenant_create->add_option("--plan", a.plan, "Plan id")->required();
  tenant_create->add_option("--name", a.name, "Display name");
  tenant_create->add_option("--log-bodies", a.log_bodies, "Keep request bodies in the call log");
  tenant_create->callback([args] {
    json::object body{{"id", args->id}, {"plan", args->plan}};
    if (!args->name.empty()) body["name"] = args->name;
    if (args->log_bodies) body["log_bodies"] = *args->log_bodies;
    Run(*args, bhttp::verb::post, "tenants", body);
  });
  CLI::App* tenant_update = tenants->add_subcommand("update", "Change a tenant");
  tenant_update->add_option("id", a.id, "Tenant id")->required();
  tenant_update->add_option("--plan", a.plan, "Plan id");
  tenant_update->add_option("--name", a.name, "Display name");
  tenant_update->add_option("--status", a.status, "active or suspended");
  tenant_update->add_option("--log-bodies", a.log_bodies, "Keep request bodies in the call log");
  tenant_update->callback([args] {
    json::object body;
    if (!args->plan.empty()) body["plan"] = args->plan;
    if (!args->name.empty()) body["name"] = args->name;
    if (!args->status.empty()) body["status"] = args->status;
    if (args->log_bodies) body["log_bodies"] = *args->log_bodies;
    Run(*args, bhttp::verb::patch, "tenants/" + Encode(args->id), body);
  });
}

// `admin keys list|create|revoke|delete`.
void AddKeyCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* keys = admin->add_subcommand("keys", "Virtual API keys");
  keys->require_subcommand(1);
  CLI::App* key_list = keys->add_subcommand("list", "List keys (never their secrets)");
  key_list->add_option("--tenant", a.tenant, "Only this tenant's");
  key_list->callback([args] {
    Run(*args, bhttp::verb::get, "keys" + Query({{"tenant", args->tenant}}));
  });
  CLI::App* key_create = keys->add_subcommand("create", "Create a key (the secret is shown once)");
  key_create->add_option("--tenant", a.tenant, "Tenant id")->required();
  key_create->add_option("--name", a.name, "A name for people");
  key_create->add_option("--expires-at", a.expires_at, "Unix seconds");
  AddLimitOptions(key_create, a);
  key_create->add_flag("--no-cache", a.no_cache, "This key's requests never use the LLM cache");
  AddIdempotencyOption(key_create, a);
  key_create->callback([args] {
    json::object body = Limits(*args);
    body["tenant"] = args->tenant;
    if (args->no_cache) body["cache"] = false;
    if (!args->name.empty()) body["name"] = args->name;
    SetInt(body, "expires_at", args->expires_at);
    RunCreate(*args, "keys", body);
  });
  CLI::App* key_revoke = keys->add_subcommand("revoke",
                                              "Revoke a key (refused from the next "
                                              "request on)");
  key_revoke->add_option("id", a.id, "Key id (the public part)")->required();
  key_revoke->callback([args] {
    Run(*args, bhttp::verb::post, "keys/" + Encode(args->id) + "/revoke", json::object{});
  });
  CLI::App* key_delete = keys->add_subcommand(
      "delete", "Delete a key (from then on unknown; its calls and spend stay)");
  key_delete->add_option("id", a.id, "Key id (the public part)")->required();
  key_delete->callback([args] { Run(*args, bhttp::verb::delete_, "keys/" + Encode(args->id)); });
}

// `admin admin-tokens list|create|revoke --tenant T`: a tenant's admin tokens.
void AddAdminTokenCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* tokens = admin->add_subcommand("admin-tokens", "A tenant's own admin tokens");
  tokens->require_subcommand(1);
  auto path = [args] { return "tenants/" + Encode(args->tenant) + "/admin-tokens"; };
  CLI::App* list = tokens->add_subcommand("list", "List its tokens (never their secrets)");
  CLI::App* create = tokens->add_subcommand("create", "Create one (the token is shown once)");
  CLI::App* revoke =
      tokens->add_subcommand("revoke", "Revoke one (refused from the next request on)");
  for (CLI::App* command : {list, create, revoke}) {
    command->add_option("--tenant", a.tenant, "Tenant id")->required();
  }
  list->callback([args, path] { Run(*args, bhttp::verb::get, path()); });
  create->add_option("--name", a.name, "A name for people");
  AddIdempotencyOption(create, a);
  create->callback([args, path] {
    json::object body;
    if (!args->name.empty()) body["name"] = args->name;
    RunCreate(*args, path(), body);
  });
  revoke->add_option("id", a.id, "Token id (the public part)")->required();
  revoke->callback(
      [args, path] { Run(*args, bhttp::verb::delete_, path() + "/" + Encode(args->id)); });
}

// `admin prices list|set|delete`.
void AddPriceCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* prices = admin->add_subcommand("prices", "Model prices (USD per million tokens)");
  prices->require_subcommand(1);
  prices->add_subcommand("list", "Effective prices and where each comes from")->callback([args] {
    Run(*args, bhttp::verb::get, "prices");
  });
  CLI::App* price_set = prices->add_subcommand("set", "Override a model's price");
  price_set->add_option("model", a.model, "Model name")->required();
  price_set->add_option("--input", a.input, "USD per million input tokens")->required();
  price_set->add_option("--output", a.output, "USD per million output tokens")->required();
  price_set->add_option("--cached-input", a.cached_input, "USD per million cached input tokens");
  price_set->add_option("--cache-write", a.cache_write,
                        "USD per million prompt tokens written to the prompt cache");
  price_set->add_option("--reasoning", a.reasoning,
                        "USD per million reasoning tokens (default: the output price)");
  price_set
      ->add_option("--max-output-tokens", a.max_output_tokens,
                   "The model's largest "
                   "completion")
      ->required();
  price_set->callback([args] {
    json::object body;
    SetUsd(body, "input", args->input);
    SetUsd(body, "output", args->output);
    SetUsd(body, "cached_input", args->cached_input);
    SetUsd(body, "cache_write", args->cache_write);
    SetUsd(body, "reasoning", args->reasoning);
    SetInt(body, "max_output_tokens", args->max_output_tokens);
    Run(*args, bhttp::verb::put, "prices/" + Encode(args->model), body);
  });
  CLI::App* price_delete = prices->add_subcommand("delete", "Remove an override");
  price_delete->add_option("model", a.model, "Model name")->required();
  price_delete->callback(
      [args] { Run(*args, bhttp::verb::delete_, "prices/" + Encode(args->model)); });
}

// `admin spend`.
void AddSpendCommand(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* spend = admin->add_subcommand(
      "spend", "Spend by tenant and key for a month, or (--daily) per day from the daily counters");
  spend->add_option("--month", a.month, "YYYY-MM (default: this month)");
  spend->add_option("--tenant", a.tenant, "Only this tenant's");
  spend->add_option("--key", a.key, "Only this key");
  spend->add_flag("--daily", a.daily, "Per day (and per --group-by) instead of per month");
  spend->add_option("--from", a.from,
                    "--daily: first day, YYYY-MM-DD (default: 29 days before --to)");
  spend->add_option("--to", a.to, "--daily: last day, YYYY-MM-DD (default: today, UTC)");
  spend->add_option("--group-by", a.group_by,
                    "--daily: a list of model, key, tenant (default: model)");
  spend->callback([args] {
    if (args->daily) {
      Run(*args, bhttp::verb::get,
          "spend/daily" + Query({{"from", args->from},
                                 {"to", args->to},
                                 {"tenant", args->tenant},
                                 {"key", args->key},
                                 {"group_by", args->group_by}}));
      return;  // Run exits
    }
    Run(*args, bhttp::verb::get,
        "spend" + Query({{"month", args->month}, {"tenant", args->tenant}, {"key", args->key}}));
  });
}

// `admin calls`: the call log, newest first.
void AddCallsCommand(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* calls = admin->add_subcommand("calls", "The call log, newest first");
  calls->add_option("--tenant", a.tenant, "Tenant id");
  calls->add_option("--key", a.key, "Key id");
  calls->add_option("--model", a.model, "Model name");
  calls->add_option("--status", a.http_status, "HTTP status");
  calls->add_option("--limit", a.limit, "Rows (max 1000)");
  calls->add_option("--cursor", a.cursor, "Continue after this id");
  calls->callback([args] {
    Run(*args, bhttp::verb::get,
        "calls" + Query({{"tenant", args->tenant},
                         {"key", args->key},
                         {"model", args->model},
                         {"status", args->http_status ? std::to_string(*args->http_status) : ""},
                         {"limit", args->limit ? std::to_string(*args->limit) : ""},
                         {"cursor", args->cursor}}));
  });
}

// `admin reconcile`.
void AddReconcileCommand(CLI::App* admin, const ArgsPtr& args) {
  admin->add_subcommand("reconcile", "Recompute spend from the call log now")->callback([args] {
    Run(*args, bhttp::verb::post, "reconcile", json::object{});
  });
}

// A JSON option's value, or a usage error (exit 2).
json::value JsonArg(const std::string& text, const char* flag) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) {
    std::cerr << "turnpike admin: " << flag << " is not JSON: " << ec.message() << "\n";
    std::exit(2);
  }
  return v;
}

// The agent fields given on the command line; `--tools` and `--metadata` are JSON texts.
json::object AgentBody(const Args& a) {
  json::object body;
  if (!a.model.empty()) body["model"] = a.model;
  if (!a.instructions.empty()) body["instructions"] = a.instructions;
  if (!a.tools.empty()) body["tools"] = JsonArg(a.tools, "--tools");
  if (!a.metadata.empty()) body["metadata"] = JsonArg(a.metadata, "--metadata");
  SetInt(body, "max_output_tokens", a.max_output_tokens);
  SetUsd(body, "monthly_budget_usd", a.budget);
  if (a.guard_urls || !a.allow_hosts.empty() || !a.guard_marker.empty()) {
    json::object guard;
    if (a.guard_urls) guard["urls"] = *a.guard_urls;
    if (!a.allow_hosts.empty()) {
      json::array hosts;
      for (const std::string& h : a.allow_hosts) hosts.emplace_back(h);
      guard["allow_hosts"] = std::move(hosts);
    }
    if (!a.guard_marker.empty()) guard["marker"] = a.guard_marker;
    body["guard"] = std::move(guard);
  }
  if (a.history_items || a.history_tokens) {
    json::object history;
    SetInt(history, "items", a.history_items);
    SetInt(history, "tokens", a.history_tokens);
    body["history"] = std::move(history);
  }
  return body;
}

void AddAgentOptions(CLI::App* cmd, Args& a) {
  cmd->add_option("--model", a.model, "The public model the agent calls");
  cmd->add_option("--instructions", a.instructions, "Its instructions (the system prompt)");
  cmd->add_option("--tools", a.tools, "Its function tools, a JSON array (Responses shape)");
  cmd->add_option("--max-output-tokens", a.max_output_tokens, "Cap on every turn's output");
  cmd->add_option("--budget", a.budget, "Monthly budget in USD (the agent's spend, every version)");
  cmd->add_option("--history-items", a.history_items, "Memory window: the last N items");
  cmd->add_option("--history-tokens", a.history_tokens, "Memory window: at most ~N tokens");
  cmd->add_option("--metadata", a.metadata, "A JSON object of strings");
  cmd->add_option("--guard-urls", a.guard_urls,
                  "Replace URLs whose host is neither allowed nor in the turn's context");
  cmd->add_option("--allow-hosts", a.allow_hosts, "Hosts (and their subdomains) the guard allows")
      ->delimiter(',');
  cmd->add_option("--guard-marker", a.guard_marker, "What a replaced URL becomes");
}

// `admin agents create|update|get|list|delete`.
void AddAgentCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* agents = admin->add_subcommand("agents", "Agents: what a tenant's end users talk to");
  agents->require_subcommand(1);
  CLI::App* create = agents->add_subcommand("create", "Create an agent (version 1)");
  create->add_option("--tenant", a.tenant, "Its tenant")->required();
  create->add_option("--id", a.id, "Its id (default: minted, agt_...)");
  AddAgentOptions(create, a);
  create->callback([args] {
    json::object body = AgentBody(*args);
    body["tenant"] = args->tenant;
    if (!args->id.empty()) body["id"] = args->id;
    Run(*args, bhttp::verb::post, "agents", body);
  });
  CLI::App* update = agents->add_subcommand("update", "Change an agent (a new version)");
  update->add_option("id", a.id, "Agent id")->required();
  AddAgentOptions(update, a);
  update->callback(
      [args] { Run(*args, bhttp::verb::post, "agents/" + Encode(args->id), AgentBody(*args)); });
  CLI::App* get = agents->add_subcommand("get", "Show an agent's latest version");
  get->add_option("id", a.id, "Agent id")->required();
  get->callback([args] { Run(*args, bhttp::verb::get, "agents/" + Encode(args->id)); });
  CLI::App* list = agents->add_subcommand("list", "List agents");
  list->add_option("--tenant", a.tenant, "Only this tenant's");
  list->callback([args] {
    Run(*args, bhttp::verb::get, "agents" + Query({{"tenant", args->tenant}}));
  });
  CLI::App* del = agents->add_subcommand("delete", "Delete an agent (every version)");
  del->add_option("id", a.id, "Agent id")->required();
  del->callback([args] { Run(*args, bhttp::verb::delete_, "agents/" + Encode(args->id)); });
}

// `admin search indices [--tenant T]`: the search door's indices (GET /admin/v1/search/indices).
void AddSearchCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* search = admin->add_subcommand("search", "The search door's indices");
  search->require_subcommand(1);
  CLI::App* indices =
      search->add_subcommand("indices", "List indices with their tenant and document count");
  indices->add_option("--tenant", a.tenant, "Only this tenant's");
  indices->callback([args] {
    Run(*args, bhttp::verb::get, "search/indices" + Query({{"tenant", args->tenant}}));
  });
}

// `admin webhooks create|list|delete|deliveries|replay --tenant T`: a tenant's webhook
// endpoints and their deliveries (doors/webhooks/admin_routes.cc).
void AddWebhookCommands(CLI::App* admin, const ArgsPtr& args) {
  Args& a = *args;
  CLI::App* hooks =
      admin->add_subcommand("webhooks", "A tenant's webhook endpoints and deliveries");
  hooks->require_subcommand(1);
  auto path = [args] { return "tenants/" + Encode(args->tenant) + "/webhooks"; };
  CLI::App* create =
      hooks->add_subcommand("create", "Register an endpoint (its signing secret is shown once)");
  CLI::App* list = hooks->add_subcommand("list", "List the tenant's endpoints");
  CLI::App* del = hooks->add_subcommand("delete", "Delete an endpoint and its deliveries");
  CLI::App* deliveries =
      hooks->add_subcommand("deliveries", "An endpoint's deliveries, newest first");
  CLI::App* replay =
      hooks->add_subcommand("replay", "Send a delivery again (pending, due now, the same id)");
  for (CLI::App* command : {create, list, del, deliveries, replay}) {
    command->add_option("--tenant", a.tenant, "Tenant id")->required();
  }
  create->add_option("--url", a.url, "Where deliveries are POSTed (http or https)")->required();
  create->add_option("--events", a.event_types, "Event types it receives (default: every one)")
      ->delimiter(',');
  create->callback([args, path] {
    json::object body{{"url", args->url}};
    if (!args->event_types.empty()) {
      json::array types;
      for (const std::string& t : args->event_types) types.emplace_back(t);
      body["event_types"] = std::move(types);
    }
    Run(*args, bhttp::verb::post, path(), body);
  });
  list->callback([args, path] { Run(*args, bhttp::verb::get, path()); });
  del->add_option("id", a.id, "Webhook id (wh_...)")->required();
  del->callback(
      [args, path] { Run(*args, bhttp::verb::delete_, path() + "/" + Encode(args->id)); });
  deliveries->add_option("id", a.id, "Webhook id (wh_...)")->required();
  deliveries->add_option("--limit", a.limit, "Deliveries (1-100, default 20)");
  deliveries->add_option("--after", a.after, "Continue after this delivery id");
  deliveries->callback([args, path] {
    Run(*args, bhttp::verb::get,
        path() + "/" + Encode(args->id) + "/deliveries" +
            Query({{"limit", args->limit ? std::to_string(*args->limit) : ""},
                   {"after", args->after}}));
  });
  replay->add_option("id", a.id, "Delivery id")->required();
  replay->callback([args] {
    Run(*args, bhttp::verb::post,
        "tenants/" + Encode(args->tenant) + "/webhook-deliveries/" + Encode(args->id) + "/replay",
        json::object{});
  });
}

}  // namespace

void RegisterAdminCommand(CLI::App& root) {
  auto args = std::make_shared<Args>();
  CLI::App* admin = AddAdminRoot(root, *args);
  AddPlanCommands(admin, args);
  AddTenantCommands(admin, args);
  AddKeyCommands(admin, args);
  AddSearchCommands(admin, args);
  AddAdminTokenCommands(admin, args);
  AddPriceCommands(admin, args);
  AddSpendCommand(admin, args);
  AddCallsCommand(admin, args);
  AddReconcileCommand(admin, args);
  AddAgentCommands(admin, args);
  AddWebhookCommands(admin, args);
}

}  // namespace turnpike::app
