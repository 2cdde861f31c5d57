// The turns' group commit (doors/agents/turn_writer.h, AgentStore::SaveTurns) on SQLite: turns
// queued while the store thread is busy go in one transaction; each keeps its own result when
// another in its group fails.
#include "doors/agents/turn_writer.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <future>

#include "store/sqlite/engine.h"
#include "store/store_thread.h"
#include "turn_group_scenario.h"

namespace turnpike::agents {
namespace {
namespace net = boost::asio;

using testing::GroupTurn;

class TurnWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-turn-writer-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto opened = store::sqlite::OpenEngine((dir_ / "t.db").string(), {});
    ASSERT_TRUE(opened.ok());
    engine_ = std::move(opened.value());
    ASSERT_TRUE(engine_->AddRole(AgentsRole()).ok());
    ASSERT_TRUE(engine_->Migrate().ok());
    store_ = engine_->role<AgentStore>();
    for (const char* c : {"c0", "c1", "c2", "c3"}) {
      ASSERT_TRUE(store_->CreateConversation({c, "t1", "{}", 1}, {}).ok());
    }
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::sqlite::SqliteEngine> engine_;
  AgentStore* store_ = nullptr;
};

TEST_F(TurnWriterTest, AGroupKeepsEachTurnsOwnResult) {
  testing::ExpectGroupKeepsEachTurnsOwnResult(*store_);
}

struct Saves {
  int done = 0;
  int ok = 0;
};

net::awaitable<void> SaveOne(TurnWriter* writer, store::StoreThread* thread, TurnWrite write,
                             Saves* saves) {
  const Result<std::vector<ItemRow>> saved = co_await writer->Save(thread, std::move(write));
  ++saves->done;
  if (saved.ok() && saved->size() == 2) ++saves->ok;
}

net::awaitable<void> Block(store::StoreThread* thread, std::shared_future<void> until) {
  auto wait = [until](store::Engine&) -> Result<bool> {
    until.wait();
    return true;
  };
  const Result<bool> waited = co_await thread->Call<bool>(std::move(wait));
  (void)waited;
}

TEST_F(TurnWriterTest, TurnsQueuedWhileTheStoreThreadIsBusyShareOneCommit) {
  store::StoreThread thread(*engine_, {});
  thread.Start([](store::CallLogStore&, store::CallBatchParts) {}, nullptr);
  TurnWriter writer;
  net::io_context io;
  std::promise<void> release;
  net::co_spawn(io, Block(&thread, release.get_future().share()), net::detached);
  Saves saves;
  constexpr int kTurns = 4;
  for (int i = 0; i < kTurns; ++i) {
    net::co_spawn(io,
                  SaveOne(&writer, &thread,
                          GroupTurn("c" + std::to_string(i), "resp_" + std::to_string(i)), &saves),
                  net::detached);
  }
  io.poll();  // every turn's write queued and its job posted behind the blocking one
  release.set_value();
  io.run();
  EXPECT_EQ(saves.done, kTurns);
  EXPECT_EQ(saves.ok, kTurns);
  EXPECT_EQ(writer.writes(), static_cast<uint64_t>(kTurns));
  EXPECT_EQ(writer.commits(), 1u);

  // A lone turn commits alone.
  net::co_spawn(io, SaveOne(&writer, &thread, GroupTurn("c0", "resp_lone"), &saves), net::detached);
  io.restart();
  io.run();
  EXPECT_EQ(saves.ok, kTurns + 1);
  EXPECT_EQ(writer.commits(), 2u);
  thread.Stop();
  for (int i = 0; i < kTurns; ++i) {
    EXPECT_TRUE((*store_->GetResponse("resp_" + std::to_string(i))).has_value());
  }
}

TEST_F(TurnWriterTest, ARefusedWriteIsNotStored) {
  store::StoreThread thread(*engine_, {});
  thread.Start([](store::CallLogStore&, store::CallBatchParts) {}, nullptr);
  thread.CloseJobs();
  TurnWriter writer;
  net::io_context io;
  Saves saves;
  net::co_spawn(io, SaveOne(&writer, &thread, GroupTurn("c0", "resp_refused"), &saves),
                net::detached);
  io.run();
  EXPECT_EQ(saves.done, 1);
  EXPECT_EQ(saves.ok, 0);
  EXPECT_EQ(writer.writes(), 0u);
  thread.Stop();
  // Taken out of the queue: the next group does not carry it.
  store::StoreThread next(*engine_, {});
  next.Start([](store::CallLogStore&, store::CallBatchParts) {}, nullptr);
  net::co_spawn(io, SaveOne(&writer, &next, GroupTurn("c1", "resp_next"), &saves), net::detached);
  io.restart();
  io.run();
  EXPECT_EQ(saves.ok, 1);
  EXPECT_EQ(writer.writes(), 1u);
  next.Stop();
  EXPECT_FALSE((*store_->GetResponse("resp_refused")).has_value());
  EXPECT_TRUE((*store_->GetResponse("resp_next")).has_value());
}

}  // namespace
}  // namespace turnpike::agents
