// The gateway's response caches, built together because they share the Redis L2: the search
// door's (`search.cache`, cache/cache.h) and the LLM door's (`llm_cache`,
// doors/llm/response_cache.h). Each registers its /metrics series.
//
// The LLM cache is built when a request could use it: `llm_cache.ttl` above 0, and either
// `llm_cache.enabled` or governance on (a plan may turn it on for its tenants). Without it the
// LLM door's chain has no cache filter and pays nothing.
//
// The L2 is the fleet's Redis client, which exists in fleet mode only (governance on and
// `redis.url` set): an open gateway (governance off) caches in L1 alone, even with `redis.url`.
//
// Ownership: held by the composition root; built before the workers run, destroyed after
// them; the Redis client (if any) outlives it.
#pragma once

#include <cstddef>
#include <memory>

#include "cache/cache.h"
#include "cache/redis/redis_l2_store.h"
#include "config/config.h"
#include "core/request_probe.h"
#include "doors/llm/response_cache.h"

namespace turnpike::redis {
class Client;
}

namespace turnpike::app {

struct ResponseCaches {
  std::unique_ptr<cache::RedisL2Store> l2;         // over the fleet's Redis client; null: no L2
  std::unique_ptr<cache::Cache> search;            // null: the search door has no cache
  std::unique_ptr<doors::llm::ResponseCache> llm;  // null: no LLM response cache
};

// `search_door`: the search door runs (a backend was made). `client`: the fleet's Redis client,
// or null.
ResponseCaches MakeResponseCaches(const config::Config& config, bool search_door,
                                  redis::Client* client, size_t workers,
                                  core::ProbeRegistry& probes);

}  // namespace turnpike::app
