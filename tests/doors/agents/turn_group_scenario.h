// The turns' group commit's scenario (AgentStore::SaveTurns), run on each engine's AgentStore:
// SQLite in turn_writer_test.cc, PostgreSQL in agent_store_postgres_test.cc (where an error
// aborts the whole transaction, so the group is rolled back and each turn written alone).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "doors/agents/agent_store.h"

namespace turnpike::agents::testing {

inline ResponseRow GroupResponse(const std::string& id, const std::string& conversation) {
  ResponseRow r;
  r.id = id;
  r.tenant = "t1";
  r.conversation_id = conversation;
  r.agent_id = "a";
  r.agent_version = 1;
  r.status = "completed";
  r.body = "{}";
  return r;
}

// A turn of `conversation` answered by `response`: an input and an output item.
inline TurnWrite GroupTurn(const std::string& conversation, const std::string& response) {
  TurnWrite write;
  write.conversation_id = conversation;
  write.items = {{response + "_in", "{\"id\":\"" + response + "_in\"}"},
                 {response + "_out", "{\"id\":\"" + response + "_out\"}"}};
  write.response = GroupResponse(response, conversation);
  write.now = 7;
  return write;
}

// Conversations c0..c3 of tenant t1 must exist.
inline void ExpectGroupKeepsEachTurnsOwnResult(AgentStore& store) {
  // A background response that is gone, among good turns: it fails alone.
  TurnWrite gone;
  gone.response = GroupResponse("resp_gone", "");
  gone.update_response = true;
  const TurnWrite first = GroupTurn("c0", "resp_a");
  const TurnWrite other = GroupTurn("c2", "resp_b");
  std::vector<Result<std::vector<ItemRow>>> saved = store.SaveTurns({&first, &gone, &other});
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_TRUE(saved[0].ok());
  EXPECT_EQ(saved[1].error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(saved[2].ok());
  EXPECT_EQ((*saved[2])[1].seq, 2);
  EXPECT_TRUE((*store.GetResponse("resp_b")).has_value());

  // A response id used twice fails the group's transaction: each turn is written alone, and
  // only the duplicate fails, its items with it.
  const TurnWrite late = GroupTurn("c3", "resp_c");
  const TurnWrite again = GroupTurn("c1", "resp_a");
  saved = store.SaveTurns({&late, &again});
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_TRUE(saved[0].ok());
  EXPECT_FALSE(saved[1].ok());
  EXPECT_TRUE((*store.GetItem("c3", "resp_c_in")).has_value());
  EXPECT_FALSE((*store.GetItem("c1", "resp_a_in")).has_value());
  EXPECT_EQ((*store.GetItem("c0", "resp_a_in"))->response_id, "resp_a");
}

}  // namespace turnpike::agents::testing
