// What the admin API's routes share, and the routes themselves (internal to admin/): each route
// takes the parsed target, the method and the body, and returns the reply to send; AdminApi
// (admin_api.h) authenticates, dispatches on the first path segment and sends the reply.
//
//   tenant_routes.cc  plans, tenants        key_routes.cc    keys, prices
//   usage_routes.cc   spend, calls, reconcile
//
// Errors: a reply carries the admin error envelope (AdminErrorBody) with the field named.
// Thread safety: pure functions over the GovernanceService, which is thread-safe.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "control/governance_service.h"

namespace turnpike::doors::admin {

inline constexpr double kMicros = 1'000'000;

struct Reply {
  unsigned status = 200;
  std::string body;
  std::string allow;  // 405: the methods the path takes
};

// A 400 naming `field`.
Error Bad(std::string message, std::string field);
Reply ErrorReply(const Error& error);
Reply JsonReply(unsigned status, const boost::json::value& value);
// 405 with the Allow header's value.
Reply NotAllowed(std::string_view allowed);
Error NoSuchPath(std::string_view path);

boost::json::value Usd(int64_t micros);
boost::json::value OptionalUsd(const std::optional<int64_t>& micros);
boost::json::value OptionalInt(const std::optional<int64_t>& v);
boost::json::array Strings(const std::vector<std::string>& items);

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
Result<Target> ParseTarget(std::string_view target);

// The request body as a JSON object (an empty body is {}), or a 400.
Result<boost::json::object> ParseObject(std::string_view body);
// 1-64 of A-Z a-z 0-9 - _ .
bool ValidId(std::string_view id);

using Verb = boost::beast::http::verb;
using Service = control::GovernanceService;

boost::asio::awaitable<Reply> Plans(Service& service, const Target& t, Verb method,
                                    std::string_view raw_body);
boost::asio::awaitable<Reply> Tenants(Service& service, const Target& t, Verb method,
                                      std::string_view raw_body);
boost::asio::awaitable<Reply> Keys(Service& service, const Target& t, Verb method,
                                   std::string_view raw_body);
boost::asio::awaitable<Reply> Prices(Service& service, const Target& t, Verb method,
                                     std::string_view raw_body);
boost::asio::awaitable<Reply> Spend(Service& service, const Target& t, Verb method);
boost::asio::awaitable<Reply> Calls(Service& service, const Target& t, Verb method);
boost::asio::awaitable<Reply> Reconcile(Service& service, const Target& t, Verb method);

}  // namespace turnpike::doors::admin
