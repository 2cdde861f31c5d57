// The per-worker upstream pool: reuse by origin, idle kept up to the recent peak of exchanges
// in flight (under the hard cap), the reaper (TTL, connections the peer closed, surplus over
// the peak), the active cap's queue, shutdown. The reaper and the peak window are driven by
// explicit time points (Reap(now)), never by the wall clock.
#include "upstream/pool.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <optional>

namespace turnpike::upstream {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;

Origin OriginOf(std::string_view base_url) { return ParseOrigin(base_url, true).value(); }

class PoolTest : public ::testing::Test {
 protected:
  std::shared_ptr<UpstreamConnection> Open() {
    auto connection = std::make_shared<UpstreamConnection>(io_, nullptr);
    connection->plain.open(asio::ip::tcp::v4());
    return connection;
  }
  // A connection to a real listener on loopback, with the server's end (to close or write).
  std::pair<std::shared_ptr<UpstreamConnection>, asio::ip::tcp::socket> Connected() {
    auto connection = std::make_shared<UpstreamConnection>(io_, nullptr);
    connection->plain.connect(acceptor_.local_endpoint());
    asio::ip::tcp::socket server(io_);
    acceptor_.accept(server);
    return {connection, std::move(server)};
  }
  Pool MakePool(size_t max_idle, milliseconds ttl = seconds(60), size_t max_active = 0) {
    PoolOptions options;
    options.max_idle_per_origin = max_idle;
    options.idle_ttl = ttl;
    options.max_active_per_origin = max_active;
    options.reap_interval = milliseconds(0);  // the tests call Reap()
    return Pool(io_, tls_, options);
  }
  // `n` exchanges in flight to `origin` on connected sockets (an unconnected one polls as
  // hung up), each then giving its connection back.
  std::vector<std::shared_ptr<UpstreamConnection>> Burst(Pool& pool, const Origin& origin,
                                                         size_t n) {
    std::vector<std::shared_ptr<UpstreamConnection>> connections;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_TRUE(pool.TryEnter(origin));
      auto [connection, server] = Connected();
      connections.push_back(connection);
      servers_.push_back(std::move(server));
    }
    for (auto& connection : connections) {
      pool.Release(origin, connection);
      pool.Leave(origin);
    }
    return connections;
  }

  asio::io_context io_;
  TlsContexts tls_{"", false};
  asio::ip::tcp::acceptor acceptor_{io_, {asio::ip::make_address("127.0.0.1"), 0}};
  std::vector<asio::ip::tcp::socket> servers_;  // the far ends of Burst()'s connections
  const Origin a_ = OriginOf("http://127.0.0.1:9001/v1");
  const Origin b_ = OriginOf("http://127.0.0.1:9002/v1");
};

// A socket bound to a loopback port and connected to that same address opens onto itself (TCP
// simultaneous open), as a connect to a free ephemeral port can by chance.
TEST_F(PoolTest, AConnectionToItselfIsToldFromOneToAListener) {
  auto self = std::make_shared<UpstreamConnection>(io_, nullptr);
  self->plain.open(asio::ip::tcp::v4());
  self->plain.bind({asio::ip::make_address("127.0.0.1"), 0});
  const asio::ip::tcp::endpoint own = self->plain.local_endpoint();
  boost::system::error_code ec;
  self->plain.connect(own, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_TRUE(self->ConnectedToItself(own));

  auto [other, server] = Connected();
  EXPECT_FALSE(other->ConnectedToItself(acceptor_.local_endpoint()));
}

TEST_F(PoolTest, AReleasedConnectionIsReusedForItsOriginOnly) {
  Pool pool = MakePool(4);
  ASSERT_TRUE(pool.TryEnter(a_));
  EXPECT_EQ(pool.Acquire(a_), nullptr);
  auto connection = Open();
  UpstreamConnection* raw = connection.get();
  pool.Release(a_, std::move(connection));
  pool.Leave(a_);
  EXPECT_EQ(pool.probe().idle.value(), 1);
  EXPECT_EQ(pool.Acquire(b_), nullptr);
  std::shared_ptr<UpstreamConnection> again = pool.Acquire(a_);
  EXPECT_EQ(again.get(), raw);
  EXPECT_EQ(pool.probe().reuses.value(), 1u);
  EXPECT_EQ(pool.probe().idle.value(), 0);
  EXPECT_EQ(pool.Acquire(a_), nullptr);
}

TEST_F(PoolTest, IdleIsKeptUpToTheRecentPeakOfExchangesInFlight) {
  Pool pool = MakePool(1000);
  const auto t0 = Clock::now();
  pool.Reap(t0);  // a window starts
  auto connections = Burst(pool, a_, 300);
  EXPECT_EQ(pool.RecentPeak(a_), 300u);
  EXPECT_EQ(pool.IdleCount(a_), 300u);  // the old bound of 64 would have closed 236
  for (auto& connection : connections) EXPECT_TRUE(connection->lowest().is_open());

  // Nothing in flight afterwards: the peak is remembered for its window and the next.
  pool.Reap(t0 + seconds(5));
  EXPECT_EQ(pool.IdleCount(a_), 300u);
  pool.Reap(t0 + seconds(11));  // the burst's window is now the previous one
  EXPECT_EQ(pool.IdleCount(a_), 300u);
  pool.Reap(t0 + seconds(22));  // and now forgotten: nothing was in flight since
  EXPECT_EQ(pool.RecentPeak(a_), 0u);
  EXPECT_EQ(pool.IdleCount(a_), 0u);
  EXPECT_EQ(pool.probe().reaped.value(), 300u);
  EXPECT_EQ(pool.probe().idle.value(), 0);
}

TEST_F(PoolTest, TheHardCapBoundsIdleAboveThePeak) {
  Pool pool = MakePool(100);
  auto connections = Burst(pool, a_, 300);
  EXPECT_EQ(pool.IdleCount(a_), 100u);
  size_t open = 0;
  for (auto& connection : connections) open += connection->lowest().is_open() ? 1 : 0;
  EXPECT_EQ(open, 100u);
}

TEST_F(PoolTest, IdleNeverExceedsTheRecentPeak) {
  Pool pool = MakePool(100);
  ASSERT_TRUE(pool.TryEnter(a_));
  ASSERT_TRUE(pool.TryEnter(a_));  // peak 2
  for (int i = 0; i < 2; ++i) {
    pool.Release(a_, Open());
    pool.Leave(a_);
  }
  EXPECT_EQ(pool.IdleCount(a_), 2u);
  ASSERT_TRUE(pool.TryEnter(a_));  // one in flight that opened a connection of its own
  auto third = Open();
  pool.Release(a_, third);
  pool.Leave(a_);
  EXPECT_EQ(pool.IdleCount(a_), 2u);
  EXPECT_FALSE(third->lowest().is_open());
}

TEST_F(PoolTest, TheReaperClosesAConnectionThePeerClosedAndOnePastItsTtl) {
  Pool pool = MakePool(10, seconds(60));
  ASSERT_TRUE(pool.TryEnter(a_));
  ASSERT_TRUE(pool.TryEnter(a_));
  ASSERT_TRUE(pool.TryEnter(a_));
  auto [closed_by_peer, server1] = Connected();
  auto [healthy, server2] = Connected();
  auto [old, server3] = Connected();
  for (const auto& connection : {old, closed_by_peer, healthy}) {
    pool.Release(a_, connection);
    pool.Leave(a_);
  }
  old->idle_since -= seconds(61);
  server1.close();

  pool.Reap(Clock::now());
  EXPECT_EQ(pool.IdleCount(a_), 1u);
  EXPECT_FALSE(closed_by_peer->lowest().is_open());
  EXPECT_FALSE(old->lowest().is_open());
  EXPECT_TRUE(healthy->lowest().is_open());
  EXPECT_EQ(pool.probe().reaped.value(), 2u);

  // Bytes from the origin on an idle HTTP/1.1 connection make it unusable too.
  const char stray[] = "x";
  asio::write(server2, asio::buffer(stray, 1));
  pool.Reap(Clock::now());
  EXPECT_EQ(pool.IdleCount(a_), 0u);
  EXPECT_FALSE(healthy->lowest().is_open());
  EXPECT_EQ(pool.probe().idle.value(), 0);
}

TEST_F(PoolTest, AcquireSkipsDeadAndExpiredConnections) {
  Pool pool = MakePool(4);
  ASSERT_TRUE(pool.TryEnter(a_));
  auto dead = Open();
  pool.Release(a_, dead);
  dead->Close();  // the server closed it while it waited
  EXPECT_EQ(pool.Acquire(a_), nullptr);
  EXPECT_EQ(pool.probe().idle.value(), 0);

  Pool expiring = MakePool(4, milliseconds(0));
  ASSERT_TRUE(expiring.TryEnter(a_));
  auto old = Open();
  expiring.Release(a_, old);
  EXPECT_EQ(expiring.Acquire(a_), nullptr);
  EXPECT_FALSE(old->lowest().is_open());
}

asio::awaitable<void> WaitForSlot(Pool& pool, Origin origin, std::optional<bool>& result) {
  SlotWaiter waiter(pool, origin);
  const bool granted = co_await waiter.Wait(seconds(30));
  result = granted;
}

TEST_F(PoolTest, TheActiveCapQueuesAndThenServesInOrder) {
  Pool pool = MakePool(4, seconds(60), 2);
  ASSERT_TRUE(pool.TryEnter(a_));
  ASSERT_TRUE(pool.TryEnter(a_));
  EXPECT_FALSE(pool.TryEnter(a_));
  EXPECT_TRUE(pool.TryEnter(b_));  // the cap is per origin
  std::optional<bool> first, second;
  asio::co_spawn(io_, WaitForSlot(pool, a_, first), asio::detached);
  asio::co_spawn(io_, WaitForSlot(pool, a_, second), asio::detached);
  io_.poll();
  EXPECT_EQ(pool.probe().queued.value(), 2u);
  EXPECT_FALSE(first.has_value());
  EXPECT_FALSE(pool.TryEnter(a_));  // a newcomer does not pass the queue

  pool.Leave(a_);  // the slot passes to the first waiter
  io_.poll();
  EXPECT_EQ(first, std::optional<bool>(true));
  EXPECT_FALSE(second.has_value());
  EXPECT_EQ(pool.ActiveCount(a_), 2u);

  pool.Leave(a_);
  io_.poll();
  EXPECT_EQ(second, std::optional<bool>(true));
  pool.Leave(a_);
  pool.Leave(a_);
  EXPECT_EQ(pool.ActiveCount(a_), 0u);
  EXPECT_EQ(pool.probe().queue_timeouts.value(), 0u);
}

asio::awaitable<void> WaitBriefly(Pool& pool, Origin origin, std::optional<bool>& result) {
  SlotWaiter waiter(pool, origin);
  const bool granted = co_await waiter.Wait(milliseconds(0));
  result = granted;
}

TEST_F(PoolTest, AWaiterThatGetsNoSlotInTimeGivesUpAndLeavesTheQueue) {
  Pool pool = MakePool(4, seconds(60), 1);
  ASSERT_TRUE(pool.TryEnter(a_));
  std::optional<bool> result;
  asio::co_spawn(io_, WaitBriefly(pool, a_, result), asio::detached);
  io_.run_for(seconds(5));  // returns as soon as the zero timeout has fired
  EXPECT_EQ(result, std::optional<bool>(false));
  EXPECT_EQ(pool.probe().queue_timeouts.value(), 1u);
  pool.Leave(a_);  // nobody waits: the slot is free again
  EXPECT_EQ(pool.ActiveCount(a_), 0u);
  EXPECT_TRUE(pool.TryEnter(a_));
  pool.Leave(a_);
}

TEST_F(PoolTest, ShutdownClosesTheIdleWakesWaitersAndRefusesLaterReleases) {
  Pool pool = MakePool(4, seconds(60), 1);
  ASSERT_TRUE(pool.TryEnter(a_));
  auto idle = Open();
  pool.Release(a_, idle);
  std::optional<bool> waiter;
  asio::co_spawn(io_, WaitForSlot(pool, a_, waiter), asio::detached);
  io_.poll();
  pool.Shutdown();
  io_.poll();
  EXPECT_EQ(waiter, std::optional<bool>(false));
  EXPECT_FALSE(idle->lowest().is_open());
  EXPECT_EQ(pool.probe().idle.value(), 0);
  auto late = Open();
  pool.Release(a_, late);
  EXPECT_FALSE(late->lowest().is_open());
  EXPECT_EQ(pool.Acquire(a_), nullptr);
}

}  // namespace
}  // namespace turnpike::upstream
