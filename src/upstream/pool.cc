#include "upstream/pool.h"

#include <boost/asio/ssl/error.hpp>

namespace turnpike::upstream {
namespace net = boost::asio;

namespace {
constexpr std::chrono::seconds kResolveTtl{30};
}

TlsContexts::TlsContexts(const std::string& ca_file, bool load_trust_store) {
  if (load_trust_store) verify_.set_default_verify_paths();
  if (!ca_file.empty()) verify_.load_verify_file(ca_file);
  verify_.set_verify_mode(net::ssl::verify_peer);
  no_verify_.set_verify_mode(net::ssl::verify_none);
}

UpstreamConnection::UpstreamConnection(net::io_context& context, net::ssl::context* tls_context)
    : plain(context), deadline(context.get_executor()) {
  if (tls_context != nullptr) {
    tls = std::make_unique<net::ssl::stream<net::ip::tcp::socket>>(context, *tls_context);
  }
}

void UpstreamConnection::Close() {
  turnpike::net::CloseDeadline(deadline);
  boost::system::error_code ec;
  lowest().close(ec);
}

Pool::Pool(net::io_context& context, const TlsContexts& tls, PoolOptions options)
    : context_(context),
      tls_(tls),
      options_(options),
      resolver_(std::make_unique<net::ip::tcp::resolver>(context)) {}

Pool::~Pool() { Shutdown(); }

std::shared_ptr<UpstreamConnection> Pool::Acquire(const Origin& origin) {
  auto it = idle_.find(origin.key);
  if (it == idle_.end()) return nullptr;
  auto& list = it->second;
  const auto now = Clock::now();
  while (!list.empty()) {
    std::shared_ptr<UpstreamConnection> conn = std::move(list.back());
    list.pop_back();
    probe_.idle.Add(-1);
    if (now - conn->idle_since < options_.idle_ttl && conn->lowest().is_open()) {
      probe_.reuses.Add();
      return conn;
    }
    conn->Close();
  }
  return nullptr;
}

void Pool::Release(const Origin& origin, std::shared_ptr<UpstreamConnection> connection) {
  auto& list = idle_[origin.key];
  if (shut_down_ || list.size() >= options_.max_idle_per_origin) {
    connection->Close();
    return;
  }
  connection->idle_since = Clock::now();
  list.push_back(std::move(connection));
  probe_.idle.Add(1);
}

void Pool::Shutdown() {
  shut_down_ = true;
  for (auto& [key, list] : idle_) {
    for (auto& conn : list) conn->Close();
    probe_.idle.Add(-static_cast<int64_t>(list.size()));
  }
  idle_.clear();
  resolver_.reset();
}

const net::ip::tcp::resolver::results_type* Pool::CachedEndpoints(const std::string& key) {
  auto it = resolved_.find(key);
  if (it == resolved_.end() || Clock::now() - it->second.at > kResolveTtl) return nullptr;
  return &it->second.results;
}

void Pool::CacheEndpoints(const std::string& key, net::ip::tcp::resolver::results_type r) {
  resolved_[key] = Resolved{std::move(r), Clock::now()};
}

}  // namespace turnpike::upstream
