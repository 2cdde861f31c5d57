// The agents role on SQLite (doors/agents/agent_store.h): versions, tenants, deletion, items in
// order with paging, a turn's transaction, stored responses, the retention purge. The same
// statements run on PostgreSQL (tests/store/postgres/schema_parity_test.cc checks the schema there;
// the integration suite runs turns on both engines).
#include "doors/agents/agent_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "retention_scenario.h"
#include "store/sqlite/engine.h"

namespace turnpike::agents {
namespace {

class AgentStoreTest : public ::testing::Test {
 protected:
  void SaveResponsesInEveryState();
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-agents-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto opened = store::sqlite::OpenEngine((dir_ / "t.db").string(), {});
    ASSERT_TRUE(opened.ok());
    engine_ = std::move(opened.value());
    ASSERT_TRUE(engine_->AddRole(AgentsRole()).ok());
    ASSERT_TRUE(engine_->Migrate().ok());
    store_ = engine_->role<AgentStore>();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }

  static Agent MakeAgent(std::string id, std::string tenant, int64_t version) {
    Agent a;
    a.id = std::move(id);
    a.tenant = std::move(tenant);
    a.version = version;
    a.model = "chat";
    a.instructions = "v" + std::to_string(version);
    return a;
  }
  static std::vector<NewItem> Items(int n, const std::string& prefix) {
    std::vector<NewItem> items;
    for (int i = 0; i < n; ++i) {
      const std::string id = prefix + std::to_string(i);
      items.push_back({id, "{\"id\":\"" + id + "\"}"});
    }
    return items;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::sqlite::SqliteEngine> engine_;
  AgentStore* store_ = nullptr;
};

TEST_F(AgentStoreTest, AgentsAreVersionedListedByTenantAndDeletedWhole) {
  ASSERT_TRUE(store_->PutAgent(MakeAgent("a", "t1", 1)).ok());
  ASSERT_TRUE(store_->PutAgent(MakeAgent("a", "t1", 2)).ok());
  ASSERT_TRUE(store_->PutAgent(MakeAgent("b", "t2", 1)).ok());
  EXPECT_EQ(store_->PutAgent(MakeAgent("a", "t1", 2)).error().code, ErrorCode::kConflict);
  EXPECT_EQ((*store_->GetAgent("a", 0))->instructions, "v2");
  EXPECT_EQ((*store_->GetAgent("a", 1))->instructions, "v1");
  EXPECT_FALSE(store_->GetAgent("a", 3)->has_value());
  EXPECT_EQ(store_->ListAgents("t1")->size(), 1u);
  EXPECT_EQ(store_->ListAgents("")->size(), 2u);
  EXPECT_TRUE(*store_->DeleteAgent("a", 100));
  EXPECT_FALSE(*store_->DeleteAgent("a", 100));
  EXPECT_FALSE(store_->GetAgent("a", 0)->has_value());
  EXPECT_FALSE(store_->GetAgent("a", 1)->has_value());
}

TEST_F(AgentStoreTest, ItemsKeepTheirOrderAndPage) {
  ASSERT_TRUE(store_->CreateConversation({"c", "t1", "{}", 1}, Items(3, "i")).ok());
  ASSERT_TRUE(store_->AppendItems("c", Items(2, "j"), 2).ok());
  Result<ItemPage> first = store_->ListItems("c", "", 2, false);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].id, "i0");
  EXPECT_TRUE(first->has_more);
  Result<ItemPage> next = store_->ListItems("c", first->items[1].id, 10, false);
  ASSERT_EQ(next->items.size(), 3u);
  EXPECT_EQ(next->items.back().id, "j1");
  EXPECT_FALSE(next->has_more);
  Result<ItemPage> newest = store_->ListItems("c", "", 1, true);
  EXPECT_EQ(newest->items[0].id, "j1");
  Result<std::vector<ItemRow>> last = store_->LastItems("c", 2);
  ASSERT_EQ(last->size(), 2u);
  EXPECT_EQ((*last)[0].id, "j0");
  EXPECT_EQ((*last)[1].id, "j1");
  EXPECT_TRUE(*store_->DeleteItem("c", "i1"));
  EXPECT_FALSE(store_->GetItem("c", "i1")->has_value());
  EXPECT_TRUE(*store_->DeleteConversation("c"));
  EXPECT_FALSE(store_->GetConversation("c")->has_value());
  EXPECT_TRUE(store_->ListItems("c", "", 10, false)->items.empty());
}

TEST_F(AgentStoreTest, ATurnStoresItsItemsAndResponseTogether) {
  ASSERT_TRUE(store_->CreateConversation({"c", "t1", "{}", 1}, {}).ok());
  TurnWrite turn;
  turn.conversation_id = "c";
  turn.items = Items(2, "k");
  turn.now = 5;
  ResponseRow r;
  r.id = "resp_1";
  r.tenant = "t1";
  r.conversation_id = "c";
  r.agent_id = "a";
  r.agent_version = 1;
  r.status = "completed";
  r.body = "{}";
  turn.response = r;
  Result<std::vector<ItemRow>> saved = store_->SaveTurn(turn);
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ((*saved)[1].seq, 2);
  EXPECT_EQ((*store_->GetItem("c", "k0"))->response_id, "resp_1");
  EXPECT_EQ((*store_->GetResponse("resp_1"))->status, "completed");
  // The same response again fails, and takes its items with it.
  turn.items = Items(1, "late");
  EXPECT_FALSE(store_->SaveTurn(turn).ok());
  EXPECT_FALSE(store_->GetItem("c", "late0")->has_value());
  EXPECT_TRUE(*store_->DeleteResponse("resp_1"));
  EXPECT_FALSE(store_->GetResponse("resp_1")->has_value());
}

TEST_F(AgentStoreTest, ABackgroundTurnIsInsertedThenUpdatedWithItsStream) {
  ResponseRow r;
  r.id = "resp_bg";
  r.tenant = "t1";
  r.agent_id = "a";
  r.agent_version = 1;
  r.status = "in_progress";
  r.body = R"({"status":"in_progress"})";
  TurnWrite start;
  start.response = r;
  ASSERT_TRUE(store_->SaveTurn(start).ok());
  EXPECT_TRUE((*store_->GetResponseEvents("resp_bg"))->events.empty());

  TurnWrite end;
  r.status = "completed";
  r.body = R"({"status":"completed"})";
  r.events = "event: a\ndata: {}\n\n";
  end.response = r;
  end.update_response = true;
  ASSERT_TRUE(store_->SaveTurn(end).ok());
  EXPECT_EQ((*store_->GetResponse("resp_bg"))->body, r.body);
  const std::optional<StoredStream> stream = *store_->GetResponseEvents("resp_bg");
  EXPECT_EQ(stream->tenant, "t1");
  EXPECT_EQ(stream->status, "completed");
  EXPECT_EQ(stream->events, r.events);
  // An update of a response that is gone (deleted while the turn ran) says so.
  end.response->id = "resp_gone";
  EXPECT_EQ(store_->SaveTurn(end).error().code, ErrorCode::kNotFound);
}

// resp_in_progress, resp_queued and resp_completed, each in the state its name says.
void AgentStoreTest::SaveResponsesInEveryState() {
  for (const char* status : {"in_progress", "queued", "completed"}) {
    TurnWrite write;
    ResponseRow r;
    r.id = std::string("resp_") + status;
    r.tenant = "t1";
    r.agent_id = "a";
    r.agent_version = 1;
    r.status = status;
    r.body = "{}";
    write.response = r;
    ASSERT_TRUE(store_->SaveTurn(write).ok());
  }
}

TEST_F(AgentStoreTest, UnendedTurnsFailAtStartUp) {
  SaveResponsesInEveryState();
  Result<int64_t> failed =
      store_->FailUnended([](std::string_view) { return std::string("{\"failed\":1}"); });
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(*failed, 2);
  EXPECT_EQ((*store_->GetResponse("resp_in_progress"))->status, "failed");
  EXPECT_EQ((*store_->GetResponse("resp_queued"))->body, "{\"failed\":1}");
  EXPECT_EQ((*store_->GetResponse("resp_completed"))->status, "completed");
  EXPECT_EQ(*store_->FailUnended([](std::string_view b) { return std::string(b); }), 0);
}

// Retention (AgentStore::PurgeExpired) on SQLite; agent_store_postgres_test.cc runs the same.
TEST_F(AgentStoreTest, RetentionPurgesByAgeInBoundedBatches) { testing::ExpectPurgeByAge(*store_); }

TEST_F(AgentStoreTest, TheSweepFailsOnlyTheOrphansStillUnended) {
  SaveResponsesInEveryState();
  Result<std::vector<std::string>> unended = store_->UnendedIds();
  ASSERT_TRUE(unended.ok());
  std::vector<std::string> ids = *unended;
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"resp_in_progress", "resp_queued"}));
  // resp_completed ended before the sweep's update: it keeps its end.
  const auto fail = [](std::string_view) { return std::string("{\"orphan\":1}"); };
  Result<int64_t> failed = store_->FailOrphans({"resp_in_progress", "resp_completed"}, fail);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(*failed, 1);
  EXPECT_EQ((*store_->GetResponse("resp_in_progress"))->status, "failed");
  EXPECT_EQ((*store_->GetResponse("resp_in_progress"))->body, "{\"orphan\":1}");
  EXPECT_EQ((*store_->GetResponse("resp_completed"))->status, "completed");
  EXPECT_EQ((*store_->GetResponse("resp_queued"))->status, "queued");
  EXPECT_EQ(*store_->UnendedIds(), std::vector<std::string>{"resp_queued"});
}

}  // namespace
}  // namespace turnpike::agents
