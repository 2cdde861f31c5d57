#include "store/daily_spend.h"

#include <chrono>
#include <cstdio>

namespace turnpike::store {

std::string FormatDay(int64_t day) {
  using namespace std::chrono;
  const year_month_day date{sys_days{days{day}}};
  char text[16];
  std::snprintf(text, sizeof(text), "%04d-%02u-%02u", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return text;
}

int64_t ParseDay(std::string_view text) {
  constexpr size_t kDayTextSize = 10;
  if (text.size() != kDayTextSize || text[4] != '-' || text[7] != '-') return -1;
  int parts[3] = {0, 0, 0};
  size_t at = 0;
  for (int p = 0; p < 3; ++p) {
    const size_t width = p == 0 ? 4 : 2;
    for (size_t i = 0; i < width; ++i, ++at) {
      const char c = text[at];
      if (c < '0' || c > '9') return -1;
      parts[p] = parts[p] * 10 + (c - '0');
    }
    ++at;  // the '-'
  }
  using namespace std::chrono;
  const year_month_day date{year{parts[0]}, month{static_cast<unsigned>(parts[1])},
                            day{static_cast<unsigned>(parts[2])}};
  if (!date.ok()) return -1;
  return sys_days{date}.time_since_epoch().count();
}

std::string DailySpendSelect(const DailySpendQuery& query) {
  std::string sql = "SELECT day, ";
  sql += query.by_tenant ? "tenant_id, " : "'', ";
  sql += query.by_key ? "key_id, " : "'', ";
  sql += query.by_model ? "model, " : "'', ";
  sql +=
      "SUM(cost_micros), SUM(prompt_tokens), SUM(completion_tokens), SUM(requests) "
      "FROM daily_spend WHERE day >= ? AND day <= ?";
  if (!query.tenant_id.empty()) sql += " AND tenant_id = ?";
  if (!query.key_id.empty()) sql += " AND key_id = ?";
  sql += " GROUP BY day";
  if (query.by_tenant) sql += ", tenant_id";
  if (query.by_key) sql += ", key_id";
  if (query.by_model) sql += ", model";
  sql += " ORDER BY day";
  if (query.by_tenant) sql += ", tenant_id";
  if (query.by_key) sql += ", key_id";
  if (query.by_model) sql += ", model";
  sql += " LIMIT ?";
  return sql;
}

}  // namespace turnpike::store
