// The retention purge's scenario (AgentStore::PurgeExpired), run on each engine's AgentStore:
// SQLite in retention_test.cc, PostgreSQL in agent_store_postgres_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "doors/agents/agent_store.h"

namespace turnpike::agents::testing {

inline std::vector<NewItem> OneItem(const std::string& id) {
  return {{id, "{\"id\":\"" + id + "\"}"}};
}

inline void StoreResponse(AgentStore& store, const std::string& id, const std::string& status,
                          int64_t created_at) {
  TurnWrite write;
  ResponseRow row;
  row.id = id;
  row.tenant = "t1";
  row.agent_id = "a";
  row.agent_version = 1;
  row.status = status;
  row.body = "{}";
  row.created_at = created_at;
  write.response = row;
  write.now = created_at;
  ASSERT_TRUE(store.SaveTurn(write).ok());
}

// Times are unix seconds; the cutoff is 500. Expired: a completed response created at 100, a
// conversation created at 100 with no item, one created at 100 whose newest item is from 200.
// Kept: a newer response, an older one still in progress, a conversation created at 100 but
// active at 1000, one created at 1000. Each run deletes at most `limit` (1) of each kind.
inline void ExpectPurgeByAge(AgentStore& store) {
  StoreResponse(store, "resp_old", "completed", 100);
  StoreResponse(store, "resp_new", "completed", 1000);
  StoreResponse(store, "resp_running", "in_progress", 100);
  ASSERT_TRUE(store.CreateConversation({"conv_old", "t1", "{}", 100}, {}).ok());
  ASSERT_TRUE(store.CreateConversation({"conv_stale", "t1", "{}", 100}, OneItem("i1")).ok());
  ASSERT_TRUE(store.AppendItems("conv_stale", OneItem("i2"), 200).ok());
  ASSERT_TRUE(store.CreateConversation({"conv_active", "t1", "{}", 100}, OneItem("i3")).ok());
  ASSERT_TRUE(store.AppendItems("conv_active", OneItem("i4"), 1000).ok());
  ASSERT_TRUE(store.CreateConversation({"conv_new", "t1", "{}", 1000}, OneItem("i5")).ok());

  Result<PurgeResult> first = store.PurgeExpired(500, 1);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->responses, std::vector<std::string>{"resp_old"});
  ASSERT_EQ(first->conversations.size(), 1u);
  Result<PurgeResult> second = store.PurgeExpired(500, 1);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->responses.empty());
  ASSERT_EQ(second->conversations.size(), 1u);
  std::vector<std::string> purged = {first->conversations[0], second->conversations[0]};
  std::sort(purged.begin(), purged.end());
  EXPECT_EQ(purged, (std::vector<std::string>{"conv_old", "conv_stale"}));
  Result<PurgeResult> third = store.PurgeExpired(500, 1);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->responses.empty());
  EXPECT_TRUE(third->conversations.empty());

  EXPECT_FALSE(store.GetResponse("resp_old")->has_value());
  EXPECT_TRUE(store.GetResponse("resp_new")->has_value());
  EXPECT_TRUE(store.GetResponse("resp_running")->has_value());
  EXPECT_FALSE(store.GetConversation("conv_old")->has_value());
  EXPECT_FALSE(store.GetConversation("conv_stale")->has_value());
  EXPECT_FALSE(store.GetItem("conv_stale", "i2")->has_value());
  EXPECT_TRUE(store.ListItems("conv_stale", "", 10, false)->items.empty());
  EXPECT_TRUE(store.GetConversation("conv_active")->has_value());
  EXPECT_EQ(store.ListItems("conv_active", "", 10, false)->items.size(), 2u);
  EXPECT_TRUE(store.GetConversation("conv_new")->has_value());
}

}  // namespace turnpike::agents::testing
