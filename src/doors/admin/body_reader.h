// Reads an admin request's JSON object body field by field, checking types and ranges; the
// first problem is kept in `error` (a 400 naming the field), and later reads return nothing.
// Unknown fields are refused at construction.
// Ownership: borrows the object. Single-threaded (one request).
#pragma once

#include <boost/json/object.hpp>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "doors/admin/routes.h"
#include "governance/budget.h"

namespace turnpike::doors::admin {

inline constexpr double kMaxUsd = static_cast<double>(governance::kMaxBudgetMicros) / kMicros;

class Body {
 public:
  Body(const boost::json::object& object, std::initializer_list<std::string_view> known)
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
  // The raw value, for a field the caller checks itself (then Fail with what is wrong).
  const boost::json::value* Find(std::string_view key) const { return object_.if_contains(key); }

  // Keeps the first problem: "<field> <what>", a 400 naming the field.
  void Fail(std::string what, std::string field) {
    if (error) return;
    // The message first: the order in which a call's arguments are evaluated is unspecified,
    // and `field` is moved into the second.
    std::string message = field + " " + what;
    error = Bad(std::move(message), std::move(field));
  }

  std::optional<std::string> Text(std::string_view key, bool required) {
    const boost::json::value* v = object_.if_contains(key);
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
    const boost::json::value* v = object_.if_contains(key);
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
    const boost::json::value* v = object_.if_contains(key);
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
    const boost::json::value* v = object_.if_contains(key);
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
    const boost::json::value* v = object_.if_contains(key);
    if (v == nullptr || v->is_null()) return out;
    if (!v->is_array()) {
      Fail("must be a list of model names", std::string(key));
      return out;
    }
    for (const boost::json::value& item : v->as_array()) {
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
  const boost::json::object& object_;
};

}  // namespace turnpike::doors::admin
