#include "store/records_sql.h"

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

}  // namespace turnpike::store::sql
