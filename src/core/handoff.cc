#include "core/handoff.h"

#include <algorithm>
#include <stdexcept>

namespace turnpike::core {

void HandOffTable::Add(std::string prefix, uint16_t door) {
  if (prefix.empty()) throw std::invalid_argument("a hand-off prefix must not be empty");
  for (const auto& [taken, owner] : prefixes_) {
    if (taken == prefix) {
      throw std::invalid_argument("the hand-off prefix '" + prefix + "' is declared twice");
    }
  }
  prefixes_.emplace_back(std::move(prefix), door);
  std::stable_sort(prefixes_.begin(), prefixes_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

int HandOffTable::Find(std::string_view key) const {
  for (const auto& [prefix, door] : prefixes_) {
    if (key.starts_with(prefix)) return door;
  }
  return -1;
}

}  // namespace turnpike::core
