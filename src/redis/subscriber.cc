#include "redis/subscriber.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <vector>

#include "common/thread_name.h"
#include "observability/metrics.h"
#include "redis/resp.h"

namespace turnpike::redis {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kBackoffMin{50};
constexpr milliseconds kBackoffMax{1'000};
constexpr size_t kReadChunk = 16 * 1024;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

Error Unavailable(std::string message) {
  return Error{ErrorCode::kUnavailable, "redis subscriber: " + std::move(message), ""};
}

}  // namespace

struct Subscriber::Impl {
  explicit Impl(Subscriber& s)
      : owner(s), socket(context), deadline(context), backoff(context), ping(context) {}

  Subscriber& owner;
  asio::io_context context;
  tcp::socket socket;
  asio::steady_timer deadline;  // bounds a connect
  asio::steady_timer backoff;
  asio::steady_timer ping;
  // Everything below: the subscriber's thread only.
  Subscriptions book;
  std::string in;
  uint64_t generation = 0;     // bumped per lost connection: stale completions ignore it
  bool up = false;             // connected on this thread's view
  bool writing = false;        // an async_write is in flight
  bool awaiting_pong = false;  // a PING was sent and not yet answered
  bool dead_peer = false;      // the connection was closed for an unanswered PING
  bool hook_due = false;       // OnConnected has not run on this connection yet
  size_t resync_left = 0;      // confirmations of the connect batch still to come
  bool stopping = false;
  std::function<void()> on_connected;

  void SetError(std::string text) {
    std::lock_guard lock(owner.mu_);
    owner.last_error_ = std::move(text);
  }
  void Close() {
    boost::system::error_code ignored;
    socket.close(ignored);
  }

  // Writes what the book queued, one batch at a time.
  void Flush() {
    if (!up || writing || !book.has_commands()) return;
    writing = true;
    auto batch = std::make_shared<std::string>(book.TakeCommands());
    asio::async_write(socket, asio::buffer(*batch),
                      [this, batch, gen = generation](boost::system::error_code ec, size_t) {
                        if (gen != generation) return;
                        writing = false;
                        if (ec) return Close();  // the read fails next and ends the connection
                        Flush();
                      });
  }

  void ArmPing(uint64_t gen) {
    ping.expires_after(owner.options_.ping_interval);
    ping.async_wait([this, gen](boost::system::error_code ec) {
      if (ec || gen != generation || stopping) return;
      if (awaiting_pong) {
        dead_peer = true;
        return Close();
      }
      awaiting_pong = true;
      book.QueuePing();
      Flush();
      ArmPing(gen);
    });
  }

  void RunHook() {
    hook_due = false;
    if (on_connected) on_connected();
  }

  Status Dispatch(const Reply& reply) {
    using Push = Subscriptions::Push;
    Result<Push> push = Subscriptions::Classify(reply);
    if (!push.ok()) return push.error();
    // Counted before the handlers run, so that whatever they wake sees the count.
    if (*push == Push::kMessage) owner.messages_.fetch_add(1, std::memory_order_relaxed);
    book.OnPush(reply, *push);
    if (*push == Push::kPong) awaiting_pong = false;
    if (*push == Push::kConfirmation && hook_due && resync_left > 0 && --resync_left == 0) {
      RunHook();
    }
    return Ok{};
  }

  // Reads and dispatches pushed replies until the connection fails or is closed.
  static asio::awaitable<Error> Listen(Impl* self) {
    while (true) {
      size_t used = 0;
      while (true) {
        Reply reply;
        size_t consumed = 0;
        const std::string_view rest = std::string_view(self->in).substr(used);
        const ParseStatus status = ParseReply(rest, reply, consumed);
        if (status == ParseStatus::kMalformed) co_return Unavailable("malformed reply");
        if (status == ParseStatus::kIncomplete) break;
        used += consumed;
        Status handled = self->Dispatch(reply);
        if (!handled.ok()) co_return handled.error();
      }
      self->in.erase(0, used);
      const size_t old = self->in.size();
      self->in.resize(old + kReadChunk);
      auto [ec, n] = co_await self->socket.async_read_some(
          asio::buffer(self->in.data() + old, kReadChunk), kTuple);
      self->in.resize(old + n);
      if (ec) co_return Unavailable(self->dead_peer ? "no answer to PING" : ec.message());
    }
  }

  static asio::awaitable<Status> Connect(Impl* self) {
    const SubscriberOptions& o = self->owner.options_;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(o.host, ec);
    std::vector<tcp::endpoint> endpoints;
    if (!ec) {
      endpoints.emplace_back(address, o.port);
    } else {
      tcp::resolver resolver(self->context);
      auto [rec, results] = co_await resolver.async_resolve(o.host, std::to_string(o.port), kTuple);
      if (rec) co_return Unavailable("cannot resolve " + o.host + ": " + rec.message());
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    }
    self->socket = tcp::socket(self->context);
    self->deadline.expires_after(o.connect_timeout);
    self->deadline.async_wait([self](boost::system::error_code timer_ec) {
      if (!timer_ec) self->Close();
    });
    auto [cec, endpoint] = co_await asio::async_connect(self->socket, endpoints, kTuple);
    self->deadline.cancel();
    if (cec) {
      co_return Unavailable("cannot connect to " + o.host + ":" + std::to_string(o.port) + ": " +
                            cec.message());
    }
    self->socket.set_option(tcp::no_delay(true), ec);
    co_return Ok{};
  }

  // A new connection: every live subscription is sent again, in one batch.
  void Resubscribe() {
    in.clear();
    up = true;
    writing = false;
    awaiting_pong = false;
    dead_peer = false;
    hook_due = true;
    resync_left = book.Connected();
    owner.connected_.store(true, std::memory_order_release);
    Flush();
    ArmPing(generation);
    if (resync_left == 0) RunHook();
  }

  // The connection is gone: nothing in flight will be answered.
  void Lost() {
    up = false;
    ++generation;
    owner.connected_.store(false, std::memory_order_release);
    ping.cancel();
    book.Disconnected();
  }

  static asio::awaitable<void> Run(Impl* self) {
    milliseconds backoff_delay = kBackoffMin;
    while (!self->stopping) {
      Status connected = co_await Connect(self);
      if (connected.ok()) {
        backoff_delay = kBackoffMin;
        self->Resubscribe();
        Error lost = co_await Listen(self);
        self->Lost();
        self->SetError(lost.message);
      } else {
        self->SetError(connected.error().message);
      }
      self->Close();
      if (self->stopping) break;
      self->backoff.expires_after(backoff_delay);
      co_await self->backoff.async_wait(kTuple);
      backoff_delay = std::min(backoff_delay * 2, kBackoffMax);
    }
    // Handlers go with the thread, so that none outlives Stop.
    self->book.Clear();
  }
};

Subscriber::Subscriber(SubscriberOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(*this)) {}

Subscriber::~Subscriber() { Stop(); }

void Subscriber::Start() {
  Impl* impl = impl_.get();
  asio::co_spawn(impl->context, Impl::Run(impl), asio::detached);
  thread_ = std::thread([impl] {
    SetThreadName("redis-sub");
    impl->context.run();
  });
}

void Subscriber::Stop() {
  if (!thread_.joinable()) return;
  Impl* impl = impl_.get();
  asio::post(impl->context, [impl] {
    impl->stopping = true;
    impl->Close();
    impl->deadline.cancel();
    impl->backoff.cancel();
    impl->ping.cancel();
  });
  thread_.join();
}

SubscriptionId Subscriber::Add(NameKind kind, std::string name, MessageHandler handler,
                               std::function<void()> on_subscribed) {
  const SubscriptionId id = next_id_.fetch_add(1, std::memory_order_relaxed);
  Impl* impl = impl_.get();
  asio::post(impl->context, [impl, kind, id, name = std::move(name), handler = std::move(handler),
                             on_subscribed = std::move(on_subscribed)]() mutable {
    if (impl->stopping) return;
    impl->book.Add(kind, std::move(name), id, std::move(handler), std::move(on_subscribed));
    impl->Flush();
  });
  return id;
}

SubscriptionId Subscriber::Subscribe(std::string channel, MessageHandler handler,
                                     std::function<void()> on_subscribed) {
  return Add(NameKind::kChannel, std::move(channel), std::move(handler), std::move(on_subscribed));
}

SubscriptionId Subscriber::PSubscribe(std::string pattern, MessageHandler handler,
                                      std::function<void()> on_subscribed) {
  return Add(NameKind::kPattern, std::move(pattern), std::move(handler), std::move(on_subscribed));
}

void Subscriber::Unsubscribe(SubscriptionId id, std::function<void()> done) {
  Impl* impl = impl_.get();
  asio::post(impl->context, [impl, id, done = std::move(done)] {
    impl->book.Remove(id);
    impl->Flush();
    if (done) done();
  });
}

void Subscriber::OnConnected(std::function<void()> hook) {
  Impl* impl = impl_.get();
  asio::post(impl->context,
             [impl, hook = std::move(hook)]() mutable { impl->on_connected = std::move(hook); });
}

Status Subscriber::WaitConnected(milliseconds timeout) const {
  constexpr milliseconds kPoll{10};
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!connected()) {
    if (std::chrono::steady_clock::now() >= until) {
      return Error{ErrorCode::kUnavailable, last_error(), ""};
    }
    std::this_thread::sleep_for(kPoll);
  }
  return Ok{};
}

std::string Subscriber::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

void Subscriber::RenderMetrics(observability::PrometheusWriter& w) const {
  w.Family("turnpike_redis_subscriber_up", "1 while the Redis pub/sub connection is up",
           observability::MetricType::kGauge);
  w.Sample("turnpike_redis_subscriber_up", {}, connected() ? 1 : 0);
  w.Family("turnpike_redis_subscriber_messages_total", "Pub/sub messages received from Redis",
           observability::MetricType::kCounter);
  w.Sample("turnpike_redis_subscriber_messages_total", {},
           static_cast<double>(messages_.load(std::memory_order_relaxed)));
}

}  // namespace turnpike::redis
