// The in-process generation counters (single node, no L2): one counter per namespace id
// (key.h), 0 until the first bump. A write to a namespace bumps it; an entry remembers the
// generation it was computed under; a lookup compares the two: invalidation is O(1) and
// never scans entries. With an L2 the counters live there instead (l2_store.h) and are read in
// the same round trip as the entry.
//
// Memory: one counter per namespace ever bumped (indexes, models: few), never removed, so a
// generation never goes back to a value an old entry carries.
//
// Threads: thread-safe; sharded maps under their own mutexes, held for one lookup.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

namespace turnpike::cache {

class Generations {
 public:
  static constexpr size_t kShards = 8;

  Generations();
  ~Generations();

  uint64_t Current(std::string_view ns_id) const;
  // Returns the new generation.
  uint64_t Bump(std::string_view ns_id);

  struct Shard;  // generations.cc

 private:
  Shard& ShardFor(std::string_view ns_id) const;
  std::array<std::unique_ptr<Shard>, kShards> shards_;
};

}  // namespace turnpike::cache
