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

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads exactly `n` digits at `pos`.
std::optional<int> Digits(std::string_view s, size_t& pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int out = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return out;
}

}  // namespace

std::optional<int64_t> ParseDateMillis(std::string_view s) {
  if (s.empty()) return std::nullopt;
  // epoch_millis: an optional '-' and digits only.
  if (s.find_first_not_of("-0123456789") == std::string_view::npos &&
      s.find('-', 1) == std::string_view::npos) {
    int64_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return out;
  }
  size_t pos = 0;
  const auto year = Digits(s, pos, 4);
  if (!year || pos >= s.size() || s[pos++] != '-') return std::nullopt;
  const auto month = Digits(s, pos, 2);
  if (!month || pos >= s.size() || s[pos++] != '-') return std::nullopt;
  const auto day = Digits(s, pos, 2);
  constexpr int kDaysInMonth[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (!day || *month < 1 || *month > 12 || *day < 1 || *day > kDaysInMonth[*month - 1]) {
    return std::nullopt;
  }
  int64_t ms =
      DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day)) * 86'400'000;
  if (pos == s.size()) return ms;
  if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
  ++pos;
  const auto hour = Digits(s, pos, 2);
  if (!hour || *hour > 23 || pos >= s.size() || s[pos++] != ':') return std::nullopt;
  const auto minute = Digits(s, pos, 2);
  if (!minute || *minute > 59) return std::nullopt;
  ms += (*hour * 3600LL + *minute * 60LL) * 1000;
  if (pos < s.size() && s[pos] == ':') {
    ++pos;
    const auto second = Digits(s, pos, 2);
    if (!second || *second > 60) return std::nullopt;
    ms += *second * 1000LL;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      int64_t scale = 100;
      const size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        ms += (s[pos] - '0') * scale;
        scale /= 10;
        ++pos;
      }
      if (pos == start) return std::nullopt;
    }
  }
  if (pos == s.size()) return ms;
  if (s[pos] == 'Z' && pos + 1 == s.size()) return ms;
  if (s[pos] != '+' && s[pos] != '-') return std::nullopt;
  const int sign = s[pos++] == '-' ? -1 : 1;
  const auto oh = Digits(s, pos, 2);
  if (!oh || *oh > 23) return std::nullopt;
  if (pos < s.size() && s[pos] == ':') ++pos;
  const auto om = Digits(s, pos, 2);
  if (!om || *om > 59 || pos != s.size()) return std::nullopt;
  return ms - sign * (*oh * 3600LL + *om * 60LL) * 1000;
}

}  // namespace turnpike::search
