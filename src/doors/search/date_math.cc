// Civil-date arithmetic on "local" milliseconds (UTC shifted by the fixed offset), so that
// rounding to a day, week, month or year happens in the range's time zone. Everything is
// bounded to +-kMaxYear years, so no int64 arithmetic here can overflow (UBSan-clean on any
// input, which the DSL fuzz target feeds it).
#include "doors/search/date_math.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "doors/search/dsl.h"
#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

constexpr int64_t kMsPerSecond = 1000;
constexpr int64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr int64_t kMsPerHour = 60 * kMsPerMinute;
constexpr int64_t kMsPerDay = 24 * kMsPerHour;
constexpr int64_t kMsPerWeek = 7 * kMsPerDay;
constexpr int64_t kMaxYear = 1'000'000;  // far beyond any real date; keeps sums in int64
constexpr int64_t kMaxMs = kMaxYear * 366 * kMsPerDay;
constexpr int64_t kMaxStep = 2'147'483'647;  // ES reads N as a Java int
constexpr int64_t kMaxOffsetHours = 18;      // java.time.ZoneOffset's bound

Error DateMathError(std::string reason) { return EsError("parse_exception", std::move(reason)); }

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days since 1970-01-01 of a proleptic Gregorian date, and back (Howard Hinnant's algorithms).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t year;
  unsigned month, day;
};
Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (month <= 2), month, day};
}

unsigned DaysInMonth(int64_t y, unsigned m) {
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// Adds `months` as java.time's plusMonths does: the day is clamped to the new month's length.
std::optional<int64_t> PlusMonths(int64_t ms, int64_t months) {
  const int64_t days = FloorDiv(ms, kMsPerDay);
  const int64_t time = ms - days * kMsPerDay;
  const Civil c = CivilFromDays(days);
  const int64_t index = c.year * 12 + (c.month - 1) + months;
  const int64_t year = FloorDiv(index, 12);
  if (year > kMaxYear || year < -kMaxYear) return std::nullopt;
  const auto month = static_cast<unsigned>(index - year * 12 + 1);
  const unsigned day = std::min(c.day, DaysInMonth(year, month));
  return DaysFromCivil(year, month, day) * kMsPerDay + time;
}

// The start of the unit containing `ms`, and the start of the next one.
struct Span {
  int64_t start, next;
};
Span Round(int64_t ms, char unit) {
  const int64_t days = FloorDiv(ms, kMsPerDay);
  auto fixed = [&](int64_t size) {
    const int64_t start = FloorDiv(ms, size) * size;
    return Span{start, start + size};
  };
  switch (unit) {
    case 'y': {
      const int64_t year = CivilFromDays(days).year;
      return {DaysFromCivil(year, 1, 1) * kMsPerDay, DaysFromCivil(year + 1, 1, 1) * kMsPerDay};
    }
    case 'M': {
      const Civil c = CivilFromDays(days);
      const int64_t start = DaysFromCivil(c.year, c.month, 1) * kMsPerDay;
      return {start, start + DaysInMonth(c.year, c.month) * kMsPerDay};
    }
    case 'w': {
      // ISO weeks start on Monday; 1970-01-01 (day 0) was a Thursday (index 3 from Monday).
      const int64_t monday = days - (days + 3 - FloorDiv(days + 3, 7) * 7);
      return {monday * kMsPerDay, (monday + 7) * kMsPerDay};
    }
    case 'd':
      return fixed(kMsPerDay);
    case 'h':
    case 'H':
      return fixed(kMsPerHour);
    case 'm':
      return fixed(kMsPerMinute);
    default:  // 's'
      return fixed(kMsPerSecond);
  }
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

// Applies ES's math string (what follows `now` or `||`) to `local`.
Result<int64_t> ApplyMath(int64_t local, std::string_view math, bool round_up) {
  const auto quoted = [&] { return "[" + std::string(math) + "]"; };
  size_t i = 0;
  while (i < math.size()) {
    const char op = math[i++];
    if (op != '/' && op != '+' && op != '-') {
      return DateMathError("operator not supported for date math " + quoted());
    }
    if (i >= math.size()) return DateMathError("truncated date math " + quoted());
    int64_t num = 1;
    if (math[i] >= '0' && math[i] <= '9') {
      const size_t from = i;
      while (i < math.size() && math[i] >= '0' && math[i] <= '9') ++i;
      if (i >= math.size()) return DateMathError("truncated date math " + quoted());
      const auto [end, ec] = std::from_chars(math.data() + from, math.data() + i, num);
      if (ec != std::errc() || num > kMaxStep) {
        return DateMathError("number too large in date math " + quoted());
      }
    }
    if (op == '/' && num != 1) {
      return DateMathError("rounding `/` can only be used on single unit types " + quoted());
    }
    const char unit = math[i++];
    if (std::string_view("yMwdhHms").find(unit) == std::string_view::npos) {
      return DateMathError("unit [" + std::string(1, unit) + "] not supported for date math " +
                           quoted());
    }
    if (op == '/') {
      const Span span = Round(local, unit);
      local = round_up ? span.next - 1 : span.start;
      continue;
    }
    const int64_t step = op == '-' ? -num : num;
    if (unit == 'y' || unit == 'M') {
      const std::optional<int64_t> moved = PlusMonths(local, unit == 'y' ? step * 12 : step);
      if (!moved) return DateMathError("date math result out of range " + quoted());
      local = *moved;
      continue;
    }
    const int64_t size = unit == 'w'   ? kMsPerWeek
                         : unit == 'd' ? kMsPerDay
                         : unit == 'm' ? kMsPerMinute
                         : unit == 's' ? kMsPerSecond
                                       : kMsPerHour;
    local += step * size;  // |step * size| < 1.3e18 and |local| <= kMaxMs: no overflow
    if (local > kMaxMs || local < -kMaxMs) {
      return DateMathError("date math result out of range " + quoted());
    }
  }
  return local;
}

}  // namespace

std::optional<DateParts> ParseDateParts(std::string_view s) {
  if (s.empty()) return std::nullopt;
  // epoch_millis: an optional '-' and digits only.
  if (s.find_first_not_of("-0123456789") == std::string_view::npos &&
      s.find('-', 1) == std::string_view::npos) {
    int64_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return DateParts{out, 0, 0};
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
  DateParts out;
  out.local_ms =
      DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day)) * kMsPerDay;
  out.round_up_fill = kMsPerDay - 1;
  if (pos == s.size()) return out;
  if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
  ++pos;
  const auto hour = Digits(s, pos, 2);
  if (!hour || *hour > 23 || pos >= s.size() || s[pos++] != ':') return std::nullopt;
  const auto minute = Digits(s, pos, 2);
  if (!minute || *minute > 59) return std::nullopt;
  out.local_ms += *hour * kMsPerHour + *minute * kMsPerMinute;
  out.round_up_fill = kMsPerMinute - 1;
  if (pos < s.size() && s[pos] == ':') {
    ++pos;
    const auto second = Digits(s, pos, 2);
    if (!second || *second > 60) return std::nullopt;
    out.local_ms += *second * kMsPerSecond;
    out.round_up_fill = kMsPerSecond - 1;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      int64_t scale = 100;
      const size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        out.local_ms += (s[pos] - '0') * scale;
        scale /= 10;
        ++pos;
      }
      if (pos == start) return std::nullopt;
      out.round_up_fill = 0;
    }
  }
  if (pos == s.size()) return out;
  if (s[pos] == 'Z' && pos + 1 == s.size()) {
    out.offset_ms = 0;
    return out;
  }
  if (s[pos] != '+' && s[pos] != '-') return std::nullopt;
  const int sign = s[pos++] == '-' ? -1 : 1;
  const auto oh = Digits(s, pos, 2);
  if (!oh || *oh > 23) return std::nullopt;
  if (pos < s.size() && s[pos] == ':') ++pos;
  const auto om = Digits(s, pos, 2);
  if (!om || *om > 59 || pos != s.size()) return std::nullopt;
  out.offset_ms = sign * (*oh * kMsPerHour + *om * kMsPerMinute);
  return out;
}

std::optional<int64_t> ParseDateMillis(std::string_view text) {
  const std::optional<DateParts> parts = ParseDateParts(text);
  if (!parts) return std::nullopt;
  return parts->local_ms - parts->offset_ms.value_or(0);
}

Result<int64_t> ParseTimeZone(std::string_view zone) {
  for (std::string_view utc : {"Z", "UTC", "GMT", "Etc/UTC", "Etc/GMT"}) {
    if (zone == utc) return int64_t{0};
  }
  if (zone.empty() || (zone[0] != '+' && zone[0] != '-')) {
    return EsError(kIllegalArgument,
                   "time_zone [" + std::string(zone) +
                       "] is not supported: use UTC or a fixed offset like +01:00 (named time "
                       "zones are not implemented)");
  }
  const int64_t sign = zone[0] == '-' ? -1 : 1;
  size_t pos = 1;
  const auto hours = Digits(zone, pos, 2);
  std::optional<int> minutes = 0;
  if (pos < zone.size() && zone[pos] == ':') ++pos;
  if (pos < zone.size()) minutes = Digits(zone, pos, 2);
  if (!hours || !minutes || pos != zone.size() || *hours > kMaxOffsetHours || *minutes > 59 ||
      (*hours == kMaxOffsetHours && *minutes > 0)) {
    return DateMathError("failed to parse time_zone [" + std::string(zone) + "]");
  }
  return sign * (*hours * kMsPerHour + *minutes * kMsPerMinute);
}

Result<int64_t> ResolveDateBound(std::string_view text, int64_t now_ms, bool round_up,
                                 int64_t offset_ms) {
  const auto out_of_range = [&] {
    return DateMathError("date [" + std::string(text) + "] is out of range");
  };
  int64_t local = 0;
  std::string_view math;
  if (text.starts_with("now")) {
    if (now_ms > kMaxMs || now_ms < -kMaxMs) return out_of_range();
    local = now_ms + offset_ms;  // `now` is an instant: the zone only shifts where rounding cuts
    math = text.substr(3);
  } else {
    const size_t bars = text.find("||");
    const std::string_view date = text.substr(0, bars);
    const std::optional<DateParts> parts = ParseDateParts(date);
    if (!parts) {
      return DateMathError("failed to parse date field [" + std::string(date) +
                           "] with format [strict_date_optional_time||epoch_millis]");
    }
    if (parts->local_ms > kMaxMs || parts->local_ms < -kMaxMs) return out_of_range();
    local = parts->offset_ms ? parts->local_ms - *parts->offset_ms + offset_ms : parts->local_ms;
    if (round_up) local += parts->round_up_fill;
    if (bars != std::string_view::npos) math = text.substr(bars + 2);
  }
  if (local > kMaxMs || local < -kMaxMs) return out_of_range();
  Result<int64_t> resolved = ApplyMath(local, math, round_up);
  if (!resolved.ok()) return resolved;
  return *resolved - offset_ms;
}

}  // namespace turnpike::search
