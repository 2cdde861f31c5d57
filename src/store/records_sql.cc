#include "store/records_sql.h"

#include <algorithm>
#include <charconv>

namespace turnpike::store::sql {

std::string JoinModels(const std::vector<std::string>& models) {
  std::string out;
  for (const std::string& m : models) {
    if (!out.empty()) out += '\n';
    out += m;
  }
  return out;
}

std::vector<std::string> SplitModels(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string_view CacheModeText(governance::CachePolicy::Mode mode) {
  switch (mode) {
    case governance::CachePolicy::Mode::kOn:
      return kCacheOn;
    case governance::CachePolicy::Mode::kOff:
      return kCacheOff;
    case governance::CachePolicy::Mode::kDefault:
      break;
  }
  return "";
}

governance::CachePolicy::Mode CacheModeOf(std::string_view text) {
  if (text == kCacheOn) return governance::CachePolicy::Mode::kOn;
  if (text == kCacheOff) return governance::CachePolicy::Mode::kOff;
  return governance::CachePolicy::Mode::kDefault;
}

std::string BudgetAlertsText(const std::optional<std::vector<int>>& percents) {
  if (!percents) return "";
  if (percents->empty()) return "none";
  std::string out;
  for (const int p : *percents) {
    if (!out.empty()) out += ',';
    out += std::to_string(p);
  }
  return out;
}

std::optional<std::vector<int>> BudgetAlertsOf(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::vector<int> out;
  if (text == "none") return out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    int value = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, value);
    if (ec != std::errc{} || ptr != text.data() + end || value < 1 ||
        value > governance::kMaxBudgetAlertPercent || (!out.empty() && value <= out.back()) ||
        out.size() == governance::kMaxBudgetAlerts) {
      return std::nullopt;
    }
    out.push_back(value);
    start = end + 1;
  }
  return out;
}

}  // namespace turnpike::store::sql
