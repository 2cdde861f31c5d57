#include "doors/search/embedded/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "doors/search/es_error.h"

namespace turnpike::search::embedded {
namespace {

namespace asio = boost::asio;

std::string TempPath(const char* name) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("search_engine_test_" + std::to_string(::getpid()) + name);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p.string();
}

struct Outcomes {
  std::optional<Status> created;
  std::optional<Result<IndexInfo>> info;
  std::optional<Result<IndexInfo>> late;
};

// State as parameters (GCC 12 and coroutine lambdas).
asio::awaitable<void> Drive(Backend* backend, Outcomes* out) {
  const Deadline soon = Clock::now() + std::chrono::seconds(10);
  Mapping mapping = *ParseMapping(R"({"properties":{"g":{"type":"keyword"}}})");
  Status created = co_await backend->CreateIndex(Scope{"t1", "i"}, std::move(mapping), soon);
  out->created = created;
  Result<IndexInfo> info = co_await backend->GetIndex(Scope{"t1", "i"}, soon);
  out->info = std::move(info);
  const Deadline passed = Clock::now() - std::chrono::seconds(1);
  Result<IndexInfo> late = co_await backend->GetIndex(Scope{"t1", "i"}, passed);
  out->late = std::move(late);
}

TEST(EngineTest, CallsResumeOnTheCallerAndAPassedDeadlineIsNotRun) {
  const std::string path = TempPath("a.db");
  Result<std::unique_ptr<Engine>> engine = Engine::Open(path);
  ASSERT_TRUE(engine.ok()) << engine.error().message;
  EmbeddedBackend backend(**engine);
  asio::io_context context;
  Outcomes out;
  asio::co_spawn(context, Drive(&backend, &out), asio::detached);
  context.run();
  ASSERT_TRUE(out.created && out.info && out.late);
  EXPECT_TRUE(out.created->ok());
  ASSERT_TRUE(out.info->ok());
  EXPECT_NE((*out.info)->mapping.Find("g"), nullptr);
  ASSERT_FALSE(out.late->ok());
  EXPECT_EQ(out.late->error().code, ErrorCode::kUpstreamTimeout);
  EXPECT_EQ(EsErrorType(out.late->error()), kTimeout);
  EXPECT_EQ((*engine)->jobs_run(), 3u);
  (*engine)->Drain();  // idle: returns at once
}

TEST(EngineTest, AFullQueueRefusesAtOnceWith503) {
  Result<std::unique_ptr<Engine>> engine = Engine::Open(TempPath("b.db"), /*max_jobs=*/0);
  ASSERT_TRUE(engine.ok());
  EmbeddedBackend backend(**engine);
  asio::io_context context;
  Outcomes out;
  asio::co_spawn(context, Drive(&backend, &out), asio::detached);
  context.run();
  ASSERT_TRUE(out.created.has_value());
  ASSERT_FALSE(out.created->ok());
  EXPECT_EQ(HttpStatus(out.created->error().code), 503);
  EXPECT_EQ((*engine)->jobs_run(), 0u);
}

}  // namespace
}  // namespace turnpike::search::embedded
