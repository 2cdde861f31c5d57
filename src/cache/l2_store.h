// L2: the cache shared by every replica (Redis in a fleet), reached through this interface so
// the cache library links no client. The Redis implementation lives in its own target over
// the Redis client; MemoryL2Store (memory_l2_store.h) is the in-process fake for tests.
//
// Keys are opaque strings made by the cache (cache.h: a prefix + the namespace id or entry
// id of key.h); a generation key and the entry keys of its namespace share a Redis Cluster
// hash tag, so Get can read both with one MGET on one node.
//
// Contract for an implementation:
//   Get   reads the generation (absent = 0) and the entry (absent = nullopt) in ONE round trip.
//   Put   stores the entry with a TTL (SET key value PX ttl); it may be evicted earlier.
//   Bump  increments the generation (INCR) and returns the new value.
// Every call finishes within the implementation's own timeout and reports failure as an
// Error (kUnavailable / kUpstreamTimeout), never by hanging or throwing: the cache then
// computes the answer without caching it.
//
// Ownership and threads: the implementation is shared by every worker and outlives the
// cache; calls may come from any worker concurrently and complete on the caller's executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"

namespace turnpike::cache {

struct L2Read {
  uint64_t generation = 0;
  std::optional<std::string> entry;  // Encode()d envelope (envelope.h)
};

class L2Store {
 public:
  virtual ~L2Store() = default;
  virtual boost::asio::awaitable<Result<L2Read>> Get(std::string generation_key,
                                                     std::string entry_key) = 0;
  virtual boost::asio::awaitable<Status> Put(std::string entry_key, std::string entry,
                                             std::chrono::milliseconds ttl) = 0;
  virtual boost::asio::awaitable<Result<uint64_t>> Bump(std::string generation_key) = 0;
};

}  // namespace turnpike::cache
