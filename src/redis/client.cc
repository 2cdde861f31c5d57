#include "redis/client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <deque>

#include "common/thread_name.h"
#include "observability/metrics.h"

namespace turnpike::redis {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kBackoffMin{50};
// Well under any lease TTL: a replica is back within one TTL of Redis (lease_script.h, settling).
constexpr milliseconds kBackoffMax{1'000};
constexpr size_t kReadChunk = 16 * 1024;
constexpr std::array<std::string_view, static_cast<size_t>(Op::kCount)> kOpNames = {
    "ping",        "select",       "script_load", "refill",        "renew",
    "return",      "rate_refill",  "rate_return", "cache_get",     "cache_put",
    "cache_bump",  "publish",      "agent_claim", "agent_release", "agent_own",
    "agent_renew", "agent_cancel", "agent_flags", "agent_bump",    "agent_sweep"};

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

Error Unavailable(std::string message) {
  return Error{ErrorCode::kUnavailable, "redis: " + std::move(message), ""};
}

struct Pending {
  Op op;
  std::vector<std::string> args;
  Callback done;
};

}  // namespace

struct Client::Impl {
  explicit Impl(Client& c)
      : client(c), socket(context), deadline(context), wake(context), backoff(context) {}

  Client& client;
  asio::io_context context;
  tcp::socket socket;
  asio::steady_timer deadline;  // closes the socket when a batch overruns command_timeout
  asio::steady_timer wake;      // Serve sleeps on it until a command is queued
  asio::steady_timer backoff;
  std::deque<Pending> queue;  // client thread only
  std::string in;
  bool stopping = false;
  bool timed_out = false;
  std::function<void()> on_connected;

  void Fail(Pending& p, const Error& error) {
    if (p.done) p.done(error);
  }
  void FailAll(const Error& error) {
    std::deque<Pending> failed;
    failed.swap(queue);
    for (Pending& p : failed) Fail(p, error);
  }
  void SetError(std::string text) {
    std::lock_guard lock(client.mu_);
    client.last_error_ = std::move(text);
  }

  void Arm() {
    timed_out = false;
    deadline.expires_after(client.options_.command_timeout);
    deadline.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      timed_out = true;
      boost::system::error_code ignored;
      socket.close(ignored);
    });
  }
  void Disarm() { deadline.cancel(); }

  // Writes `batch` and reads one reply per command, in order.
  static asio::awaitable<Result<std::vector<Reply>>> Exchange(Impl* self, std::string out,
                                                              size_t count) {
    self->Arm();
    auto [wec, written] = co_await asio::async_write(self->socket, asio::buffer(out), kTuple);
    if (wec) {
      self->Disarm();
      co_return Unavailable(self->timed_out ? "command timed out" : wec.message());
    }
    std::vector<Reply> replies;
    replies.reserve(count);
    while (replies.size() < count) {
      Reply reply;
      size_t consumed = 0;
      const ParseStatus status = ParseReply(self->in, reply, consumed);
      if (status == ParseStatus::kMalformed) {
        self->Disarm();
        co_return Unavailable("malformed reply");
      }
      if (status == ParseStatus::kDone) {
        self->in.erase(0, consumed);
        replies.push_back(std::move(reply));
        continue;
      }
      const size_t old = self->in.size();
      self->in.resize(old + kReadChunk);
      auto [rec, n] = co_await self->socket.async_read_some(
          asio::buffer(self->in.data() + old, kReadChunk), kTuple);
      self->in.resize(old + n);
      if (rec) {
        self->Disarm();
        co_return Unavailable(self->timed_out ? "command timed out" : rec.message());
      }
    }
    self->Disarm();
    co_return replies;
  }

  static asio::awaitable<Status> Connect(Impl* self) {
    const ClientOptions& o = self->client.options_;
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
    self->in.clear();
    self->Arm();
    auto [cec, endpoint] = co_await asio::async_connect(self->socket, endpoints, kTuple);
    self->Disarm();
    if (cec) {
      co_return Unavailable("cannot connect to " + o.host + ":" + std::to_string(o.port) + ": " +
                            (self->timed_out ? std::string("timed out") : cec.message()));
    }
    self->socket.set_option(tcp::no_delay(true), ec);
    std::string out;
    size_t count = 0;
    AppendCommand(out, {"PING"});
    self->client.Count(Op::kPing);
    ++count;
    const std::string db = std::to_string(o.db);
    if (o.db != 0) {
      AppendCommand(out, {"SELECT", db});
      self->client.Count(Op::kSelect);
      ++count;
    }
    for (const std::string& script : o.scripts) {
      AppendCommand(out, {"SCRIPT", "LOAD", script});
      self->client.Count(Op::kScriptLoad);
      ++count;
    }
    Result<std::vector<Reply>> replies = co_await Exchange(self, std::move(out), count);
    if (!replies.ok()) co_return replies.error();
    std::vector<std::string> shas;
    for (size_t i = 0; i < replies->size(); ++i) {
      const Reply& r = (*replies)[i];
      if (r.is_error()) co_return Unavailable("server refused set-up: " + r.text);
      if (i + o.scripts.size() >= count) shas.push_back(r.text);
    }
    std::lock_guard lock(self->client.mu_);
    self->client.shas_ = std::move(shas);
    co_return Ok{};
  }

  // Sends what is queued, in batches, until the connection fails or the client stops.
  static asio::awaitable<Error> Serve(Impl* self) {
    while (!self->stopping) {
      if (self->queue.empty()) {
        self->wake.expires_at(asio::steady_timer::time_point::max());
        co_await self->wake.async_wait(kTuple);
        continue;
      }
      std::deque<Pending> batch;
      batch.swap(self->queue);
      std::string out;
      for (const Pending& p : batch) {
        AppendCommand(out, p.args);
        self->client.Count(p.op);
      }
      Result<std::vector<Reply>> replies = co_await Exchange(self, std::move(out), batch.size());
      if (!replies.ok()) {
        for (Pending& p : batch) self->Fail(p, replies.error());
        co_return replies.error();
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        if (batch[i].done) batch[i].done(std::move((*replies)[i]));
      }
    }
    co_return Unavailable("stopped");
  }

  static asio::awaitable<void> Run(Impl* self) {
    milliseconds backoff_delay = kBackoffMin;
    while (!self->stopping) {
      Status connected = co_await Connect(self);
      if (connected.ok()) {
        backoff_delay = kBackoffMin;
        self->client.connected_.store(true, std::memory_order_release);
        if (self->on_connected) self->on_connected();
        Error lost = co_await Serve(self);
        self->client.connected_.store(false, std::memory_order_release);
        self->SetError(lost.message);
        self->FailAll(lost);
      } else {
        self->SetError(connected.error().message);
      }
      boost::system::error_code ignored;
      self->socket.close(ignored);
      if (self->stopping) break;
      self->backoff.expires_after(backoff_delay);
      co_await self->backoff.async_wait(kTuple);
      backoff_delay = std::min(backoff_delay * 2, kBackoffMax);
    }
    self->FailAll(Unavailable("stopped"));
  }
};

Client::Client(ClientOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(*this)) {}

Client::~Client() { Stop(); }

void Client::Count(Op op) {
  commands_[static_cast<size_t>(op)].fetch_add(1, std::memory_order_relaxed);
}

void Client::Start() {
  Impl* impl = impl_.get();
  asio::co_spawn(impl->context, Impl::Run(impl), asio::detached);
  thread_ = std::thread([impl] {
    SetThreadName("redis");
    impl->context.run();
  });
}

void Client::Stop() {
  if (!thread_.joinable()) return;
  Impl* impl = impl_.get();
  asio::post(impl->context, [impl] {
    impl->stopping = true;
    boost::system::error_code ignored;
    impl->socket.close(ignored);
    impl->wake.cancel();
    impl->backoff.cancel();
    impl->deadline.cancel();
  });
  thread_.join();
}

Status Client::WaitConnected(milliseconds timeout) const {
  constexpr milliseconds kPoll{10};
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!connected()) {
    if (std::chrono::steady_clock::now() >= until) {
      std::lock_guard lock(mu_);
      return Error{ErrorCode::kUnavailable, last_error_, ""};
    }
    std::this_thread::sleep_for(kPoll);
  }
  return Ok{};
}

void Client::Submit(Op op, std::vector<std::string> args, Callback done) {
  Impl* impl = impl_.get();
  asio::post(impl->context, [impl, p = Pending{op, std::move(args), std::move(done)}]() mutable {
    if (impl->stopping || !impl->client.connected()) {
      impl->Fail(p, Unavailable("not connected"));
      return;
    }
    impl->queue.push_back(std::move(p));
    impl->wake.cancel();
  });
}

void Client::OnConnected(std::function<void()> hook) {
  Impl* impl = impl_.get();
  asio::post(impl->context,
             [impl, hook = std::move(hook)]() mutable { impl->on_connected = std::move(hook); });
}

std::string Client::Sha(size_t i) const {
  std::lock_guard lock(mu_);
  return i < shas_.size() ? shas_[i] : std::string();
}

asio::io_context& Client::context() { return impl_->context; }

void Client::RenderMetrics(observability::PrometheusWriter& w) const {
  w.Family("turnpike_redis_commands_total", "Redis commands sent, by operation",
           observability::MetricType::kCounter);
  for (size_t i = 0; i < kOpNames.size(); ++i) {
    w.Sample("turnpike_redis_commands_total", {{"op", kOpNames[i]}},
             static_cast<double>(commands_[i].load(std::memory_order_relaxed)));
  }
  w.Family("turnpike_redis_up", "1 while the Redis connection is up",
           observability::MetricType::kGauge);
  w.Sample("turnpike_redis_up", {}, connected() ? 1 : 0);
}

}  // namespace turnpike::redis
