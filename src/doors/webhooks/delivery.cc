#include "doors/webhooks/delivery.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>
#include <chrono>
#include <optional>
#include <random>

#include "common/clock.h"
#include "common/thread_name.h"
#include "doors/webhooks/outbox.h"
#include "doors/webhooks/signature.h"
#include "doors/webhooks/webhook_store.h"

namespace turnpike::webhooks {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Millis = std::chrono::milliseconds;

constexpr auto kAsTuple = net::as_tuple(net::use_awaitable);
constexpr size_t kMaxAnswerBytes = 64 * 1024;
constexpr Millis kClaimMargin{30'000};
constexpr int kHttpOk = 200;
constexpr int kHttpMultipleChoices = 300;
constexpr size_t kMaxErrorBytes = 200;

int64_t NowMillis() {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Target {
  bool tls = false;
  std::string host;
  std::string port;
  std::string path;
};

Result<Target> ParseTarget(std::string_view url) {
  boost::system::result<boost::urls::url_view> parsed = boost::urls::parse_uri(url);
  if (!parsed) return Error{ErrorCode::kInvalidRequest, "not a URL", "url"};
  Target t;
  if (parsed->scheme() == "https") {
    t.tls = true;
  } else if (parsed->scheme() != "http") {
    return Error{ErrorCode::kInvalidRequest, "the URL's scheme must be http or https", "url"};
  }
  t.host = parsed->host();
  if (t.host.empty()) return Error{ErrorCode::kInvalidRequest, "the URL has no host", "url"};
  t.port = parsed->has_port() ? std::string(parsed->port()) : (t.tls ? "443" : "80");
  t.path = parsed->encoded_path().empty() ? "/" : std::string(parsed->encoded_path());
  if (parsed->has_query()) t.path += "?" + std::string(parsed->encoded_query());
  return t;
}

http::request<http::string_body> MakeRequest(const Target& target, const DueDelivery& d) {
  const int64_t timestamp = UnixSeconds();
  http::request<http::string_body> req{http::verb::post, target.path, 11};
  req.set(http::field::host, target.host);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::user_agent, "turnpike-webhooks");
  req.set("webhook-id", d.row.id);
  req.set("webhook-timestamp", std::to_string(timestamp));
  req.set("webhook-signature", Sign(d.secret, d.row.id, timestamp, d.row.payload));
  req.body() = d.row.payload;
  req.prepare_payload();
  return req;
}

// Writes the request and reads the answer's status on `stream` (connected): "" for a 2xx,
// else what went wrong.
template <typename Stream>
net::awaitable<std::string> Exchange(Stream& stream, http::request<http::string_body> req) {
  auto [write_ec, written] = co_await http::async_write(stream, req, kAsTuple);
  if (write_ec) co_return "write: " + write_ec.message();
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxAnswerBytes);
  auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kAsTuple);
  if (read_ec) co_return "read: " + read_ec.message();
  const int status = static_cast<int>(parser.get().result_int());
  if (status >= kHttpOk && status < kHttpMultipleChoices) co_return std::string();
  co_return "HTTP " + std::to_string(status);
}

// One attempt: "" when the endpoint answered 2xx, else the error.
net::awaitable<std::string> Attempt(Deliverer* d, DueDelivery due) {
  Result<Target> target = ParseTarget(due.url);
  if (!target.ok()) co_return target.error().message;
  const Millis timeout = d->outbox().options().timeout;
  net::any_io_executor executor = co_await net::this_coro::executor;
  net::ip::tcp::resolver resolver(executor);
  auto [resolve_ec, endpoints] =
      co_await resolver.async_resolve(target->host, target->port, kAsTuple);
  if (resolve_ec) co_return "resolve: " + resolve_ec.message();
  beast::tcp_stream tcp(executor);
  tcp.expires_after(timeout);
  auto [connect_ec, connected] = co_await tcp.async_connect(endpoints, kAsTuple);
  if (connect_ec) co_return "connect: " + connect_ec.message();
  http::request<http::string_body> req = MakeRequest(*target, due);
  if (!target->tls) {
    std::string error = co_await Exchange(tcp, std::move(req));
    beast::error_code ignored;
    tcp.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    co_return error;
  }
  net::ssl::stream<beast::tcp_stream> tls(std::move(tcp), d->tls());
  if (!SSL_set_tlsext_host_name(tls.native_handle(), target->host.c_str())) {
    co_return "tls: bad host name";
  }
  tls.set_verify_callback(net::ssl::host_name_verification(target->host));
  auto [handshake_ec] = co_await tls.async_handshake(net::ssl::stream_base::client, kAsTuple);
  if (handshake_ec) co_return "tls: " + handshake_ec.message();
  std::string error = co_await Exchange(tls, std::move(req));
  co_return error;
}

// What the attempt's outcome writes (see delivery.h).
AttemptResult Outcome(const config::WebhooksConfig& options, const DueDelivery& due,
                      std::string error, uint32_t random) {
  AttemptResult r;
  r.id = due.row.id;
  r.now = UnixSeconds();
  if (error.empty()) {
    r.delivered = true;
    return r;
  }
  if (error.size() > kMaxErrorBytes) error.resize(kMaxErrorBytes);
  r.error = std::move(error);
  const int attempts = static_cast<int>(due.row.attempts) + 1;
  const int64_t age_ms = (r.now - due.row.created_at) * 1000;
  r.give_up = attempts >= options.max_attempts || age_ms >= options.max_age.count();
  r.next_attempt_at =
      NowMillis() + Backoff(attempts, options.retry_base, options.retry_max, random).count();
  return r;
}

net::awaitable<void> SendOne(Deliverer* d, DueDelivery due, uint32_t random) {
  std::string error = co_await Attempt(d, due);
  Outbox& outbox = d->outbox();
  const AttemptResult result = Outcome(outbox.options(), due, std::move(error), random);
  OutboxCounters& counters = outbox.counters();
  if (result.delivered) {
    counters.delivered.fetch_add(1, std::memory_order_relaxed);
  } else if (result.give_up) {
    counters.failed.fetch_add(1, std::memory_order_relaxed);
  } else {
    counters.retried.fetch_add(1, std::memory_order_relaxed);
  }
  auto finish = [result](store::Engine& engine) -> Result<bool> {
    WebhookStore* store = engine.role<WebhookStore>();
    if (store == nullptr) return Error{ErrorCode::kInternal, "the webhooks role is missing", ""};
    Status done = store->Finish(result);
    if (!done.ok()) return done.error();
    return true;
  };
  const Result<bool> finished =
      co_await outbox.store().Call<bool>(std::move(finish), store::JobLane::kControl);
  if (!finished.ok()) counters.store_errors.fetch_add(1, std::memory_order_relaxed);
}

// Gives back the claims of deliveries not attempted (the loop is stopping).
net::awaitable<void> Release(Deliverer* d, std::vector<std::string> ids) {
  auto release = [ids](store::Engine& engine) -> Result<bool> {
    WebhookStore* store = engine.role<WebhookStore>();
    if (store == nullptr) return Error{ErrorCode::kInternal, "the webhooks role is missing", ""};
    for (const std::string& id : ids) {
      Status done = store->Release(id);
      if (!done.ok()) return done.error();
    }
    return true;
  };
  const Result<bool> released =
      co_await d->outbox().store().Call<bool>(std::move(release), store::JobLane::kControl);
  (void)released;  // not given back: due again once the claim lapses
}

// What one look at the outbox found: the deliveries claimed, and, when there were none, when
// the next pending one falls due.
struct Claimed {
  std::vector<DueDelivery> due;
  std::optional<int64_t> next_due_ms;
};

// How long an idle loop sleeps: until the next pending delivery is due, at most poll_interval
// (a delivery another replica queued and then dropped, or a lapsed claim, is found by then),
// at least kMinIdleWait (so a clock step cannot spin the loop).
constexpr Millis kMinIdleWait{10};
constexpr Millis kErrorWait{1'000};

Millis IdleWait(const config::WebhooksConfig& options, const Result<Claimed>& claimed) {
  if (!claimed.ok()) return std::min(options.poll_interval, kErrorWait);
  if (!claimed->next_due_ms) return options.poll_interval;
  const Millis until{*claimed->next_due_ms - NowMillis()};
  return std::clamp(until, kMinIdleWait, std::max(options.poll_interval, kMinIdleWait));
}

net::awaitable<void> Run(Deliverer* d) {
  std::minstd_rand rng{std::random_device{}()};
  const config::WebhooksConfig& options = d->outbox().options();
  const int64_t lease = (options.timeout * options.batch + kClaimMargin).count();
  const int64_t batch = options.batch;
  for (;;) {
    d->woken = false;
    const int64_t now = NowMillis();
    auto claim = [now, lease, batch](store::Engine& engine) -> Result<Claimed> {
      WebhookStore* store = engine.role<WebhookStore>();
      if (store == nullptr) return Error{ErrorCode::kInternal, "the webhooks role is missing", ""};
      Result<std::vector<DueDelivery>> due = store->Claim(now, lease, batch);
      if (!due.ok()) return due.error();
      Claimed claimed{std::move(*due), std::nullopt};
      if (claimed.due.empty()) {
        Result<std::optional<int64_t>> next = store->NextDue();
        if (!next.ok()) return next.error();
        claimed.next_due_ms = *next;
      }
      return claimed;
    };
    Result<Claimed> found =
        co_await d->outbox().store().Call<Claimed>(std::move(claim), store::JobLane::kControl);
    size_t claimed = 0;
    if (found.ok()) {
      claimed = found->due.size();
      std::vector<std::string> unsent;
      for (DueDelivery& one : found->due) {
        if (d->stopping) {
          unsent.push_back(one.row.id);
          continue;
        }
        co_await SendOne(d, std::move(one), static_cast<uint32_t>(rng()));
      }
      if (!unsent.empty()) co_await Release(d, std::move(unsent));
    }
    if (d->stopping) co_return;
    // After a batch, look again at once: more may be due, and a retry just scheduled is what
    // the next look's NextDue finds.
    if (claimed > 0 || d->woken) continue;
    d->timer().expires_after(IdleWait(options, found));
    auto [ec] = co_await d->timer().async_wait(kAsTuple);
    (void)ec;  // woken (cancelled) or the wait passed: look again
    if (d->stopping) co_return;
  }
}

net::awaitable<void> Loop(Deliverer* d) {
  co_await Run(d);
  d->ended.set_value();
}

}  // namespace

Status CheckEndpointUrl(std::string_view url) {
  Result<Target> target = ParseTarget(url);
  if (!target.ok()) return target.error();
  return Ok{};
}

Deliverer::Deliverer(Outbox& outbox)
    : outbox_(outbox), timer_(io_), tls_(net::ssl::context::tls_client) {
  tls_.set_default_verify_paths();
  tls_.set_verify_mode(net::ssl::verify_peer);
  net::co_spawn(io_, Loop(this), net::detached);
  thread_ = std::thread([this] {
    SetThreadName("tp-webhooks");
    io_.run();
  });
}

Deliverer::~Deliverer() { Stop(); }

void Deliverer::Wake() {
  net::post(io_, [this] {
    woken = true;
    timer_.cancel();
  });
}

void Deliverer::Stop() {
  if (!thread_.joinable()) return;
  net::post(io_, [this] {
    stopping = true;
    timer_.cancel();
  });
  constexpr Millis kStopMargin{1'000};
  std::future<void> ended_future = ended.get_future();
  const std::future_status status = ended_future.wait_for(outbox_.options().timeout + kStopMargin);
  (void)status;  // ended, or an attempt is abandoned (see delivery.h)
  io_.stop();
  thread_.join();
}

}  // namespace turnpike::webhooks
