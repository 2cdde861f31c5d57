#include "cache/cache.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/memory_l2_store.h"
#include "run_on_loop.h"

namespace turnpike::cache {
namespace {

namespace net = boost::asio;
using testing::RunOnLoop;

constexpr int64_t kNow = 1'700'000'000'000;
constexpr auto kTtl = std::chrono::seconds(30);

CacheOptions Options(size_t workers = 1) {
  CacheOptions options;
  options.name = "search";
  options.ttl = kTtl;
  options.workers = workers;
  return options;
}

CacheKey Key(std::string_view tenant, std::string_view ns, std::string_view request) {
  static Digester digester = std::move(*Digester::Create());
  return MakeKey(tenant, ns, digester.Of(request));
}

Envelope Answer(std::string body) {
  Envelope e;
  e.content_type = "application/json";
  e.body = std::move(body);
  return e;
}

// One request through the cache: a hit returns the re-stamped body; a miss "computes" `body`
// and fills. Returns what the client would get, prefixed with the X-Cache value.
net::awaitable<std::string> Serve(Cache* cache, CacheKey key, std::string body, int64_t now,
                                  size_t worker = 0) {
  auto acquire = cache->Acquire(std::move(key), now, worker);
  Lookup lookup = co_await std::move(acquire);
  if (lookup.hit()) co_return "hit " + RestampedBody(*lookup.envelope(), 1);
  auto fill = cache->Fill(lookup, Answer(body), now);
  co_await std::move(fill);
  co_return "miss " + body;
}

std::string ServeNow(Cache& cache, CacheKey key, std::string body, int64_t now = kNow) {
  return RunOnLoop(Serve(&cache, std::move(key), std::move(body), now));
}

void InvalidateNow(Cache& cache, std::string tenant, std::string ns) {
  Status status = RunOnLoop(cache.Invalidate(std::move(tenant), std::move(ns), 0));
  EXPECT_TRUE(status.ok());
}

TEST(Cache, MissThenHitWithTookRestamped) {
  Cache cache(Options(), nullptr);
  const CacheKey key = Key("t1", "docs", "q1");
  EXPECT_EQ(ServeNow(cache, key, R"({"took":17,"hits":[]})"), R"(miss {"took":17,"hits":[]})");
  EXPECT_EQ(ServeNow(cache, key, "unused"), R"(hit {"took":1,"hits":[]})");
  EXPECT_EQ(cache.probe(0).hits.value(), 1u);
  EXPECT_EQ(cache.probe(0).misses.value(), 1u);
}

TEST(Cache, TenantsAndNamespacesDoNotShareEntries) {
  Cache cache(Options(), nullptr);
  ServeNow(cache, Key("t1", "docs", "q"), R"({"took":1,"a":1})");
  EXPECT_EQ(ServeNow(cache, Key("t2", "docs", "q"), "{}"), "miss {}");
  EXPECT_EQ(ServeNow(cache, Key("t1", "other", "q"), "{}"), "miss {}");
  EXPECT_EQ(ServeNow(cache, Key("t1", "docs", "q2"), "{}"), "miss {}");
}

TEST(Cache, AWriteInvalidatesItsNamespaceOnly) {
  Cache cache(Options(), nullptr);
  ServeNow(cache, Key("t1", "docs", "q"), "{}");
  ServeNow(cache, Key("t1", "logs", "q"), "{}");
  InvalidateNow(cache, "t1", "docs");
  EXPECT_EQ(ServeNow(cache, Key("t1", "docs", "q"), "[1]"), "miss [1]");
  EXPECT_EQ(ServeNow(cache, Key("t1", "docs", "q"), "[2]"), "hit [1]");
  EXPECT_EQ(ServeNow(cache, Key("t1", "logs", "q"), "[3]"), "hit {}");
}

TEST(Cache, AnAnswerComputedAcrossAWriteIsNeverServed) {
  Cache cache(Options(), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  RunOnLoop([](Cache* cache, CacheKey key) -> net::awaitable<int> {
    auto acquire = cache->Acquire(key, kNow, 0);
    Lookup lookup = co_await std::move(acquire);
    auto invalidate = cache->Invalidate("t1", "docs", 0);  // lands while we compute
    Status status = co_await std::move(invalidate);
    auto fill = cache->Fill(lookup, Answer("old"), kNow);
    co_await std::move(fill);
    co_return status.ok() ? 0 : 1;
  }(&cache, key));
  EXPECT_EQ(ServeNow(cache, key, "new"), "miss new");
  EXPECT_EQ(ServeNow(cache, key, "x"), "hit new");
}

TEST(Cache, EntriesExpire) {
  Cache cache(Options(), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  ServeNow(cache, key, "a");
  const int64_t ttl_ms = std::chrono::milliseconds(kTtl).count();
  EXPECT_EQ(ServeNow(cache, key, "b", kNow + ttl_ms - 1), "hit a");
  EXPECT_EQ(ServeNow(cache, key, "c", kNow + ttl_ms), "miss c");
}

TEST(Cache, TtlZeroIsOff) {
  CacheOptions options = Options();
  options.ttl = std::chrono::milliseconds(0);
  Cache cache(options, nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  ServeNow(cache, key, "a");
  EXPECT_EQ(ServeNow(cache, key, "b"), "miss b");
  EXPECT_EQ(cache.probe(0).hits.value(), 0u);
}

TEST(Cache, AnUnfilledMissReleasesItsKey) {
  Cache cache(Options(), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  RunOnLoop([](Cache* cache, CacheKey key) -> net::awaitable<bool> {
    auto acquire = cache->Acquire(key, kNow, 0);
    Lookup lookup = co_await std::move(acquire);  // an error answer: not filled
    co_return lookup.hit();
  }(&cache, key));
  EXPECT_EQ(ServeNow(cache, key, "a"), "miss a");  // leads a new flight: does not wait
}

TEST(Cache, ConcurrentMissesAreCoalesced) {
  Cache cache(Options(2), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  net::io_context io;
  std::string first, second;
  net::co_spawn(
      io,
      [](Cache* cache, CacheKey key, std::string* out) -> net::awaitable<void> {
        auto acquire = cache->Acquire(key, kNow, 0);
        Lookup lookup = co_await std::move(acquire);
        net::any_io_executor executor = co_await net::this_coro::executor;
        for (int i = 0; i < 5; ++i) {  // "compute" while the other request arrives
          auto yield = net::post(executor, net::use_awaitable);
          co_await std::move(yield);
        }
        *out = lookup.hit() ? "hit" : "miss";
        auto fill = cache->Fill(lookup, Answer(R"({"took":9})"), kNow);
        co_await std::move(fill);
      }(&cache, key, &first),
      net::detached);
  net::co_spawn(
      io,
      [](Cache* cache, CacheKey key, std::string* out) -> net::awaitable<void> {
        auto serve = Serve(cache, std::move(key), "computed twice", kNow, 1);
        *out = co_await std::move(serve);
      }(&cache, key, &second),
      net::detached);
  io.run();
  EXPECT_EQ(first, "miss");
  EXPECT_EQ(second, R"(hit {"took":1})");
  EXPECT_EQ(cache.probe(1).coalesced.value(), 1u);
  EXPECT_EQ(cache.probe(1).hits.value(), 1u);
}

// A request that misses after a write must not wait for (and take) the answer of a
// computation that started before the write.
TEST(Cache, AMissAfterAWriteDoesNotJoinAFlightFromBeforeIt) {
  Cache cache(Options(2), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  net::io_context io;
  std::string before, after;
  net::co_spawn(
      io,
      [](Cache* cache, CacheKey key, std::string* out) -> net::awaitable<void> {
        auto acquire = cache->Acquire(key, kNow, 0);
        Lookup lookup = co_await std::move(acquire);
        auto invalidate = cache->Invalidate("t1", "docs", 0);  // a write lands meanwhile
        Status status = co_await std::move(invalidate);
        net::any_io_executor executor = co_await net::this_coro::executor;
        for (int i = 0; i < 5; ++i) {  // still computing while the other request arrives
          auto yield = net::post(executor, net::use_awaitable);
          co_await std::move(yield);
        }
        *out = lookup.hit() || !status.ok() ? "unexpected" : "miss";
        auto fill = cache->Fill(lookup, Answer("before the write"), kNow);
        co_await std::move(fill);
      }(&cache, key, &before),
      net::detached);
  net::co_spawn(
      io,
      [](Cache* cache, CacheKey key, std::string* out) -> net::awaitable<void> {
        net::any_io_executor executor = co_await net::this_coro::executor;
        auto yield = net::post(executor, net::use_awaitable);
        co_await std::move(yield);  // after the write
        auto serve = Serve(cache, std::move(key), "after the write", kNow, 1);
        *out = co_await std::move(serve);
      }(&cache, key, &after),
      net::detached);
  io.run();
  EXPECT_EQ(before, "miss");
  EXPECT_EQ(after, "miss after the write");
  EXPECT_EQ(cache.probe(1).coalesced.value(), 0u);
  EXPECT_EQ(ServeNow(cache, key, "x"), "hit after the write");
}

TEST(Cache, ReplicasShareEntriesAndInvalidationThroughL2) {
  MemoryL2Store redis;
  Cache a(Options(), &redis);
  Cache b(Options(), &redis);
  const CacheKey key = Key("t1", "docs", "q");
  EXPECT_EQ(ServeNow(a, key, R"({"took":5})"), R"(miss {"took":5})");
  EXPECT_EQ(redis.gets(), 1u);
  EXPECT_EQ(redis.puts(), 1u);
  EXPECT_EQ(ServeNow(b, key, "x"), R"(hit {"took":1})");
  EXPECT_EQ(redis.gets(), 2u);  // one round trip per lookup: generation and entry together

  InvalidateNow(b, "t1", "docs");  // a write on replica b
  EXPECT_EQ(redis.bumps(), 1u);
  EXPECT_EQ(ServeNow(a, key, "fresh"), "miss fresh");
  EXPECT_EQ(ServeNow(b, key, "x"), "hit fresh");
}

TEST(Cache, AnL2OutageComputesAndStoresNothing) {
  MemoryL2Store redis;
  Cache cache(Options(), &redis);
  const CacheKey key = Key("t1", "docs", "q");
  redis.set_failing(true);
  EXPECT_EQ(ServeNow(cache, key, "a"), "miss a");
  EXPECT_EQ(redis.puts(), 0u);
  EXPECT_EQ(cache.probe(0).l2_errors.value(), 1u);
  Status status = RunOnLoop(cache.Invalidate("t1", "docs", 0));
  EXPECT_FALSE(status.ok());
  redis.set_failing(false);
  EXPECT_EQ(ServeNow(cache, key, "b"), "miss b");
  EXPECT_EQ(ServeNow(cache, key, "c"), "hit b");
}

TEST(Cache, AMalformedL2EntryIsAMiss) {
  MemoryL2Store redis;
  Cache cache(Options(), &redis);
  const CacheKey key = Key("t1", "docs", "q");
  ASSERT_TRUE(RunOnLoop(redis.Put(cache.EntryKey(key.id), "garbage", kTtl)).ok());
  EXPECT_EQ(ServeNow(cache, key, "a"), "miss a");
  EXPECT_EQ(ServeNow(cache, key, "b"), "hit a");
}

TEST(Cache, L2KeysShareTheNamespaceHashTag) {
  Cache cache(Options(), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  EXPECT_EQ(cache.GenerationKey(key.ns_id()), "tp:cache:search:g:{2:t14:docs}");
  EXPECT_TRUE(cache.EntryKey(key.id).starts_with("tp:cache:search:e:{2:t14:docs}:"));
}

TEST(Cache, MetricsPerCacheName) {
  Cache cache(Options(), nullptr);
  const CacheKey key = Key("t1", "docs", "q");
  ServeNow(cache, key, "a");
  ServeNow(cache, key, "a");
  cache.CountBypass(0);
  observability::PrometheusWriter writer;
  cache.WriteMetrics(writer);
  const std::string text = writer.Take();
  EXPECT_NE(text.find("turnpike_cache_hits_total{cache=\"search\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_cache_misses_total{cache=\"search\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_cache_bypasses_total{cache=\"search\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_cache_entries{cache=\"search\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("turnpike_cache_evictions_total{cache=\"search\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE turnpike_cache_bytes gauge"), std::string::npos);
}

TEST(CacheMode, RequestCacheParameter) {
  EXPECT_EQ(ModeFromRequestCacheParam(std::nullopt), Mode::kUse);
  EXPECT_EQ(ModeFromRequestCacheParam("true"), Mode::kUse);
  EXPECT_EQ(ModeFromRequestCacheParam("false"), Mode::kBypass);
  EXPECT_EQ(ModeFromRequestCacheParam("no"), std::nullopt);
  EXPECT_EQ(ModeFromRequestCache(std::nullopt), Mode::kUse);
  EXPECT_EQ(ModeFromRequestCache(true), Mode::kUse);
  EXPECT_EQ(ModeFromRequestCache(false), Mode::kBypass);
  EXPECT_EQ(XCacheValue(Outcome::kHit), "hit");
  EXPECT_EQ(XCacheValue(Outcome::kMiss), "miss");
  EXPECT_EQ(XCacheValue(Outcome::kBypass), "bypass");
}

}  // namespace
}  // namespace turnpike::cache
