// ResponseCache: a lead's answer stored in L1 (and not when it must not be), the call in flight
// joined by followers up to the cap, the registration ended with the lead, expiry, and two
// caches over one L2 sharing an entry whose replay is byte-identical.
#include "doors/llm/response_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../../model_call/scripted_call.h"
#include "cache/memory_l2_store.h"
#include "model_call/replay.h"
#include "providers/openai/openai_provider.h"

namespace turnpike::doors::llm {
namespace {

using model_call::testing::ClientSink;
using model_call::testing::ScriptedAnswer;
using model_call::testing::ScriptedCall;
namespace net = boost::asio;

constexpr int64_t kNow = 1'700'000'000'000;
const providers::openai::OpenAiProvider kOpenAi;

providers::EncoderOptions Options() {
  providers::EncoderOptions options;
  options.created = 1700000000;
  return options;
}

config::LlmCacheConfig Config() {
  config::LlmCacheConfig config;
  config.enabled = true;
  config.max_followers = 2;
  return config;
}

cache::CacheKey Key(std::string_view tenant, std::string_view request) {
  cache::Digest128 digest{};
  for (size_t i = 0; i < request.size() && i < digest.size(); ++i) {
    digest[i] = static_cast<uint8_t>(request[i]);
  }
  return cache::MakeKey(tenant, "openai 4:chat", digest);
}

LeadEnd Storing() {
  LeadEnd end;
  end.store = true;
  end.ttl = std::chrono::milliseconds(1000);
  end.usage = {11, 9, 0, 0, 0};
  return end;
}

// Runs a lead's call: the scripted answer through the lead's FanOut and a client sink that
// records its frames, ended with `error`.
std::vector<std::string> RunLead(ResponseCache::Lead& lead, const Error* error = nullptr) {
  model_call::FanOut fan_out(lead.live);
  ClientSink client(kOpenAi, Options(), &fan_out.recording());
  ScriptedCall call({&client, &fan_out});
  ScriptedAnswer answer(5);
  call.Start(model_call::testing::TranslatedStream());
  for (const auto& read : answer.Reads(3)) call.Read(read);
  call.End(error);
  return client.sent;
}

std::string Replayed(const model_call::Recording& recording) {
  model_call::Replay replay(recording, {{"openai", true}, &kOpenAi, Options()});
  std::string out;
  for (;;) {
    const model_call::ReplayStep step = replay.Next(SIZE_MAX);
    for (std::string_view frame : step.frames) out.append(frame);
    if (step.end) return out;
  }
}

TEST(ResponseCache, ALeadsAnswerIsStoredAndFoundUntilItsTtl) {
  ResponseCache cache(Config(), nullptr, 1);
  net::io_context io;
  const cache::CacheKey key = Key("t1", "q");
  ResponseCache::Lead lead = cache.StartLead(key, false, true);
  ASSERT_TRUE(lead.registered());
  const std::vector<std::string> sent = RunLead(lead);
  cache.EndLead(key, lead, Storing(), kNow, 0, io.get_executor());
  EXPECT_EQ(lead.live, nullptr);

  std::optional<StoredAnswer> found = cache.Find(key, kNow + 999);
  ASSERT_TRUE(found);
  std::string all;
  for (const std::string& frame : sent) all += frame;
  EXPECT_EQ(Replayed(*found->recording), all);
  EXPECT_EQ(found->usage.completion_tokens, 9);
  EXPECT_FALSE(cache.Find(Key("t2", "q"), kNow)) << "another tenant's key";
  EXPECT_FALSE(cache.Find(key, kNow + 1000)) << "expired";
  EXPECT_EQ(cache.probe(0).stored.value(), 1u);
}

TEST(ResponseCache, IdenticalRequestsJoinTheCallInFlightUpToTheCap) {
  ResponseCache cache(Config(), nullptr, 1);
  net::io_context io;
  const cache::CacheKey key = Key("t1", "q");
  ResponseCache::Lead lead = cache.StartLead(key, false, true);
  model_call::FollowerOptions options;
  options.replay = {{"openai", true}, &kOpenAi, Options()};
  ResponseCache::Joined first = cache.Join(key, options, io.get_executor());
  ResponseCache::Joined second = cache.Join(key, options, io.get_executor());
  ASSERT_NE(first.follower, nullptr);
  ASSERT_NE(second.follower, nullptr);
  EXPECT_FALSE(first.finished);
  EXPECT_EQ(cache.Join(key, options, io.get_executor()).follower, nullptr) << "max_followers is 2";
  EXPECT_EQ(cache.Join(Key("t1", "other"), options, io.get_executor()).follower, nullptr);
  // A second lead of the same key while the first runs is private: nobody can join it.
  ResponseCache::Lead private_lead = cache.StartLead(key, false, true);
  EXPECT_FALSE(private_lead.registered());

  first.follower.reset();
  RunLead(lead);
  // The answer ended but the lead has not stored it yet: joining now is a finished answer.
  ResponseCache::Joined late = cache.Join(key, options, io.get_executor());
  ASSERT_NE(late.follower, nullptr);
  EXPECT_TRUE(late.finished);
  cache.EndLead(key, lead, Storing(), kNow, 0, io.get_executor());
  cache.EndLead(key, private_lead, Storing(), kNow, 0, io.get_executor());
  EXPECT_EQ(cache.Join(key, options, io.get_executor()).follower, nullptr) << "the lead ended";
}

// JoinOrStartLead: the first of identical requests leads (registered), the next ones follow
// it up to the cap, one over the cap leads privately, and once the lead has ended the next
// request leads again; a follower is handed no lead.
TEST(ResponseCache, JoinOrStartLeadLeadsOnceAndFollowsUpToTheCap) {
  ResponseCache cache(Config(), nullptr, 1);
  net::io_context io;
  const cache::CacheKey key = Key("t1", "q");
  model_call::FollowerOptions options;
  options.replay = {{"openai", true}, &kOpenAi, Options()};
  ResponseCache::Started leader =
      cache.JoinOrStartLead(key, options, io.get_executor(), false, true);
  EXPECT_EQ(leader.joined.follower, nullptr);
  ASSERT_NE(leader.lead.live, nullptr);
  EXPECT_TRUE(leader.lead.registered());
  ResponseCache::Started first =
      cache.JoinOrStartLead(key, options, io.get_executor(), false, true);
  ResponseCache::Started second =
      cache.JoinOrStartLead(key, options, io.get_executor(), true, true);
  ASSERT_NE(first.joined.follower, nullptr);
  ASSERT_NE(second.joined.follower, nullptr);
  EXPECT_EQ(first.lead.live, nullptr);
  EXPECT_FALSE(first.lead.registered());
  ResponseCache::Started over = cache.JoinOrStartLead(key, options, io.get_executor(), false, true);
  EXPECT_EQ(over.joined.follower, nullptr) << "max_followers is 2";
  ASSERT_NE(over.lead.live, nullptr);
  EXPECT_FALSE(over.lead.registered()) << "a private lead: the call in flight is the key's";
  // Another key leads its own call (the key outlives its registration, which views it).
  const cache::CacheKey other_key = Key("t1", "other");
  ResponseCache::Started other =
      cache.JoinOrStartLead(other_key, options, io.get_executor(), false, true);
  EXPECT_TRUE(other.lead.registered());

  first.joined.follower.reset();
  second.joined.follower.reset();
  RunLead(leader.lead);
  cache.EndLead(key, leader.lead, Storing(), kNow, 0, io.get_executor());
  cache.EndLead(key, over.lead, Storing(), kNow, 0, io.get_executor());
  ResponseCache::Started after =
      cache.JoinOrStartLead(key, options, io.get_executor(), false, true);
  EXPECT_EQ(after.joined.follower, nullptr);
  EXPECT_TRUE(after.lead.registered()) << "the lead ended: the next request leads";
}

// Identical requests on several threads at once: exactly one leads and every other one
// follows it (none leads a private call beside it), in every round.
TEST(ResponseCache, ConcurrentIdenticalRequestsMakeOneLeadTheRestFollow) {
  config::LlmCacheConfig config = Config();
  config.max_followers = 16;
  ResponseCache cache(config, nullptr, 1);
  net::io_context io;
  model_call::FollowerOptions options;
  options.replay = {{"openai", true}, &kOpenAi, Options()};
  constexpr int kThreads = 4;
  for (int round = 0; round < 50; ++round) {
    const cache::CacheKey key = Key("t1", "q" + std::to_string(round));
    std::vector<ResponseCache::Started> started(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        started[i] = cache.JoinOrStartLead(key, options, io.get_executor(), false, true);
      });
    }
    for (std::thread& t : threads) t.join();
    int leads = 0;
    int followers = 0;
    for (const ResponseCache::Started& s : started) {
      leads += s.lead.live != nullptr ? 1 : 0;
      followers += s.joined.follower != nullptr ? 1 : 0;
    }
    ASSERT_EQ(leads, 1) << "round " << round;
    ASSERT_EQ(followers, kThreads - 1) << "round " << round;
    for (ResponseCache::Started& s : started) {
      s.joined.follower.reset();
      if (s.lead.live != nullptr) cache.EndLead(key, s.lead, LeadEnd{}, kNow, 0, io.get_executor());
    }
  }
}

TEST(ResponseCache, AFinishedCallThatStoresNothingIsNotJoined) {
  // no-store, or a TTL of 0: a request arriving after the answer ended must not be served it.
  ResponseCache cache(Config(), nullptr, 1);
  net::io_context io;
  const cache::CacheKey key = Key("t1", "q");
  ResponseCache::Lead lead = cache.StartLead(key, false, true, /*stores=*/false);
  model_call::FollowerOptions options;
  options.replay = {{"openai", true}, &kOpenAi, Options()};
  ResponseCache::Joined early = cache.Join(key, options, io.get_executor());
  ASSERT_NE(early.follower, nullptr) << "coalescing works without storing";
  early.follower.reset();
  RunLead(lead);
  EXPECT_EQ(cache.Join(key, options, io.get_executor()).follower, nullptr);
  cache.EndLead(key, lead, Storing(), kNow, 0, io.get_executor());
}

TEST(ResponseCache, NoStoreFailedCutTruncatedAndToolCallAnswersAreNotStored) {
  net::io_context io;
  const Error cut{ErrorCode::kUpstreamUnavailable, "reset", ""};
  struct Case {
    const char* name;
    size_t max_entry_bytes;
    const Error* error;
    LeadEnd end;
  };
  LeadEnd no_store = Storing();
  no_store.store = false;
  LeadEnd zero_ttl = Storing();
  zero_ttl.ttl = std::chrono::milliseconds(0);
  LeadEnd tools = Storing();
  tools.calls_tools = true;
  const Case cases[] = {
      {"no-store", 1 << 20, nullptr, no_store},
      {"ttl 0", 1 << 20, nullptr, zero_ttl},
      {"failed mid-stream", 1 << 20, &cut, Storing()},
      {"truncated", 64, nullptr, Storing()},
      {"tool calls, not allowed", 1 << 20, nullptr, tools},
  };
  for (const Case& c : cases) {
    config::LlmCacheConfig config = Config();
    config.max_entry_bytes = c.max_entry_bytes;
    ResponseCache cache(config, nullptr, 1);
    const cache::CacheKey key = Key("t1", "q");
    ResponseCache::Lead lead = cache.StartLead(key, false, true);
    RunLead(lead, c.error);
    cache.EndLead(key, lead, c.end, kNow, 0, io.get_executor());
    EXPECT_FALSE(cache.Find(key, kNow)) << c.name;
    EXPECT_EQ(cache.probe(0).not_stored.value(), 1u) << c.name;
  }
  // A plan that allows tool calls stores them.
  ResponseCache cache(Config(), nullptr, 1);
  const cache::CacheKey key = Key("t1", "q");
  ResponseCache::Lead lead = cache.StartLead(key, false, true);
  RunLead(lead);
  tools.tool_calls = true;
  cache.EndLead(key, lead, tools, kNow, 0, io.get_executor());
  EXPECT_TRUE(cache.Find(key, kNow));
}

TEST(ResponseCache, AnAbandonedCallIsNotStored) {
  ResponseCache cache(Config(), nullptr, 1);
  net::io_context io;
  const cache::CacheKey key = Key("t1", "q");
  ResponseCache::Lead lead = cache.StartLead(key, false, true);
  {
    model_call::FanOut fan_out(lead.live);
    ScriptedCall call({&fan_out});
    ScriptedAnswer answer(5);
    call.Start(model_call::testing::TranslatedStream());
    call.Read(answer.Reads(2)[0]);
  }  // the call stopped before its end
  cache.EndLead(key, lead, Storing(), kNow, 0, io.get_executor());
  EXPECT_FALSE(cache.Find(key, kNow));
}

TEST(ResponseCache, TwoCachesOverOneL2ShareAnEntryThatReplaysTheSame) {
  cache::MemoryL2Store l2;
  ResponseCache a(Config(), &l2, 1);
  ResponseCache b(Config(), &l2, 1);
  net::io_context io;
  const cache::CacheKey key = Key("t1", "q");
  ResponseCache::Lead lead = a.StartLead(key, false, true);
  RunLead(lead);
  a.EndLead(key, lead, Storing(), kNow, 0, io.get_executor());
  io.run();  // the detached L2 write
  EXPECT_EQ(l2.puts(), 1u);

  std::optional<StoredAnswer> from_l2;
  net::co_spawn(
      io,
      [](ResponseCache* cache, cache::CacheKey key,
         std::optional<StoredAnswer>* out) -> net::awaitable<void> {
        *out = co_await cache->ReadL2(key, kNow + 10, 0);
      }(&b, key, &from_l2),
      net::detached);
  io.restart();
  io.run();
  ASSERT_TRUE(from_l2);
  EXPECT_EQ(Replayed(*from_l2->recording), Replayed(*a.Find(key, kNow)->recording));
  EXPECT_EQ(from_l2->usage.prompt_tokens, 11);
  EXPECT_TRUE(b.Find(key, kNow + 10)) << "an L2 hit is kept in L1";

  // Expired in the L2's envelope: a miss. A failing L2: a miss, counted.
  std::optional<StoredAnswer> late;
  ResponseCache c(Config(), &l2, 1);
  net::co_spawn(
      io,
      [](ResponseCache* cache, cache::CacheKey key,
         std::optional<StoredAnswer>* out) -> net::awaitable<void> {
        *out = co_await cache->ReadL2(key, kNow + 5000, 0);
      }(&c, key, &late),
      net::detached);
  io.restart();
  io.run();
  EXPECT_FALSE(late);
  l2.set_failing(true);
  net::co_spawn(
      io,
      [](ResponseCache* cache, cache::CacheKey key, std::optional<StoredAnswer>* out)
          -> net::awaitable<void> { *out = co_await cache->ReadL2(key, kNow, 0); }(&c, key, &late),
      net::detached);
  io.restart();
  io.run();
  EXPECT_FALSE(late);
  EXPECT_EQ(c.probe(0).cache.l2_errors.value(), 1u);
}

}  // namespace
}  // namespace turnpike::doors::llm
