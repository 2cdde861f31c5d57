#include "config/describe.h"

#include <sstream>
#include <string>

#include "config/listen.h"

namespace turnpike::config {
namespace {

// The URL without its password (user:password@ becomes user:***@).
std::string WithoutPassword(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + ":***" + url.substr(at);
}

std::string DescribeStore(const StoreConfig& s) {
  if (s.engine == StoreConfig::Engine::kSqlite) return s.path;
  std::string out = "postgres " + WithoutPassword(s.url) + " (pool " + std::to_string(s.pool);
  if (!s.notify_url.empty()) out += ", LISTEN on " + WithoutPassword(s.notify_url);
  return out + ")";
}

// "https://user:secret@host/v1" -> "https://***@host/v1".
std::string MaskUserInfo(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  const size_t authority = scheme_end + 3;
  const size_t path = url.find('/', authority);
  const size_t at = url.rfind('@', path == std::string::npos ? url.size() : path);
  if (at == std::string::npos || at < authority) return url;
  return url.substr(0, authority) + "***" + url.substr(at);
}

std::string DescribeAccessLog(const std::string& access_log) {
  if (access_log.empty()) return "off";
  if (access_log == "-") return "stdout";
  return access_log;
}

}  // namespace

std::string DescribeConfig(const Config& config) {
  std::ostringstream out;
  const ServerConfig& s = config.server;
  out << "listen: " << FormatListen(s.host, s.port) << "\n";
  out << "workers: ";
  if (s.workers == 0) {
    out << "auto (one per core)\n";
  } else {
    out << s.workers << "\n";
  }
  out << "access log: " << DescribeAccessLog(s.access_log) << "\n";
  if (s.memory_trim.count() > 0) {
    out << "memory trim: " << s.memory_trim.count() << " ms after a burst\n";
  }
  if (s.tls.enabled()) {
    out << "tls: " << s.tls.certificates.size() << " certificate(s), default "
        << s.tls.certificates.front().cert_file << ", min version " << s.tls.min_version
        << ", client certificates "
        << (s.tls.client_ca_file.empty() ? "off"
            : s.tls.require_client_cert  ? "required"
                                         : "optional")
        << " (SIGHUP reloads)\n";
  }
  if (s.http2) {
    out << "http2: on (" << (s.tls.enabled() ? "ALPN h2" : "cleartext prior knowledge") << ", max "
        << s.http2_max_concurrent_streams << " streams per connection)\n";
  }
  const GovernanceConfig& g = config.governance;
  if (g.enabled) {
    out << "governance: on (keys, budgets, rate limits), store " << DescribeStore(config.store)
        << ", call log " << (config.call_log.log_store ? "on" : "off") << "\n";
    out << "console: " << (config.ui.enabled ? "/ui (with TURNPIKE_ADMIN_TOKEN)" : "off") << "\n";
  } else {
    out << "governance: OFF (no API keys are checked: an open gateway)\n";
  }
  if (!config.redis.url.empty() && g.enabled) {
    out << "counters: budget and rate leases from redis " << config.redis.host << ":"
        << config.redis.port << "/" << config.redis.db << " (lease ttl "
        << config.redis.lease_ttl.count() << "ms, refill wait " << config.redis.refill_wait.count()
        << "ms)\n";
  }
  const OtlpConfig& otlp = config.telemetry.otlp;
  if (!otlp.endpoint.empty()) {
    out << "telemetry: OpenTelemetry traces to " << MaskUserInfo(otlp.endpoint) << " ("
        << otlp.protocol << ", sampling " << otlp.sampling_ratio << ", queue " << otlp.queue_size
        << ", batch " << otlp.batch_size << ", every " << otlp.export_interval.count() << "ms, "
        << otlp.headers.size() << " header(s))\n";
  }
  const UpstreamConfig& u = config.upstream;
  out << "upstream pool: idle up to the recent peak, at most " << u.pool_max_idle_per_origin
      << " per origin and worker, idle ttl " << u.pool_idle_ttl.count() << "ms, active "
      << (u.pool_max_active_per_origin == 0
              ? std::string("uncapped")
              : "capped at " + std::to_string(u.pool_max_active_per_origin))
      << "\n";
  out << "routing: up to " << config.routing.max_attempts << " attempt(s) per request\n";
  out << "models: " << config.models.size() << "\n";
  for (const ModelRoute& model : config.models) {
    out << "  " << model.name << "\n";
    for (const Deployment& d : model.deployments) {
      out << "    - " << d.provider;
      if (d.api != "chat") out << " api=" << d.api;
      out << " " << MaskUserInfo(d.base_url) << " model=" << d.model << " weight=" << d.weight
          << " api_key=" << (d.api_key.empty() ? "none" : "set");
      if (!d.tls_verify) out << " tls_verify=false";
      if (d.http2) out << " http2";
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace turnpike::config
