// The Subscriber (subscriber.h) against a real redis-server the test starts on a free loopback
// port (tests/cache/redis_server.h), publishing through the Client: messages reach every
// handler of their channel, in order and binary-safe; the server holds one subscription per
// channel and drops it with the last handler; a restarted server is subscribed again and the
// OnConnected hook runs; Stop leaves no handler behind. Waits are bounded polls, never timings.
#include "redis/subscriber.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../cache/redis_server.h"
#include "observability/metrics.h"
#include "redis/client.h"

namespace turnpike::redis {
namespace {

using cache::testing::RedisServer;
using Message = std::pair<std::string, std::string>;  // channel, payload

constexpr auto kWaitBound = std::chrono::seconds(5);
constexpr auto kPause = std::chrono::milliseconds(10);

// What handlers received, from the subscriber's thread.
class Inbox {
 public:
  MessageHandler Handler() {
    return [this](std::string_view channel, std::string_view payload) {
      std::lock_guard lock(mu_);
      messages_.emplace_back(channel, payload);
      cv_.notify_all();
    };
  }
  // Waits (bounded) until `n` messages arrived; returns them.
  std::vector<Message> WaitFor(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, kWaitBound, [&] { return messages_.size() >= n; });
    return messages_;
  }
  std::vector<Message> Now() {
    std::lock_guard lock(mu_);
    return messages_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Message> messages_;
};

// A one-shot signal from the subscriber's thread (on_subscribed, Unsubscribe's done).
class Latch {
 public:
  std::function<void()> Callback() {
    return [state = state_] { state->set_value(); };
  }
  bool Wait() { return future_.wait_for(kWaitBound) == std::future_status::ready; }

 private:
  std::shared_ptr<std::promise<void>> state_ = std::make_shared<std::promise<void>>();
  std::future<void> future_ = state_->get_future();
};

template <typename Done>
bool Eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitBound;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPause);
  }
  return true;
}

Result<Reply> Command(Client& client, Op op, std::vector<std::string> args) {
  auto promise = std::make_shared<std::promise<Result<Reply>>>();
  std::future<Result<Reply>> future = promise->get_future();
  client.Submit(op, std::move(args), [promise](Result<Reply> r) { promise->set_value(r); });
  return future.get();
}

// The number of subscribers that received it, or -1 if the command failed.
int64_t Publish(Client& client, const std::string& channel, const std::string& payload) {
  Result<Reply> r = Command(client, Op::kPublish, {"PUBLISH", channel, payload});
  return r.ok() && r->type == Reply::Type::kInteger ? r->integer : -1;
}

// The server's count of subscriptions to `channel` (PUBSUB NUMSUB).
int64_t NumSub(Client& client, const std::string& channel) {
  Result<Reply> r = Command(client, Op::kPing, {"PUBSUB", "NUMSUB", channel});
  if (!r.ok() || r->items.size() != 2) return -1;
  return r->items[1].integer;
}

class SubscriberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RedisServer::Start();
    // scripts/deps.sh --test installs redis-server: not finding it is a failure, not a skip.
    ASSERT_TRUE(server_) << "redis-server could not be started";
    ClientOptions client_options;
    client_options.port = server_->port();
    client_ = std::make_unique<Client>(client_options);
    client_->Start();
    ASSERT_TRUE(client_->WaitConnected(kWaitBound).ok());
    SubscriberOptions options;
    options.port = server_->port();
    subscriber_ = std::make_unique<Subscriber>(options);
  }
  void TearDown() override {
    if (subscriber_) subscriber_->Stop();
    if (client_) client_->Stop();
  }

  // Subscribes and waits for the server's confirmation.
  SubscriptionId SubscribeConfirmed(const std::string& channel, Inbox& inbox) {
    Latch confirmed;
    const SubscriptionId id =
        subscriber_->Subscribe(channel, inbox.Handler(), confirmed.Callback());
    EXPECT_TRUE(confirmed.Wait()) << "SUBSCRIBE " << channel << " was not confirmed";
    return id;
  }
  void UnsubscribeDone(SubscriptionId id) {
    Latch done;
    subscriber_->Unsubscribe(id, done.Callback());
    EXPECT_TRUE(done.Wait());
  }

  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Subscriber> subscriber_;
};

TEST_F(SubscriberTest, APublishedMessageReachesTheHandler) {
  subscriber_->Start();
  Inbox inbox;
  SubscribeConfirmed("turnpike:cancel:r1", inbox);
  EXPECT_EQ(Publish(*client_, "turnpike:cancel:r1", "resp_1"), 1);
  EXPECT_EQ(inbox.WaitFor(1), (std::vector<Message>{{"turnpike:cancel:r1", "resp_1"}}));
  EXPECT_EQ(client_->commands(Op::kPublish), 1u);

  observability::PrometheusWriter w;
  subscriber_->RenderMetrics(w);
  const std::string text = w.Take();
  EXPECT_NE(text.find("\nturnpike_redis_subscriber_up 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nturnpike_redis_subscriber_messages_total 1\n"), std::string::npos) << text;
}

// What a cancel leaves behind for a replica that was not listening (the OnConnected hook
// re-reads it): a short-lived flag, written with SET's flags through the Client.
TEST_F(SubscriberTest, AShortLivedFlagIsAnOrdinaryClientCommand) {
  const std::vector<std::string> set = {"SET", "turnpike:cancelled:resp_1", "1", "PX", "60000",
                                        "NX"};
  Result<Reply> first = Command(*client_, Op::kPing, set);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->text, "OK");
  Result<Reply> second = Command(*client_, Op::kPing, set);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->type, Reply::Type::kNil) << "NX: already set";
  Result<Reply> ttl = Command(*client_, Op::kPing, {"PTTL", "turnpike:cancelled:resp_1"});
  ASSERT_TRUE(ttl.ok());
  EXPECT_GT(ttl->integer, 0) << "PX gave it an expiry";
}

TEST_F(SubscriberTest, ASubscriptionMadeBeforeStartIsConfirmedOnceConnected) {
  Inbox inbox;
  Latch confirmed, hook;
  subscriber_->OnConnected(hook.Callback());
  subscriber_->Subscribe("early", inbox.Handler(), confirmed.Callback());
  subscriber_->Start();
  ASSERT_TRUE(confirmed.Wait());
  EXPECT_TRUE(hook.Wait()) << "the hook runs on the first connect too";
  EXPECT_EQ(Publish(*client_, "early", "x"), 1);
  EXPECT_EQ(inbox.WaitFor(1).size(), 1u);
}

TEST_F(SubscriberTest, TwoHandlersShareOneServerSubscriptionAndBothGetEveryMessage) {
  subscriber_->Start();
  Inbox a, b;
  const SubscriptionId id_a = SubscribeConfirmed("events", a);
  SubscribeConfirmed("events", b);
  EXPECT_EQ(NumSub(*client_, "events"), 1) << "one SUBSCRIBE per channel, not per handler";
  EXPECT_EQ(Publish(*client_, "events", "one"), 1);
  EXPECT_EQ(a.WaitFor(1).size(), 1u);
  EXPECT_EQ(b.WaitFor(1).size(), 1u);

  UnsubscribeDone(id_a);
  EXPECT_EQ(NumSub(*client_, "events"), 1) << "b still listens";
  EXPECT_EQ(Publish(*client_, "events", "two"), 1);
  EXPECT_EQ(b.WaitFor(2), (std::vector<Message>{{"events", "one"}, {"events", "two"}}));
  // Both handlers run in turn on the subscriber's thread: b has "two", so a would have too.
  EXPECT_EQ(a.Now(), (std::vector<Message>{{"events", "one"}}));
}

TEST_F(SubscriberTest, TheLastUnsubscribeUnsubscribesOnTheServer) {
  subscriber_->Start();
  Inbox a, b;
  const SubscriptionId id_a = SubscribeConfirmed("events", a);
  const SubscriptionId id_b = SubscribeConfirmed("events", b);
  UnsubscribeDone(id_a);
  UnsubscribeDone(id_b);
  EXPECT_TRUE(Eventually([&] { return NumSub(*client_, "events") == 0; }));
  EXPECT_EQ(Publish(*client_, "events", "nobody"), 0);

  // And subscribing again, right after, is confirmed and delivered.
  Inbox c;
  SubscribeConfirmed("events", c);
  EXPECT_EQ(Publish(*client_, "events", "again"), 1);
  EXPECT_EQ(c.WaitFor(1), (std::vector<Message>{{"events", "again"}}));
  EXPECT_TRUE(a.Now().empty());
  EXPECT_TRUE(b.Now().empty());
}

TEST_F(SubscriberTest, AnUnsubscribeThenASubscribeInOneGoEndSubscribed) {
  subscriber_->Start();
  Inbox a, b;
  const SubscriptionId id_a = SubscribeConfirmed("flip", a);
  Latch confirmed;
  subscriber_->Unsubscribe(id_a);
  subscriber_->Subscribe("flip", b.Handler(), confirmed.Callback());
  ASSERT_TRUE(confirmed.Wait());
  EXPECT_EQ(NumSub(*client_, "flip"), 1);
  EXPECT_EQ(Publish(*client_, "flip", "x"), 1);
  EXPECT_EQ(b.WaitFor(1).size(), 1u);
}

TEST_F(SubscriberTest, PayloadsAreBinarySafe) {
  subscriber_->Start();
  Inbox inbox;
  SubscribeConfirmed("bin", inbox);
  std::string payload("line\r\n$3\r\nnul\0end", 18);
  payload += std::string(100'000, 'x');  // larger than one read
  EXPECT_EQ(Publish(*client_, "bin", payload), 1);
  const std::vector<Message> got = inbox.WaitFor(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, payload);
}

TEST_F(SubscriberTest, ManyMessagesArriveInOrder) {
  subscriber_->Start();
  Inbox inbox;
  SubscribeConfirmed("seq", inbox);
  constexpr int kMessages = 2'000;
  std::vector<std::future<Result<Reply>>> replies;
  for (int i = 0; i < kMessages; ++i) {  // pipelined: no wait between publishes
    auto promise = std::make_shared<std::promise<Result<Reply>>>();
    replies.push_back(promise->get_future());
    client_->Submit(Op::kPublish, {"PUBLISH", "seq", std::to_string(i)},
                    [promise](Result<Reply> r) { promise->set_value(r); });
  }
  for (auto& reply : replies) ASSERT_TRUE(reply.get().ok());
  const std::vector<Message> got = inbox.WaitFor(kMessages);
  ASSERT_EQ(got.size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) ASSERT_EQ(got[i].second, std::to_string(i)) << i;
  EXPECT_EQ(subscriber_->messages(), static_cast<uint64_t>(kMessages));
}

TEST_F(SubscriberTest, APatternGetsMessagesOfEveryMatchingChannel) {
  subscriber_->Start();
  Inbox inbox;
  Latch confirmed;
  subscriber_->PSubscribe("turnpike:cancel:*", inbox.Handler(), confirmed.Callback());
  ASSERT_TRUE(confirmed.Wait());
  EXPECT_EQ(Publish(*client_, "turnpike:cancel:r1", "a"), 1);
  EXPECT_EQ(Publish(*client_, "turnpike:other", "b"), 0);
  EXPECT_EQ(Publish(*client_, "turnpike:cancel:r2", "c"), 1);
  EXPECT_EQ(inbox.WaitFor(2),
            (std::vector<Message>{{"turnpike:cancel:r1", "a"}, {"turnpike:cancel:r2", "c"}}));
}

TEST_F(SubscriberTest, ARestartedServerIsSubscribedAgainAndTheHookRuns) {
  std::atomic<int> connects{0};
  subscriber_->OnConnected([&connects] { connects.fetch_add(1); });
  subscriber_->Start();
  Inbox inbox, pattern;
  SubscribeConfirmed("survives", inbox);
  Latch pattern_confirmed;
  subscriber_->PSubscribe("surv*", pattern.Handler(), pattern_confirmed.Callback());
  ASSERT_TRUE(pattern_confirmed.Wait());
  ASSERT_TRUE(Eventually([&] { return connects.load() == 1; }));

  ASSERT_TRUE(server_->Restart()) << "redis-server did not come back on its port";
  // The hook runs only once the server has confirmed both subscriptions again.
  ASSERT_TRUE(Eventually([&] { return connects.load() >= 2; })) << subscriber_->last_error();
  EXPECT_TRUE(subscriber_->connected());
  // The client reconnects on its own schedule: publish until it is back.
  int64_t receivers = -1;
  ASSERT_TRUE(Eventually([&] {
    receivers = Publish(*client_, "survives", "after");
    return receivers >= 0;
  }));
  EXPECT_EQ(receivers, 2) << "the channel and the pattern are both subscribed again";
  EXPECT_EQ(inbox.WaitFor(1), (std::vector<Message>{{"survives", "after"}}));
  EXPECT_EQ(pattern.WaitFor(1), (std::vector<Message>{{"survives", "after"}}));
}

TEST_F(SubscriberTest, StopWithLiveSubscriptionsDropsEveryHandler) {
  subscriber_->Start();
  auto alive = std::make_shared<int>(0);  // captured by every handler
  Inbox inbox;
  for (const char* channel : {"s1", "s2", "s3"}) {
    Latch confirmed;
    subscriber_->Subscribe(
        channel,
        [alive, handler = inbox.Handler()](std::string_view c, std::string_view p) {
          handler(c, p);
        },
        confirmed.Callback());
    ASSERT_TRUE(confirmed.Wait());
  }
  EXPECT_EQ(alive.use_count(), 4);
  subscriber_->Stop();
  EXPECT_EQ(alive.use_count(), 1) << "no handler outlives Stop";
  EXPECT_FALSE(subscriber_->connected());
  EXPECT_TRUE(Eventually([&] { return NumSub(*client_, "s1") == 0; }));
  EXPECT_EQ(Publish(*client_, "s1", "late"), 0);
  EXPECT_TRUE(inbox.Now().empty());
  subscriber_->Stop();                            // idempotent
  subscriber_->Subscribe("s1", inbox.Handler());  // after Stop: never runs, never crashes
}

// A peer that accepts connections (the kernel's backlog) and never answers: PING finds it out.
TEST(SubscriberDeadPeerTest, AnUnansweredPingDropsTheConnection) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size), 0);

  SubscriberOptions options;
  options.port = ntohs(addr.sin_port);
  options.ping_interval = std::chrono::milliseconds(20);
  Subscriber subscriber(options);
  std::atomic<int> connects{0};
  subscriber.OnConnected([&connects] { connects.fetch_add(1); });
  subscriber.Subscribe("never", [](std::string_view, std::string_view) {});
  subscriber.Start();
  EXPECT_TRUE(Eventually([&] {
    return subscriber.last_error().find("no answer to PING") != std::string::npos;
  })) << subscriber.last_error();
  EXPECT_EQ(connects.load(), 0) << "the subscription was never confirmed";
  subscriber.Stop();
  close(fd);
}

}  // namespace
}  // namespace turnpike::redis
