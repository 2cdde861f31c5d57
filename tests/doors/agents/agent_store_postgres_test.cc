// The agents role on a real PostgreSQL 15 (the statements agent_store_test.cc runs on SQLite):
// the retention purge's scenario (retention_scenario.h) and the turns' group commit's
// (turn_group_scenario.h). Skips where PostgreSQL is absent.
#include <gtest/gtest.h>

#include <filesystem>

#include "cluster.h"
#include "doors/agents/agent_store.h"
#include "retention_scenario.h"
#include "store/postgres/engine.h"
#include "turn_group_scenario.h"

namespace turnpike::agents {
namespace {

class AgentStorePostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = store::postgres::Cluster::Get();
    if (cluster_ == nullptr) GTEST_SKIP() << "PostgreSQL 15 binaries absent";
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-agents-pg-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store::postgres::EngineOptions o;
    o.url = cluster_->Url(cluster_->Fresh());
    o.pool = 1;
    o.spool_path = (dir_ / "spool").string();
    o.timeout = std::chrono::milliseconds(2'000);
    auto opened = store::postgres::OpenEngine(o);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
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

  store::postgres::Cluster* cluster_ = nullptr;
  std::filesystem::path dir_;
  std::unique_ptr<store::postgres::PostgresEngine> engine_;
  AgentStore* store_ = nullptr;
};

TEST_F(AgentStorePostgresTest, RetentionPurgesByAgeInBoundedBatches) {
  testing::ExpectPurgeByAge(*store_);
}

TEST_F(AgentStorePostgresTest, ATurnsGroupKeepsEachTurnsOwnResult) {
  for (const char* c : {"c0", "c1", "c2", "c3"}) {
    ASSERT_TRUE(store_->CreateConversation({c, "t1", "{}", 1}, {}).ok());
  }
  testing::ExpectGroupKeepsEachTurnsOwnResult(*store_);
}

}  // namespace
}  // namespace turnpike::agents
