// The per-worker upstream pool: reuse by origin, the idle bound, the idle TTL, connections that
// died while pooled, shutdown. No network: a pooled connection is an open, unconnected socket.
#include "upstream/pool.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

namespace turnpike::upstream {
namespace {

Origin OriginOf(std::string_view base_url) { return ParseOrigin(base_url, true).value(); }

class PoolTest : public ::testing::Test {
 protected:
  std::shared_ptr<UpstreamConnection> Open() {
    auto connection = std::make_shared<UpstreamConnection>(io_, nullptr);
    connection->plain.open(boost::asio::ip::tcp::v4());
    return connection;
  }
  Pool MakePool(size_t max_idle, std::chrono::milliseconds ttl = std::chrono::seconds(60)) {
    return Pool(io_, tls_, PoolOptions{max_idle, ttl});
  }

  boost::asio::io_context io_;
  TlsContexts tls_{"", false};
  const Origin a_ = OriginOf("http://127.0.0.1:9001/v1");
  const Origin b_ = OriginOf("http://127.0.0.1:9002/v1");
};

TEST_F(PoolTest, AReleasedConnectionIsReusedForItsOriginOnly) {
  Pool pool = MakePool(4);
  EXPECT_EQ(pool.Acquire(a_), nullptr);
  auto connection = Open();
  UpstreamConnection* raw = connection.get();
  pool.Release(a_, std::move(connection));
  EXPECT_EQ(pool.probe().idle.value(), 1);
  EXPECT_EQ(pool.Acquire(b_), nullptr);
  std::shared_ptr<UpstreamConnection> again = pool.Acquire(a_);
  EXPECT_EQ(again.get(), raw);
  EXPECT_EQ(pool.probe().reuses.value(), 1u);
  EXPECT_EQ(pool.probe().idle.value(), 0);
  EXPECT_EQ(pool.Acquire(a_), nullptr);
}

TEST_F(PoolTest, ConnectionsPastTheIdleBoundAreClosed) {
  Pool pool = MakePool(1);
  auto first = Open();
  auto second = Open();
  UpstreamConnection* second_raw = second.get();
  pool.Release(a_, first);
  pool.Release(a_, second);
  EXPECT_EQ(pool.probe().idle.value(), 1);
  EXPECT_TRUE(first->lowest().is_open());
  EXPECT_FALSE(second_raw->lowest().is_open());
}

TEST_F(PoolTest, DeadAndExpiredConnectionsAreNotHandedOut) {
  Pool pool = MakePool(4);
  auto dead = Open();
  pool.Release(a_, dead);
  dead->Close();  // the server closed it while it waited
  EXPECT_EQ(pool.Acquire(a_), nullptr);
  EXPECT_EQ(pool.probe().idle.value(), 0);

  Pool expiring = MakePool(4, std::chrono::milliseconds(0));
  auto old = Open();
  expiring.Release(a_, old);
  EXPECT_EQ(expiring.Acquire(a_), nullptr);
  EXPECT_FALSE(old->lowest().is_open());
}

TEST_F(PoolTest, ShutdownClosesTheIdleAndRefusesLaterReleases) {
  Pool pool = MakePool(4);
  auto idle = Open();
  pool.Release(a_, idle);
  pool.Shutdown();
  EXPECT_FALSE(idle->lowest().is_open());
  EXPECT_EQ(pool.probe().idle.value(), 0);
  auto late = Open();
  pool.Release(a_, late);
  EXPECT_FALSE(late->lowest().is_open());
  EXPECT_EQ(pool.Acquire(a_), nullptr);
}

}  // namespace
}  // namespace turnpike::upstream
