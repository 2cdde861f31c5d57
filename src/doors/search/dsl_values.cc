#include <boost/json/serialize.hpp>
#include <charconv>
#include <cmath>
#include <optional>

#include "doors/search/dsl.h"
#include "doors/search/dsl_internal.h"

namespace turnpike::search {
namespace dsl {
namespace {

std::optional<int64_t> IntegerOf(const json::value& v) {
  if (v.is_int64()) return v.as_int64();
  if (v.is_uint64()) {
    if (v.as_uint64() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v.as_uint64());
  }
  if (v.is_double()) {
    const double d = v.as_double();
    constexpr double kLimit = 9.2e18;
    if (std::trunc(d) != d || std::fabs(d) > kLimit) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  if (v.is_string()) {
    const json::string& s = v.as_string();
    int64_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return out;
  }
  return std::nullopt;
}

Error WrongType(const json::value& v, const FieldMapping& field) {
  return ArgError("failed to parse [" + json::serialize(v) + "] as a value of field [" +
                  field.path + "] of type [" + field.type_name + "]");
}

}  // namespace

std::optional<double> NumberOf(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  if (v.is_double()) return v.as_double();
  if (v.is_string()) {
    const json::string& s = v.as_string();
    double out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(out)) {
      return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

Result<int64_t> NonNegative(const json::value& v, std::string_view name) {
  const std::optional<int64_t> n = IntegerOf(v);
  if (!n || *n < 0) return ArgError("[" + std::string(name) + "] must be a non-negative integer");
  return *n;
}

Result<const FieldMapping*> RequireField(const Mapping& mapping, std::string_view path,
                                         std::string_view what) {
  const FieldMapping* field = mapping.Find(path);
  if (field == nullptr) {
    return ArgError("field [" + std::string(path) + "] used in [" + std::string(what) +
                    "] is not mapped");
  }
  return field;
}

Result<Value> TypedValue(const json::value& v, const FieldMapping& field, bool allow_null) {
  if (v.is_null()) {
    if (allow_null) return Value{};
    return WrongType(v, field);
  }
  switch (field.type) {
    case FieldType::kKeyword:
    case FieldType::kText:
      if (v.is_string()) return Value{std::string(v.as_string())};
      if (v.is_bool()) return Value{std::string(v.as_bool() ? "true" : "false")};
      if (v.is_number()) return Value{json::serialize(v)};
      return WrongType(v, field);
    case FieldType::kLong:
      if (std::optional<int64_t> n = IntegerOf(v)) return Value{*n};
      return WrongType(v, field);
    case FieldType::kDouble:
      if (v.is_bool()) return WrongType(v, field);
      if (std::optional<double> d = NumberOf(v)) return Value{*d};
      return WrongType(v, field);
    case FieldType::kDate:
      if (v.is_number()) {
        if (std::optional<int64_t> n = IntegerOf(v)) return Value{*n};
      } else if (v.is_string()) {
        if (std::optional<int64_t> ms = ParseDateMillis(v.as_string())) return Value{*ms};
      }
      return WrongType(v, field);
    case FieldType::kBoolean:
      if (v.is_bool()) return Value{v.as_bool()};
      if (v.is_string() && (v.as_string() == "true" || v.as_string() == "false")) {
        return Value{v.as_string() == "true"};
      }
      return WrongType(v, field);
    case FieldType::kDenseVector:
      break;
  }
  return ArgError("field [" + field.path + "] of type [dense_vector] takes no such value");
}

}  // namespace dsl

Result<std::optional<std::chrono::nanoseconds>> ParseTimeValue(std::string_view text,
                                                               std::string_view setting) {
  using std::chrono::nanoseconds;
  if (text == "-1") return std::optional<nanoseconds>{};
  if (text == "0") return std::optional<nanoseconds>{nanoseconds{0}};
  const auto fail = [&](std::string_view why) -> Error {
    return EsError("parse_exception", "failed to parse setting [" + std::string(setting) +
                                          "] with value [" + std::string(text) +
                                          "] as a time value: " + std::string(why));
  };
  constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"nanos", 1},
      {"micros", 1'000},
      {"ms", 1'000'000},
      {"s", 1'000'000'000},
      {"m", 60'000'000'000},
      {"h", 3'600'000'000'000},
      {"d", 86'400'000'000'000},
  };
  for (const auto& [unit, factor] : kUnits) {
    if (!text.ends_with(unit)) continue;
    const std::string_view number = text.substr(0, text.size() - unit.size());
    // "10ms" also ends with "s": only a number before the unit counts.
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size()) continue;
    if (n < 0) return fail("negative values other than -1 are not allowed");
    int64_t ns = 0;
    if (__builtin_mul_overflow(n, factor, &ns)) return fail("the value is too large");
    return std::optional<nanoseconds>{nanoseconds{ns}};
  }
  return fail("unit is missing or unrecognized");
}

}  // namespace turnpike::search
