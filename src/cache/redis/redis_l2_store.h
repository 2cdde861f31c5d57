// RedisL2Store: the response cache's L2 (cache/l2_store.h) over the fleet's Redis client
// (redis/client.h), so every replica shares entries and generations.
//
// Commands (one round trip each, pipelined with everything else on the client's connection):
//   Get   MGET <generation key> <entry key>   (the keys share a hash tag: one slot, one node)
//   Put   SET <entry key> <envelope> PX <ttl ms>
//   Bump  INCR <generation key>
// counted in turnpike_redis_commands_total{op="cache_get|cache_put|cache_bump"}.
//
// Failure: the client fails a command when it is not connected or when its batch passes the
// client's command_timeout; that comes back as the Error here (kUnavailable), and a reply of
// an unexpected shape as kUpstreamBadResponse. The cache then computes without caching
// (cache.h); nothing waits longer than the client's timeout.
// Persistence: run the cache's Redis without restoring snapshots older than its last write
// (or with none): a restored snapshot brings back old generations together with the entries
// made under them, which a write after the snapshot had invalidated.
//
// Ownership and threads: holds a reference to the client, which outlives it and is stopped
// after every worker has stopped. Calls may come from any worker; each resumes its caller on
// the caller's own executor (the reply is posted back from the client's thread).
#pragma once

#include "cache/l2_store.h"

namespace turnpike::redis {
class Client;
}

namespace turnpike::cache {

class RedisL2Store final : public L2Store {
 public:
  explicit RedisL2Store(redis::Client& client) : client_(client) {}

  boost::asio::awaitable<Result<L2Read>> Get(std::string generation_key,
                                             std::string entry_key) override;
  boost::asio::awaitable<Status> Put(std::string entry_key, std::string entry,
                                     std::chrono::milliseconds ttl) override;
  boost::asio::awaitable<Result<uint64_t>> Bump(std::string generation_key) override;

 private:
  redis::Client& client_;
};

}  // namespace turnpike::cache
