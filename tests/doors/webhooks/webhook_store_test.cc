// The webhooks role on SQLite (doors/webhooks/webhook_store.h): the scenario both engines run
// (store_scenario.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/sqlite/engine.h"
#include "store_scenario.h"

namespace turnpike::webhooks {
namespace {

class WebhookStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("turnpike-webhooks-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto opened = store::sqlite::OpenEngine((dir_ / "t.db").string(), {});
    ASSERT_TRUE(opened.ok());
    engine_ = std::move(opened.value());
    ASSERT_TRUE(engine_->AddRole(WebhooksRole()).ok());
    ASSERT_TRUE(engine_->Migrate().ok());
    store_ = engine_->role<WebhookStore>();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::sqlite::SqliteEngine> engine_;
  WebhookStore* store_ = nullptr;
};

TEST_F(WebhookStoreTest, OutboxLifecycle) { testing::ExpectOutboxLifecycle(*store_); }

TEST_F(WebhookStoreTest, AlertsFireOncePerTenantAndMonth) { testing::ExpectAlertsOnce(*store_); }

TEST(WebhookSubscriptions, EmptyOrStarMeansEveryEvent) {
  EXPECT_TRUE(Subscribed("", "budget.exceeded"));
  EXPECT_TRUE(Subscribed("*", "budget.exceeded"));
  EXPECT_TRUE(Subscribed("response.completed,budget.exceeded", "budget.exceeded"));
  EXPECT_FALSE(Subscribed("response.completed,budget.exceeded", "budget.exceede"));
  EXPECT_FALSE(Subscribed("response.completed", "response.failed"));
}

TEST(WebhookIds, DeliveryIdsSortByCreation) {
  EXPECT_LT(MintDeliveryId(1'700'000'000'000), MintDeliveryId(1'700'000'000'001));
  EXPECT_EQ(MintDeliveryId(1).size(), 4u + 12u + 16u);
}

}  // namespace
}  // namespace turnpike::webhooks
