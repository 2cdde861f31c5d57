#include "doors/search/qdrant/mapping_cache.h"

#include <algorithm>

namespace turnpike::search::qdrant {

MappingCache::MappingCache(std::chrono::milliseconds ttl, size_t capacity)
    : ttl_(ttl), capacity_(std::max<size_t>(capacity, 1)) {}

std::shared_ptr<const IndexInfo> MappingCache::Find(std::string_view tenant, std::string_view index,
                                                    Clock::time_point now) const {
  if (ttl_.count() <= 0) return nullptr;
  const std::pair<std::string_view, std::string_view> key(tenant, index);
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || now - it->second.verified >= ttl_) return nullptr;
  return it->second.info;
}

void MappingCache::Store(std::string_view tenant, std::string_view index, const IndexInfo& info,
                         Clock::time_point now) {
  if (ttl_.count() <= 0) return;
  // Built outside the lock: the mapping's copy allocates.
  auto copy = std::make_shared<const IndexInfo>(info);
  std::lock_guard lock(mu_);
  const std::pair<std::string_view, std::string_view> key(tenant, index);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second = Entry{std::move(copy), now};
    return;
  }
  if (entries_.size() >= capacity_) {
    // A full cache is rare (capacity is per process, entries per live index): a scan is fine.
    auto oldest = std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.verified < b.second.verified; });
    entries_.erase(oldest);
  }
  entries_.emplace(Key(tenant, index), Entry{std::move(copy), now});
}

void MappingCache::Erase(std::string_view tenant, std::string_view index) {
  const std::pair<std::string_view, std::string_view> key(tenant, index);
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) entries_.erase(it);
}

MappingCache::Seen MappingCache::Observe(std::string_view tenant, std::string_view index,
                                         const IndexInfo& read, Clock::time_point now) {
  if (ttl_.count() <= 0) return Seen::kUnchanged;
  std::shared_ptr<const IndexInfo> cached;
  {
    const std::pair<std::string_view, std::string_view> key(tenant, index);
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      cached = it->second.info;
      // Within one index a mapping only grows: the same creation and field count is the
      // same mapping (the common case; no copy).
      if (cached->created_ms == read.created_ms &&
          cached->mapping.fields.size() == read.mapping.fields.size()) {
        it->second.verified = now;
        return Seen::kUnchanged;
      }
    }
  }
  Store(tenant, index, read, now);
  if (cached == nullptr || cached->created_ms == read.created_ms) return Seen::kStored;
  return StillValid(cached->mapping, read.mapping) ? Seen::kStored : Seen::kRetyped;
}

size_t MappingCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

bool StillValid(const Mapping& used, const Mapping& now) {
  for (const FieldMapping& f : used.fields) {
    const FieldMapping* g = now.Find(f.path);
    if (g == nullptr || g->type != f.type || g->dims != f.dims || g->similarity != f.similarity ||
        g->format != f.format) {
      return false;
    }
  }
  return true;
}

}  // namespace turnpike::search::qdrant
