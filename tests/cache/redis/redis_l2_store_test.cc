// The cache's L2 over a real redis-server (started by the test on a free loopback port) through
// the fleet's Redis client: two caches stand for two replicas sharing one Redis.
#include "cache/redis/redis_l2_store.h"

#include <gtest/gtest.h>

#include "../redis_server.h"
#include "../run_on_loop.h"
#include "cache/cache.h"
#include "redis/client.h"

namespace turnpike::cache {
namespace {

namespace net = boost::asio;
using testing::RedisServer;
using testing::RunOnLoop;

constexpr int64_t kNow = 1'700'000'000'000;
constexpr auto kTtl = std::chrono::seconds(30);
constexpr auto kConnectWait = std::chrono::seconds(5);

CacheOptions Options() {
  CacheOptions options;
  options.name = "search";
  options.ttl = kTtl;
  return options;
}

CacheKey Key(std::string_view tenant, std::string_view ns, std::string_view request) {
  static Digester digester = std::move(*Digester::Create());
  return MakeKey(tenant, ns, digester.Of(request));
}

net::awaitable<std::string> Serve(Cache* cache, CacheKey key, std::string body) {
  auto acquire = cache->Acquire(std::move(key), kNow, 0);
  Lookup lookup = co_await std::move(acquire);
  if (lookup.hit()) co_return "hit " + RestampedBody(*lookup.envelope(), 1);
  Envelope answer;
  answer.content_type = "application/json";
  answer.body = body;
  auto fill = cache->Fill(lookup, std::move(answer), kNow);
  co_await std::move(fill);
  co_return "miss " + body;
}

std::string ServeNow(Cache& cache, const CacheKey& key, std::string body) {
  return RunOnLoop(Serve(&cache, key, std::move(body)));
}

class RedisL2StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RedisServer::Start();
    // scripts/deps.sh --test installs redis-server: not finding it is a failure, not a skip.
    ASSERT_TRUE(server_) << "redis-server could not be started";
    redis::ClientOptions options;
    options.port = server_->port();
    options.command_timeout = std::chrono::milliseconds(500);
    client_ = std::make_unique<redis::Client>(options);
    client_->Start();
    ASSERT_TRUE(client_->WaitConnected(kConnectWait).ok());
    store_ = std::make_unique<RedisL2Store>(*client_);
  }
  void TearDown() override {
    if (client_) client_->Stop();
  }

  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<redis::Client> client_;
  std::unique_ptr<RedisL2Store> store_;
};

TEST_F(RedisL2StoreTest, GetPutBumpAgainstARealServer) {
  Result<L2Read> empty = RunOnLoop(store_->Get("g", "e"));
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_EQ(empty->generation, 0u);
  EXPECT_FALSE(empty->entry);

  ASSERT_TRUE(RunOnLoop(store_->Put("e", std::string("a\0b", 3), kTtl)).ok());
  Result<uint64_t> bumped = RunOnLoop(store_->Bump("g"));
  ASSERT_TRUE(bumped.ok());
  EXPECT_EQ(*bumped, 1u);
  Result<L2Read> read = RunOnLoop(store_->Get("g", "e"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->generation, 1u);
  EXPECT_EQ(read->entry, std::string("a\0b", 3));  // binary-safe
  EXPECT_EQ(client_->commands(redis::Op::kCacheGet), 2u);
  EXPECT_EQ(client_->commands(redis::Op::kCachePut), 1u);
  EXPECT_EQ(client_->commands(redis::Op::kCacheBump), 1u);
}

TEST_F(RedisL2StoreTest, ANonNumericGenerationIsAnError) {
  ASSERT_TRUE(RunOnLoop(store_->Put("g", "not a number", kTtl)).ok());
  Result<L2Read> read = RunOnLoop(store_->Get("g", "e"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kUpstreamBadResponse);
}

TEST_F(RedisL2StoreTest, ReplicasShareEntriesAndAWriteOnOneInvalidatesTheOther) {
  Cache a(Options(), store_.get());
  Cache b(Options(), store_.get());
  const CacheKey key = Key("t1", "docs", "q");
  EXPECT_EQ(ServeNow(a, key, R"({"took":5,"n":1})"), R"(miss {"took":5,"n":1})");
  EXPECT_EQ(ServeNow(b, key, "x"), R"(hit {"took":1,"n":1})");
  Status invalidated = RunOnLoop(b.Invalidate("t1", "docs", 0));
  ASSERT_TRUE(invalidated.ok());
  EXPECT_EQ(ServeNow(a, key, R"({"took":2,"n":2})"), R"(miss {"took":2,"n":2})");
  EXPECT_EQ(ServeNow(b, key, "x"), R"(hit {"took":1,"n":2})");
  // Another tenant's same request is its own entry.
  EXPECT_EQ(ServeNow(b, Key("t2", "docs", "q"), "{}"), "miss {}");
  // One MGET per lookup, one SET per fill, one INCR per write.
  EXPECT_EQ(client_->commands(redis::Op::kCacheGet), 5u);
  EXPECT_EQ(client_->commands(redis::Op::kCachePut), 3u);
  EXPECT_EQ(client_->commands(redis::Op::kCacheBump), 1u);
}

TEST_F(RedisL2StoreTest, RedisDownMeansComputeNotHang) {
  Cache cache(Options(), store_.get());
  const CacheKey key = Key("t1", "docs", "q");
  server_->Stop();
  EXPECT_EQ(ServeNow(cache, key, "a"), "miss a");
  EXPECT_EQ(ServeNow(cache, key, "b"), "miss b");
  EXPECT_GE(cache.probe(0).l2_errors.value(), 2u);
  EXPECT_FALSE(RunOnLoop(cache.Invalidate("t1", "docs", 0)).ok());

  // Back (empty): the client re-dials and the cache works again.
  ASSERT_TRUE(server_->Restart());
  ASSERT_TRUE(client_->WaitConnected(kConnectWait).ok());
  EXPECT_EQ(ServeNow(cache, key, "c"), "miss c");
  EXPECT_EQ(ServeNow(cache, key, "d"), "hit c");
}

}  // namespace
}  // namespace turnpike::cache
