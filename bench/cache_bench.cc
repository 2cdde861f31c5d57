// Cost of the response cache's request path (src/cache/): an L1 hit (the shard lookup alone,
// and the whole Acquire coroutine as a door calls it, generation read included), the key
// (canonical JSON of a typical Elasticsearch request + SHA-256 digest + key strings), the took
// re-stamp, and a miss's insert. Threads(2) variants have both threads hit the same hot key
// set: the shards' locks under contention on this 2-core machine. BM_AcquireHitRedis is a
// whole L2 hit over loopback (one MGET through the fleet's Redis client and back to the
// caller's loop); it needs a redis-server the caller started, on TURNPIKE_BENCH_REDIS_PORT.
#include <benchmark/benchmark.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "cache/canonical_json.h"
#include "cache/redis/redis_l2_store.h"
#include "redis/client.h"

namespace {

using namespace turnpike::cache;
namespace net = boost::asio;

constexpr int kKeys = 1024;
constexpr int64_t kNow = 1'700'000'000'000;
constexpr size_t kBodyBytes = 4096;

const char kRequest[] =
    R"({"size":20,"query":{"bool":{"filter":[{"term":{"category":"books"}},)"
    R"({"range":{"price":{"gte":10,"lt":50.5}}}],"must":[{"match":{"title":"turnpike gateway"}}]}},)"
    R"("sort":[{"published":"desc"},"_score"],"track_total_hits":true,"_source":["title","price"]})";

std::vector<CacheKey> Keys() {
  std::vector<CacheKey> keys;
  keys.reserve(kKeys);
  for (int i = 0; i < kKeys; ++i) {
    Digest128 digest{};
    digest[0] = static_cast<uint8_t>(i);
    digest[1] = static_cast<uint8_t>(i >> 8);
    keys.push_back(MakeKey("tenant-" + std::to_string(i % 8), "products", digest));
  }
  return keys;
}

std::shared_ptr<const Envelope> Body() {
  auto envelope = std::make_shared<Envelope>();
  envelope->body = R"({"took":3,"timed_out":false,"hits":{"hits":[)";
  envelope->body.append(kBodyBytes, 'x');
  envelope->body += "]}}";
  const TookSpan took = FindTook(envelope->body);
  envelope->took_offset = took.offset;
  envelope->took_length = took.length;
  envelope->expires_at_ms = kNow + 60'000;
  return envelope;
}

L1Cache& SharedL1() {
  static L1Cache* l1 = [] {
    auto* cache = new L1Cache({});
    // One envelope per key: an envelope is stored once (l1_cache.h).
    for (const CacheKey& key : Keys()) cache->Insert(key, Body());
    return cache;
  }();
  return *l1;
}

void BM_L1FindHit(benchmark::State& state) {
  L1Cache& l1 = SharedL1();
  const std::vector<CacheKey> keys = Keys();
  size_t i = state.thread_index() * 97;
  size_t misses = 0;
  for (auto _ : state) {
    auto hit = l1.Find(keys[i++ % kKeys].id, 0, kNow);
    misses += hit == nullptr;
    benchmark::DoNotOptimize(hit);
  }
  if (misses != 0) state.SkipWithError("a miss in the hit loop");
}
BENCHMARK(BM_L1FindHit);
BENCHMARK(BM_L1FindHit)->Threads(2);

Cache& SharedCache() {
  static Cache* cache = [] {
    CacheOptions options;
    options.name = "bench";
    options.workers = 2;
    auto* c = new Cache(options, nullptr);
    net::io_context io;
    for (const CacheKey& key : Keys()) {
      net::co_spawn(
          io,
          [](Cache* c, CacheKey key) -> net::awaitable<void> {
            auto acquire = c->Acquire(key, kNow, 0);
            Lookup lookup = co_await std::move(acquire);
            Envelope answer = *Body();
            auto fill = c->Fill(lookup, std::move(answer), kNow);
            co_await std::move(fill);
          }(c, key),
          net::detached);
    }
    io.run();
    return c;
  }();
  return *cache;
}

net::awaitable<void> AcquireLoop(Cache* cache, benchmark::State* state, size_t worker) {
  const std::vector<CacheKey> keys = Keys();
  size_t i = worker * 97;
  size_t misses = 0;
  for (auto _ : *state) {
    auto acquire = cache->Acquire(keys[i++ % kKeys], kNow, worker);  // includes the key copy
    Lookup lookup = co_await std::move(acquire);
    misses += !lookup.hit();
  }
  if (misses != 0) state->SkipWithError("a miss in the hit loop");
}

// A door's whole L1 hit: generation read, shard lookup, the coroutine, the key's copy.
void BM_AcquireHit(benchmark::State& state) {
  Cache& cache = SharedCache();
  net::io_context io;
  net::co_spawn(io, AcquireLoop(&cache, &state, state.thread_index()), net::detached);
  io.run();
}
BENCHMARK(BM_AcquireHit);
BENCHMARK(BM_AcquireHit)->Threads(2);

// An L2 hit: Acquire through RedisL2Store, one MGET round trip per request (wall time).
void BM_AcquireHitRedis(benchmark::State& state) {
  const char* port = std::getenv("TURNPIKE_BENCH_REDIS_PORT");
  if (port == nullptr) {
    state.SkipWithError("start redis-server and set TURNPIKE_BENCH_REDIS_PORT");
    return;
  }
  turnpike::redis::ClientOptions options;
  options.port = static_cast<uint16_t>(std::atoi(port));
  turnpike::redis::Client client(options);
  client.Start();
  if (!client.WaitConnected(std::chrono::seconds(5)).ok()) {
    state.SkipWithError("cannot connect to redis-server");
    return;
  }
  RedisL2Store store(client);
  CacheOptions cache_options;
  cache_options.name = "bench";
  Cache cache(cache_options, &store);
  const CacheKey key = Keys()[0];
  net::io_context io;
  net::co_spawn(
      io,
      [](Cache* cache, CacheKey key, benchmark::State* state) -> net::awaitable<void> {
        auto acquire = cache->Acquire(key, kNow, 0);
        Lookup first = co_await std::move(acquire);
        auto fill = cache->Fill(first, *Body(), kNow);
        co_await std::move(fill);
        size_t misses = 0;
        for (auto _ : *state) {
          auto again = cache->Acquire(key, kNow, 0);
          Lookup lookup = co_await std::move(again);
          misses += !lookup.hit();
        }
        if (misses != 0) state->SkipWithError("a miss in the hit loop");
      }(&cache, key, &state),
      net::detached);
  io.run();
  client.Stop();
}
BENCHMARK(BM_AcquireHitRedis)->UseRealTime();

// The key of a request the door has parsed: canonical JSON + SHA-256 + key strings.
void BM_KeyOfParsedRequest(benchmark::State& state) {
  const boost::json::value request = boost::json::parse(kRequest);
  Digester digester = std::move(*Digester::Create());
  for (auto _ : state) {
    const std::string canonical = CanonicalJsonValue(request);
    CacheKey key = MakeKey("tenant-0001", "products", digester.Of(canonical));
    benchmark::DoNotOptimize(key);
  }
  state.SetBytesProcessed(state.iterations() * (sizeof(kRequest) - 1));
}
BENCHMARK(BM_KeyOfParsedRequest);

void BM_UsesNowDateMath(benchmark::State& state) {
  const boost::json::value request = boost::json::parse(kRequest);
  for (auto _ : state) benchmark::DoNotOptimize(UsesNowDateMath(request));
}
BENCHMARK(BM_UsesNowDateMath);

void BM_RestampTook(benchmark::State& state) {
  const auto envelope = Body();
  int64_t took = 0;
  for (auto _ : state) {
    TookParts parts = RestampTook(*envelope, ++took % 1000);
    benchmark::DoNotOptimize(parts);
  }
}
BENCHMARK(BM_RestampTook);

// A miss's store: insert into a full L1 (each insert evicts).
void BM_L1InsertEvicting(benchmark::State& state) {
  L1Cache l1({.max_bytes = 256 * 1024, .tenant_max_bytes = 0, .shards = 16});
  const std::vector<CacheKey> keys = Keys();
  // One envelope per key (an envelope is stored once): an evicted one is stored again when
  // its key comes round, by then released.
  std::vector<std::shared_ptr<const Envelope>> bodies;
  for (int k = 0; k < kKeys; ++k) bodies.push_back(Body());
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ % kKeys;
    l1.Insert(keys[k], bodies[k]);
  }
}
BENCHMARK(BM_L1InsertEvicting);

}  // namespace
