#include "governance/budget.h"

#include <chrono>
#include <cstdio>

namespace turnpike::governance {
namespace {

constexpr int kEpochYear = 1970;
constexpr int kMonthsPerYear = 12;
constexpr size_t kMonthTextSize = 16;  // "YYYY-MM" and room for any unsigned year

}  // namespace

MonthId MonthOf(int64_t unix_seconds) {
  using namespace std::chrono;
  year_month_day date{floor<days>(sys_seconds{seconds{unix_seconds}})};
  int year = static_cast<int>(date.year());
  unsigned month = static_cast<unsigned>(date.month());
  if (year < kEpochYear) return 0;
  return static_cast<MonthId>((year - kEpochYear) * kMonthsPerYear + (month - 1));
}

std::string FormatMonth(MonthId month) {
  char text[kMonthTextSize];
  std::snprintf(text, sizeof(text), "%04u-%02u", kEpochYear + month / kMonthsPerYear,
                month % kMonthsPerYear + 1);
  return text;
}

}  // namespace turnpike::governance
