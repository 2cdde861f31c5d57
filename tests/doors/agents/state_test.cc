// The agent door's in-process state (doors/agents/state.h): a conversation's one-turn slot, the
// memory and agent caches' TTL and eviction, and a turn's cancel answered once it stopped.
#include "doors/agents/state.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

namespace turnpike::agents {
namespace {
using std::chrono::milliseconds;

TEST(ConversationTableTest, OneTurnAtATime) {
  ConversationTable table;
  table.set_ttl(milliseconds(1000));
  EXPECT_TRUE(table.TryAcquire("c", "resp_1"));
  EXPECT_FALSE(table.TryAcquire("c", "resp_2"));
  EXPECT_EQ(table.Holder("c"), "resp_1");
  EXPECT_TRUE(table.TryAcquire("d", "resp_3"));
  table.Release("c");
  EXPECT_EQ(table.Holder("c"), "");
  EXPECT_TRUE(table.TryAcquire("c", "resp_2"));
}

TEST(ConversationTableTest, MemoryIsServedWithinItsTtlAndEvictedOnWrite) {
  ConversationTable table;
  table.set_ttl(milliseconds(1000));
  const SteadyClock::time_point t0 = SteadyClock::now();
  auto memory = std::make_shared<Memory>();
  memory->tenant = "t1";
  table.PutMemory("c", memory, t0);
  EXPECT_EQ(table.FindMemory("c", t0 + milliseconds(999)), memory);
  EXPECT_EQ(table.FindMemory("c", t0 + milliseconds(1000)), nullptr);
  table.PutMemory("c", memory, t0);
  table.Evict("c");
  EXPECT_EQ(table.FindMemory("c", t0), nullptr);
  // A held slot survives an eviction of the memory.
  ASSERT_TRUE(table.TryAcquire("c", "r"));
  table.PutMemory("c", memory, t0);
  table.Evict("c");
  EXPECT_EQ(table.Holder("c"), "r");
  // ttl 0: read through.
  ConversationTable off;
  off.PutMemory("c", memory, t0);
  EXPECT_EQ(off.FindMemory("c", t0), nullptr);
}

TEST(AgentCacheTest, AWriteOnThisReplicaIsSeenAtOnce) {
  AgentCache cache;
  cache.set_ttl(milliseconds(1000));
  const SteadyClock::time_point t0 = SteadyClock::now();
  auto agent = std::make_shared<const Agent>();
  cache.Put("a", agent, t0);
  EXPECT_EQ(cache.Find("a", t0), agent);
  EXPECT_EQ(cache.Find("a", t0 + milliseconds(1000)), nullptr) << "expired";
  cache.Bump();
  EXPECT_EQ(cache.Find("a", t0), nullptr) << "a write evicts";
}

TEST(TurnRegistryTest, ACancelIsAnsweredOnceTheTurnHasStopped) {
  boost::asio::io_context io;
  TurnRegistry registry;
  auto turn = std::make_shared<TurnControl>(io.get_executor(), "t1");
  int abandoned = 0;
  turn->SetAbandon([&] { ++abandoned; });
  registry.Add("resp_1", turn);
  std::string answer;
  EXPECT_FALSE(registry.Cancel("resp_1", "t2", nullptr)) << "another tenant's";
  EXPECT_FALSE(registry.Cancel("resp_9", "t1", nullptr));
  EXPECT_TRUE(registry.Cancel("resp_1", "t1", [&](std::string r) { answer = std::move(r); }));
  EXPECT_TRUE(turn->cancelled());
  io.run();
  io.restart();
  EXPECT_EQ(abandoned, 1) << "the call is stopped on the turn's worker";
  EXPECT_EQ(answer, "") << "not before the turn stopped";
  turn->Stopped("{\"status\":\"cancelled\"}");
  EXPECT_EQ(answer, "{\"status\":\"cancelled\"}");
  // After the stop: answered at once with the same object.
  std::string late;
  turn->Cancel([&](std::string r) { late = std::move(r); });
  io.run();
  EXPECT_EQ(late, "{\"status\":\"cancelled\"}");
  registry.Remove("resp_1");
  EXPECT_FALSE(registry.Cancel("resp_1", "t1", nullptr));
}

}  // namespace
}  // namespace turnpike::agents
