// The cache's per-request allocations, counted with a replaced global operator new (counts,
// never timings): an L1 hit allocates nothing beyond the key the door builds, and a miss's
// extra cost is recorded here, so adding one shows up as a failing budget.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <span>
#include <string>
#include <string_view>

#include "cache/cache.h"
#include "cache/request_digest.h"
#include "counting_new.h"

namespace turnpike::cache {
namespace {

namespace net = boost::asio;

constexpr int kWarmup = 8;
constexpr int kCounted = 200;
constexpr int64_t kNow = 1'700'000'000'000;

// Budgets (allocations per request). Raising one is a decision made in the same change.
constexpr size_t kMakeKeyBudget = 1;  // the key's string (ns_id is its prefix)
// Acquire's coroutine frame: the build takes frames from operator new, not from Asio's recycling
// (the turnpike executable's operator new serves them from a per-thread cache,
// common/small_blocks.h); nothing else.
constexpr size_t kAcquireHitBudget = 1;
constexpr size_t kL1FindHitBudget = 0;
constexpr size_t kDigestBudget = 0;
constexpr size_t kRequestDigestBudget = 0;  // a warm RequestDigester reuses its scratch

class Counting {
 public:
  Counting() { testing::StartCountingAllocations(); }
  ~Counting() { testing::StopCountingAllocations(); }
  size_t count() const { return testing::CountedAllocations(); }
};

Digest128 SomeDigest() {
  Digest128 digest{};
  digest[0] = 7;
  return digest;
}

TEST(CacheAllocations, MakeKeyAndDigest) {
  Result<Digester> digester = Digester::Create();
  ASSERT_TRUE(digester.ok());
  const std::string request(300, 'q');
  for (int i = 0; i < kWarmup; ++i) (void)digester->Of(request);
  size_t digest_allocations = 0, key_allocations = 0;
  {
    Counting counted;
    for (int i = 0; i < kCounted; ++i) (void)digester->Of(request);
    digest_allocations = counted.count();
  }
  {
    Counting counted;
    for (int i = 0; i < kCounted; ++i) {
      CacheKey key = MakeKey("tenant-0001", "products", SomeDigest());
    }
    key_allocations = counted.count();
  }
  EXPECT_EQ(digest_allocations, kDigestBudget * kCounted);
  EXPECT_EQ(key_allocations, kMakeKeyBudget * kCounted);
}

// kCounted digests of `body` by a warm `digester`: each one succeeds, and together they
// allocate kRequestDigestBudget each.
void ExpectWarmDigestsWithinBudget(RequestDigester& digester, const std::string& body,
                                   std::span<const std::string_view> excluded) {
  size_t digested = 0;
  Counting counted;
  for (int i = 0; i < kCounted; ++i) digested += digester.Of(body, excluded).ok();
  const size_t count = counted.count();
  EXPECT_EQ(digested, size_t{kCounted});
  EXPECT_EQ(count, kRequestDigestBudget * kCounted);
}

// A chat body whose objects are out of order at every depth (sorted in the scratch), with
// escapes, numbers to normalise and excluded members.
TEST(CacheAllocations, RequestDigestWarm) {
  std::string body = R"({"stream":true,"model":"m","temperature":0.70,"messages":[)";
  for (int i = 0; i < 20; ++i) {
    body += R"({"role":"user","content":"turn \u00e9\n)" + std::to_string(i) + R"("},)";
    body += R"({"role":"assistant","content":null,"tool_calls":[{"type":"function","id":"c",)"
            R"("function":{"name":"f","arguments":"{}"}}]},)";
  }
  body += R"({"role":"user","content":"last"}],"user":"u"})";
  const std::array<std::string_view, 2> excluded = {"stream", "user"};
  RequestDigester digester(7);
  for (int i = 0; i < kWarmup; ++i) ASSERT_TRUE(digester.Of(body, excluded).ok());
  ExpectWarmDigestsWithinBudget(digester, body, excluded);
}

// A small body (the small path: request_digest_small.h), out of order at two depths, with an
// escape, numbers to normalise and an excluded member.
TEST(CacheAllocations, RequestDigestSmallWarm) {
  const std::string body =
      R"({"stream":true,"messages":[{"content":"Say \"hello\"!","role":"user"}],)"
      R"("model":"m","temperature":0.70,"max_tokens":20})";
  const std::array<std::string_view, 2> excluded = {"stream", "user"};
  RequestDigester digester(7);
  for (int i = 0; i < kWarmup; ++i) ASSERT_TRUE(digester.Of(body, excluded).ok());
  ASSERT_TRUE(digester.took_small_path());
  ExpectWarmDigestsWithinBudget(digester, body, excluded);
}

TEST(CacheAllocations, L1FindHit) {
  L1Cache l1({});
  const CacheKey key = MakeKey("tenant-0001", "products", SomeDigest());
  auto envelope = std::make_shared<Envelope>();
  envelope->body.assign(2000, 'x');
  envelope->expires_at_ms = kNow + 1000;
  ASSERT_TRUE(l1.Insert(key, envelope));
  size_t hits = 0;
  Counting counted;
  for (int i = 0; i < kCounted; ++i) hits += l1.Find(key.id, 0, kNow) != nullptr;
  const size_t count = counted.count();
  EXPECT_EQ(hits, size_t{kCounted});
  EXPECT_EQ(count, kL1FindHitBudget * kCounted);
}

// Acquire hits in a loop on one event loop, as a worker serves them; the keys are built before
// counting (their cost is kMakeKeyBudget, above).
net::awaitable<void> AcquireHits(Cache* cache, std::vector<CacheKey>* keys, int warmup,
                                 size_t* counted_allocations, size_t* hits) {
  for (size_t i = 0; i < keys->size(); ++i) {
    if (static_cast<int>(i) == warmup) testing::StartCountingAllocations();
    auto acquire = cache->Acquire(std::move((*keys)[i]), kNow, 0);
    Lookup lookup = co_await std::move(acquire);
    *hits += lookup.hit();
  }
  *counted_allocations = testing::StopCountingAllocations();
}

TEST(CacheAllocations, AcquireHitWithoutL2) {
  CacheOptions options;
  options.name = "search";
  Cache cache(options, nullptr);
  const CacheKey key = MakeKey("tenant-0001", "products", SomeDigest());
  net::io_context io;
  net::co_spawn(
      io,
      [](Cache* cache, CacheKey key) -> net::awaitable<void> {
        auto acquire = cache->Acquire(key, kNow, 0);
        Lookup lookup = co_await std::move(acquire);
        Envelope answer;
        answer.body = R"({"took":3,"hits":{"hits":[]}})";
        auto fill = cache->Fill(lookup, std::move(answer), kNow);
        co_await std::move(fill);
      }(&cache, key),
      net::detached);
  io.run();
  io.restart();

  std::vector<CacheKey> keys(kWarmup + kCounted, key);
  size_t count = 0, hits = 0;
  net::co_spawn(io, AcquireHits(&cache, &keys, kWarmup, &count, &hits), net::detached);
  io.run();
  EXPECT_EQ(hits, size_t{kWarmup + kCounted});
  EXPECT_EQ(count, kAcquireHitBudget * kCounted);
}

}  // namespace
}  // namespace turnpike::cache
