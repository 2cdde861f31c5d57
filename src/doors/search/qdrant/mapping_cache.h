// The Qdrant backend's mapping cache: (tenant, index) -> the IndexInfo last read from the
// collection's metadata, so that a warm search reads no collection before its legs
// (QdrantBackend::GetIndex; the rules of staleness are in qdrant_backend.h).
//
// What an entry holds: the mapping and created_ms as read, and doc_count as of that read
// (stale by design: nothing reads it from a search's GetIndex; `_shards` comes from the Cover
// leg, which reads the collection on every search).
//
// Threads: one cache per process, shared by every worker's backend (so an index API call on
// one worker invalidates every worker's view at once). A mutex guards the map; it is held
// only for a lookup, an insert or an erase, never across I/O or a co_await. Entries are
// immutable (shared_ptr<const IndexInfo>): a reader copies the pointer under the lock and
// reads the mapping after releasing it.
//
// Bounds: at most `capacity` entries; inserting a new key into a full cache evicts the entry
// verified longest ago. An entry older than `ttl` (since it was last read or verified from
// Qdrant) is not found. ttl 0: off (Find finds nothing, nothing is stored).
//
// Time is a parameter (`now`), so tests drive it; the backend passes steady_clock::now().
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "doors/search/backend.h"

namespace turnpike::search::qdrant {

class MappingCache {
 public:
  using Clock = std::chrono::steady_clock;

  MappingCache(std::chrono::milliseconds ttl, size_t capacity);

  // The entry, if present and younger than the ttl; else nullptr.
  std::shared_ptr<const IndexInfo> Find(std::string_view tenant, std::string_view index,
                                        Clock::time_point now) const;
  // Stores what a read of the collection answered (replacing any entry).
  void Store(std::string_view tenant, std::string_view index, const IndexInfo& info,
             Clock::time_point now);
  // Drops the entry (own index writes; a call that found the collection missing).
  void Erase(std::string_view tenant, std::string_view index);

  // A leg read the collection anyway (Cover): verify the entry against it.
  enum class Seen {
    kUnchanged,  // same index, same mapping: the entry's age restarts
    kStored,     // no entry, or the mapping grew: the read is stored
    kRetyped,    // re-created (another created_ms) with a mapping in which a field of the
                 // cached one is missing or typed differently: the read replaced the entry,
                 // and a request parsed against the old entry may be wrong
  };
  Seen Observe(std::string_view tenant, std::string_view index, const IndexInfo& read,
               Clock::time_point now);

  size_t size() const;

 private:
  using Key = std::pair<std::string, std::string>;  // tenant first
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>(a.first, a.second) <
             std::pair<std::string_view, std::string_view>(b.first, b.second);
    }
  };
  struct Entry {
    std::shared_ptr<const IndexInfo> info;
    Clock::time_point verified;
  };
  void StoreLocked(std::string_view tenant, std::string_view index, const IndexInfo& info,
                   Clock::time_point now);

  // Constant after construction.
  const std::chrono::milliseconds ttl_;
  const size_t capacity_;

  mutable std::mutex mu_;
  std::map<Key, Entry, KeyLess> entries_;  // guarded by mu_
};

// True when every field of `used` is in `now` with the same type and parameters: a request
// typed against `used` means the same against `now` (mappings of one index only grow).
bool StillValid(const Mapping& used, const Mapping& now);

}  // namespace turnpike::search::qdrant
