// The webhooks role on a real PostgreSQL 15 (skips without it): the scenario of
// store_scenario.h, and two replicas claiming one outbox at once never take the same delivery.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "cluster.h"
#include "store/postgres/engine.h"
#include "store_scenario.h"

namespace turnpike::webhooks {
namespace {

class WebhookStorePostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = store::postgres::Cluster::Get();
    if (cluster_ == nullptr) GTEST_SKIP() << "PostgreSQL 15 binaries absent";
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-webhooks-pg-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    url_ = cluster_->Url(cluster_->Fresh());
    engine_ = Open("a");
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(engine_->Migrate().ok());
    store_ = engine_->role<WebhookStore>();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<store::postgres::PostgresEngine> Open(const std::string& name) {
    store::postgres::EngineOptions o;
    o.url = url_;
    o.pool = 1;
    o.spool_path = (dir_ / (name + ".spool")).string();
    o.timeout = std::chrono::milliseconds(5'000);
    auto opened = store::postgres::OpenEngine(o);
    if (!opened.ok()) return nullptr;
    if (!opened.value()->AddRole(WebhooksRole()).ok()) return nullptr;
    return std::move(opened.value());
  }

  store::postgres::Cluster* cluster_ = nullptr;
  std::filesystem::path dir_;
  std::string url_;
  std::unique_ptr<store::postgres::PostgresEngine> engine_;
  WebhookStore* store_ = nullptr;
};

TEST_F(WebhookStorePostgresTest, OutboxLifecycle) { testing::ExpectOutboxLifecycle(*store_); }

TEST_F(WebhookStorePostgresTest, AlertsFireOncePerTenantAndMonth) {
  testing::ExpectAlertsOnce(*store_);
}

TEST_F(WebhookStorePostgresTest, TwoReplicasNeverClaimTheSameDelivery) {
  constexpr int kDeliveries = 300;
  ASSERT_TRUE(store_->CreateEndpoint(testing::Endpoint("wh_a", "t1")).ok());
  const int64_t t0 = 1'700'000'000'000;
  for (int i = 0; i < kDeliveries; ++i) {
    ASSERT_EQ(*store_->Enqueue({"t1", "x", "{}"}, t0 + i), 1);
  }
  std::unique_ptr<store::postgres::PostgresEngine> other = Open("b");
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Migrate().ok());
  WebhookStore* replicas[] = {store_, other->role<WebhookStore>()};
  std::vector<std::string> claimed[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      for (;;) {
        Result<std::vector<DueDelivery>> due = replicas[r]->Claim(t0 + kDeliveries, 60'000, 7);
        if (!due.ok() || due->empty()) return;
        for (const DueDelivery& d : *due) claimed[r].push_back(d.row.id);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<std::string> all(claimed[0].begin(), claimed[0].end());
  all.insert(claimed[1].begin(), claimed[1].end());
  EXPECT_EQ(claimed[0].size() + claimed[1].size(), static_cast<size_t>(kDeliveries));
  EXPECT_EQ(all.size(), static_cast<size_t>(kDeliveries));  // none twice
}

}  // namespace
}  // namespace turnpike::webhooks
