// BatchMap: what one transaction of the call-log writer sums per tenant, key, month or route
// (call_log_write.cc), without copying a key per row.
//
// Ownership: keys are views (into the batch's records) that must outlive the map.
// Threads: the store thread's.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <utility>
#include <vector>

namespace turnpike::store::sqlite {

// Values per key in first-seen order, for what one batch sums per tenant, key and month. A
// batch usually has few distinct keys (the tenants and keys that were busy), so the list is
// searched from its last hit; past kLinear entries a hash index takes over, so a batch of many
// distinct keys stays linear time. Keys are views into the batch's records: nothing is copied
// per row.
template <typename Key, typename Value, typename Hash>
class BatchMap {
 public:
  Value& operator[](const Key& key) { return items_[Find(key)].second; }
  // The position of `key` (added if new): items_ never reorder, so it stays valid.
  size_t Index(const Key& key) { return Find(key); }
  std::pair<Key, Value>& at(size_t index) { return items_[index]; }
  const std::vector<std::pair<Key, Value>>& items() const { return items_; }

 private:
  static constexpr size_t kLinear = 16;

  size_t Find(const Key& key) {
    if (last_ < items_.size() && items_[last_].first == key) return last_;
    if (items_.size() <= kLinear) {
      for (size_t i = 0; i < items_.size(); ++i) {
        if (items_[i].first == key) return last_ = i;
      }
    } else {
      if (index_.empty()) {
        for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
      }
      auto [it, added] = index_.emplace(key, items_.size());
      if (!added) return last_ = it->second;
    }
    items_.emplace_back(key, Value{});
    return last_ = items_.size() - 1;
  }

  std::vector<std::pair<Key, Value>> items_;
  std::unordered_map<Key, size_t, Hash> index_;  // built once items_ passes kLinear
  size_t last_ = 0;
};

}  // namespace turnpike::store::sqlite
