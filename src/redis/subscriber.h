// Redis pub/sub, the receiving side: SUBSCRIBE and PSUBSCRIBE on a connection of its own.
// Publishing is an ordinary command on the Client: Submit(Op::kPublish, {"PUBLISH", channel,
// payload}, done); its reply is the number of connections that received the message.
//
// A connection in subscribe mode can run no other command, so the Subscriber owns its own
// io_context, thread ("redis-sub") and TCP connection, apart from the Client's: a burst of
// messages never delays a lease refill, and either can be stopped first.
//
// Subscriptions: every Subscribe/PSubscribe adds a handler and returns its id at once. Many
// handlers may share a channel (or pattern): the server is sent SUBSCRIBE when the first one
// arrives and UNSUBSCRIBE when the last one goes. `on_subscribed` runs once the server has
// confirmed the subscription (at once if it already had); a message published before that may
// not arrive, one published after it does, unless the connection drops. on_subscribed runs
// once per Subscribe; after a reconnect, the OnConnected hook says the same for every name.
//
// Connection: dialled at Start and re-dialled with backoff (50 ms .. 1 s) whenever it is lost;
// every live channel and pattern is subscribed again on each new connection. Messages
// published while disconnected are lost, not replayed: after every (re)connect, once the
// server has confirmed every subscription live at that moment, the OnConnected hook runs, so
// the owner can re-read state it may have missed (e.g. a short-lived cancel flag). A PING every
// `ping_interval` that gets no answer before the next one drops the connection, so a silently
// dead peer is noticed.
//
// Threads: Subscribe, Unsubscribe, OnConnected, connected() and RenderMetrics from any thread
// (the first three post to the subscriber's thread and never block). Handlers, on_subscribed,
// Unsubscribe's `done` and the OnConnected hook run on the subscriber's thread, one at a time:
// they must only copy what they need and post work elsewhere, never block or throw. Start and
// Stop from the owning thread, once each. A worker subscribes and hands each message back to
// its own executor:
//   id = subscriber.Subscribe("turnpike:cancel:" + replica,
//       [ex = worker_executor](std::string_view, std::string_view payload) {
//         asio::post(ex, [id = std::string(payload)] { /* cancel turn `id` */ });
//       });
// Ownership: the owner keeps the Subscriber alive until Stop() returned; a handler must not
// outlive what it captures. After Unsubscribe(id) a handler may still run until the removal
// reaches the subscriber's thread; there the handler is destroyed, then `done` runs. Stop
// destroys every handler before it returns; nothing (handler, on_subscribed, done, hook) runs
// after that, and a Subscribe or Unsubscribe made after Stop is dropped unrun.
// Errors: none are returned; a refused subscription (an error reply) or malformed bytes drop
// the connection, which is re-dialled; last_error() says why the connection went down.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/result.h"
#include "redis/subscriptions.h"

namespace turnpike::observability {
class PrometheusWriter;
}

namespace turnpike::redis {

struct SubscriberOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 6379;
  std::chrono::milliseconds connect_timeout{1'000};  // bounds one dial
  std::chrono::milliseconds ping_interval{5'000};    // and the wait for its answer
};

class Subscriber {
 public:
  explicit Subscriber(SubscriberOptions options);
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  // Starts the thread, which dials at once (and keeps re-dialling).
  void Start();
  // Closes the connection and joins the thread; drops every handler. Idempotent.
  void Stop();

  // `handler` gets every message published to `channel` (exact name).
  SubscriptionId Subscribe(std::string channel, MessageHandler handler,
                           std::function<void()> on_subscribed = {});
  // `handler` gets every message published to a channel matching the glob `pattern`.
  SubscriptionId PSubscribe(std::string pattern, MessageHandler handler,
                            std::function<void()> on_subscribed = {});
  // Removes one handler; `done` runs after it is gone (also for an unknown or removed id).
  void Unsubscribe(SubscriptionId id, std::function<void()> done = {});

  // Runs `hook` after every (re)connect, the first one too, once the subscriptions live then
  // are confirmed. Replaces the previous hook; set it before Start to see the first connect.
  void OnConnected(std::function<void()> hook);

  // Start-up and tests only (blocks the caller): waits until connected or `timeout` passes.
  Status WaitConnected(std::chrono::milliseconds timeout) const;

  // The TCP connection is up; its subscriptions may still be unconfirmed (on_subscribed and
  // the OnConnected hook say when they are).
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  uint64_t messages() const { return messages_.load(std::memory_order_relaxed); }
  std::string last_error() const;
  // turnpike_redis_subscriber_up (gauge) and turnpike_redis_subscriber_messages_total.
  void RenderMetrics(observability::PrometheusWriter& w) const;

 private:
  struct Impl;
  friend struct Impl;
  SubscriptionId Add(NameKind kind, std::string name, MessageHandler handler,
                     std::function<void()> on_subscribed);

  const SubscriberOptions options_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> messages_{0};
  std::atomic<SubscriptionId> next_id_{1};
  mutable std::mutex mu_;  // guards last_error_
  std::string last_error_ = "not connected yet";
};

}  // namespace turnpike::redis
