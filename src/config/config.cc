// ParseConfig and LoadConfig: one function per YAML section, each reading its keys through a
// strict YamlMap (unknown keys are errors) and validating ranges right where they are read.
#include "config/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "config/listen.h"
#include "config/yaml_map.h"

namespace turnpike::config {
namespace {

constexpr int64_t kMaxWorkers = 1024;
constexpr int64_t kMaxHeaderFields = 10000;
constexpr int64_t kMaxHttp2Streams = 65536;
constexpr int64_t kMinAttempts = 1;
constexpr int64_t kMaxAttempts = 10;
constexpr int64_t kMaxWeight = 1'000'000;
constexpr int64_t kMaxIdlePerOrigin = 1'000'000;
constexpr size_t kMinBufferBytes = 1024;
constexpr size_t kMinCacheBytes = size_t{64} << 10;
constexpr Millis kMaxMappingTtl{3'600'000};             // search.qdrant.mapping_ttl
constexpr Millis kMinRetention{62LL * 24 * 3'600'000};  // call_log.retention: two months

void RequireAtLeast(const YamlMap& map, std::string_view key, size_t value, size_t min,
                    std::string_view min_text) {
  if (value < min) FailAt(map.KeyPath(key), "must be at least " + std::string(min_text));
}

void RequirePositive(const YamlMap& map, std::string_view key, Millis value) {
  if (value <= Millis(0)) FailAt(map.KeyPath(key), "must be greater than 0");
}

ServerConfig ParseServer(const YamlMap& root) {
  ServerConfig s;
  YamlMap m(root.Child("server"), root.KeyPath("server"),
            {"listen", "workers", "max_header_bytes", "max_header_fields", "max_body_bytes",
             "timeouts", "sse_keepalive", "server_timing", "access_log", "tls", "http2",
             "http2_max_concurrent_streams", "memory_trim"});
  const std::string listen = m.String("listen", "");
  if (!listen.empty()) {
    ListenAddress address = ParseListen(m.KeyPath("listen"), listen);
    s.host = std::move(address.host);
    s.port = address.port;
  }
  s.workers = static_cast<int>(m.Int("workers", s.workers, 0, kMaxWorkers));
  s.max_header_bytes = m.Size("max_header_bytes", s.max_header_bytes);
  RequireAtLeast(m, "max_header_bytes", s.max_header_bytes, kMinBufferBytes, "1KiB");
  s.max_header_fields = static_cast<size_t>(
      m.Int("max_header_fields", static_cast<int64_t>(s.max_header_fields), 1, kMaxHeaderFields));
  s.max_body_bytes = m.Size("max_body_bytes", s.max_body_bytes);
  RequireAtLeast(m, "max_body_bytes", s.max_body_bytes, 1, "1 byte");
  s.sse_keepalive = m.Duration("sse_keepalive", s.sse_keepalive);
  s.server_timing = m.Bool("server_timing", s.server_timing);
  s.access_log = m.String("access_log", s.access_log);
  s.memory_trim = m.Duration("memory_trim", s.memory_trim);  // 0 = off
  s.tls = ParseTls(m);
  s.http2 = m.Bool("http2", s.http2);
  s.http2_max_concurrent_streams = static_cast<uint32_t>(
      m.Int("http2_max_concurrent_streams", s.http2_max_concurrent_streams, 1, kMaxHttp2Streams));

  YamlMap t(m.Child("timeouts"), m.KeyPath("timeouts"),
            {"read_headers", "read_body", "idle", "drain"});
  s.read_headers_timeout = t.Duration("read_headers", s.read_headers_timeout);
  RequirePositive(t, "read_headers", s.read_headers_timeout);
  s.read_body_timeout = t.Duration("read_body", s.read_body_timeout);
  RequirePositive(t, "read_body", s.read_body_timeout);
  s.idle_timeout = t.Duration("idle", s.idle_timeout);
  RequirePositive(t, "idle", s.idle_timeout);
  s.drain_timeout = t.Duration("drain", s.drain_timeout);  // 0 = stop at once
  return s;
}

UpstreamConfig ParseUpstream(const YamlMap& root) {
  UpstreamConfig u;
  YamlMap m(root.Child("upstream"), root.KeyPath("upstream"),
            {"timeouts", "pool", "max_response_bytes", "stream_buffer_bytes", "ca_file"});
  YamlMap t(m.Child("timeouts"), m.KeyPath("timeouts"), {"connect", "first_byte", "idle"});
  u.connect_timeout = t.Duration("connect", u.connect_timeout);
  RequirePositive(t, "connect", u.connect_timeout);
  u.first_byte_timeout = t.Duration("first_byte", u.first_byte_timeout);
  RequirePositive(t, "first_byte", u.first_byte_timeout);
  u.idle_timeout = t.Duration("idle", u.idle_timeout);
  RequirePositive(t, "idle", u.idle_timeout);

  YamlMap p(m.Child("pool"), m.KeyPath("pool"),
            {"max_idle_per_origin", "idle_ttl", "max_active_per_origin"});
  u.pool_max_idle_per_origin = static_cast<size_t>(
      p.Int("max_idle_per_origin", static_cast<int64_t>(u.pool_max_idle_per_origin), 0,
            kMaxIdlePerOrigin));
  u.pool_idle_ttl = p.Duration("idle_ttl", u.pool_idle_ttl);
  RequirePositive(p, "idle_ttl", u.pool_idle_ttl);
  u.pool_max_active_per_origin = static_cast<size_t>(
      p.Int("max_active_per_origin", static_cast<int64_t>(u.pool_max_active_per_origin), 0,
            kMaxIdlePerOrigin));

  u.max_response_bytes = m.Size("max_response_bytes", u.max_response_bytes);
  RequireAtLeast(m, "max_response_bytes", u.max_response_bytes, kMinBufferBytes, "1KiB");
  u.stream_buffer_bytes = m.Size("stream_buffer_bytes", u.stream_buffer_bytes);
  RequireAtLeast(m, "stream_buffer_bytes", u.stream_buffer_bytes, kMinBufferBytes, "1KiB");
  u.ca_file = m.String("ca_file", u.ca_file);
  return u;
}

RoutingConfig ParseRouting(const YamlMap& root) {
  RoutingConfig r;
  YamlMap m(root.Child("routing"), root.KeyPath("routing"),
            {"max_attempts", "backoff_base", "backoff_max", "max_retry_after"});
  r.max_attempts =
      static_cast<int>(m.Int("max_attempts", r.max_attempts, kMinAttempts, kMaxAttempts));
  r.backoff_base = m.Duration("backoff_base", r.backoff_base);
  r.backoff_max = m.Duration("backoff_max", r.backoff_max);
  if (r.backoff_max < r.backoff_base) {
    FailAt(m.KeyPath("backoff_max"), "must be at least routing.backoff_base");
  }
  r.max_retry_after = m.Duration("max_retry_after", r.max_retry_after);
  return r;
}

// "http://host[:port][/path]" with one trailing slash removed.
std::string NormalizeBaseUrl(const YamlMap& m, std::string url) {
  const std::string key = m.KeyPath("base_url");
  size_t host_start = 0;
  if (url.starts_with("http://")) {
    host_start = 7;
  } else if (url.starts_with("https://")) {
    host_start = 8;
  } else {
    FailAt(key, "must start with http:// or https://");
  }
  if (url.size() == host_start || url[host_start] == '/') FailAt(key, "missing host");
  if (url.find_first_of(" \t\r\n?#") != std::string::npos) {
    FailAt(key, "must not contain whitespace, a query or a fragment");
  }
  if (url.back() == '/') url.pop_back();
  return url;
}

// `api` picks which of a provider's APIs the deployment is called through. Only OpenAI has two.
std::string ParseApi(const YamlMap& m, const std::string& provider) {
  if (!m.Child("api").IsDefined()) return "chat";
  if (provider != "openai") {
    FailAt(m.KeyPath("api"), "only a deployment of provider openai may choose its api");
  }
  std::string api = m.String("api", "");
  if (api != "chat" && api != "responses") {
    FailAt(m.KeyPath("api"), "must be chat or responses, not \"" + api + "\"");
  }
  return api;
}

Deployment ParseDeployment(const YAML::Node& node, const std::string& path,
                           const std::string& public_name) {
  Deployment d;
  YamlMap m(
      node, path,
      {"provider", "api", "base_url", "api_key", "model", "weight", "tls_verify", "http2", "name"});
  if (!node.IsMap()) FailAt(path, "expected a mapping with provider and base_url", node);
  m.Require("provider");
  d.provider = m.String("provider", "");
  // Which dialects exist is the provider registry's to say: model_call::RouteTable::Build checks.
  if (d.provider.empty()) FailAt(m.KeyPath("provider"), "must not be empty");
  d.api = ParseApi(m, d.provider);
  m.Require("base_url");
  d.base_url = NormalizeBaseUrl(m, m.String("base_url", ""));
  d.api_key = m.String("api_key", "");
  d.model = m.String("model", public_name);
  if (d.model.empty()) FailAt(m.KeyPath("model"), "must not be empty");
  d.weight = static_cast<uint32_t>(m.Int("weight", d.weight, 1, kMaxWeight));
  d.tls_verify = m.Bool("tls_verify", d.tls_verify);
  d.http2 = m.Bool("http2", d.http2);
  d.name = m.String("name", "");
  if (node["name"].IsDefined() && d.name.empty()) FailAt(m.KeyPath("name"), "must not be empty");
  return d;
}

ModelRoute ParseModel(const YAML::Node& node, const std::string& path) {
  ModelRoute route;
  YamlMap m(node, path, {"name", "deployments"});
  if (!node.IsMap()) FailAt(path, "expected a mapping with name and deployments", node);
  m.Require("name");
  route.name = m.String("name", "");
  if (route.name.empty()) FailAt(m.KeyPath("name"), "must not be empty");

  const std::string deployments_path = m.KeyPath("deployments");
  const YAML::Node deployments = m.Child("deployments");
  if (!deployments.IsDefined() || deployments.IsNull()) {
    FailAt(deployments_path, "required: at least one deployment", node);
  }
  if (!deployments.IsSequence()) FailAt(deployments_path, "expected a list", deployments);
  if (deployments.size() == 0) FailAt(deployments_path, "at least one deployment is required");
  for (size_t i = 0; i < deployments.size(); ++i) {
    route.deployments.push_back(ParseDeployment(
        deployments[i], deployments_path + "[" + std::to_string(i) + "]", route.name));
    Deployment& added = route.deployments.back();
    if (added.name.empty())
      added.name = i == 0 ? route.name : route.name + "." + std::to_string(i + 1);
  }
  return route;
}

// Deployment names are the admin API's ids of deployments: unique across every model.
void CheckDeploymentNames(const Config& config) {
  std::set<std::string, std::less<>> names;
  for (size_t m = 0; m < config.models.size(); ++m) {
    const ModelRoute& route = config.models[m];
    for (size_t d = 0; d < route.deployments.size(); ++d) {
      if (!names.insert(route.deployments[d].name).second) {
        FailAt("models[" + std::to_string(m) + "].deployments[" + std::to_string(d) + "].name",
               "duplicate deployment name \"" + route.deployments[d].name + "\"");
      }
    }
  }
}

std::vector<ModelRoute> ParseModels(const YamlMap& root) {
  const YAML::Node models = root.Child("models");
  if (!models.IsDefined() || models.IsNull()) FailAt("models", "required: at least one model");
  if (!models.IsSequence()) FailAt("models", "expected a list", models);
  if (models.size() == 0) FailAt("models", "at least one model is required", models);
  std::vector<ModelRoute> out;
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string path = "models[" + std::to_string(i) + "]";
    ModelRoute route = ParseModel(models[i], path);
    if (!names.insert(route.name).second) {
      FailAt(path + ".name", "duplicate model name \"" + route.name + "\"", models[i]);
    }
    out.push_back(std::move(route));
  }
  return out;
}

constexpr int64_t kMaxSnapshotTtlMs = 30'000;
constexpr int64_t kMaxStorePool = 64;
constexpr double kMaxPricePerMtok = 1'000'000;  // USD; anything above is a typo
constexpr int64_t kMaxOutputTokens = 100'000'000;
constexpr double kMicros = 1'000'000;

GovernanceConfig ParseGovernance(const YamlMap& root) {
  GovernanceConfig g;
  YamlMap m(root.Child("governance"), root.KeyPath("governance"),
            {"enabled", "reconcile_interval"});
  g.enabled = m.Bool("enabled", g.enabled);
  YamlMap h(root.Child("hotpath"), root.KeyPath("hotpath"), {"snapshot_ttl"});
  g.snapshot_ttl = h.Duration("snapshot_ttl", g.snapshot_ttl);
  if (g.snapshot_ttl > Millis(kMaxSnapshotTtlMs)) {
    FailAt(h.KeyPath("snapshot_ttl"), "must be at most 30s");
  }
  g.reconcile_interval = m.Duration("reconcile_interval", g.reconcile_interval);
  return g;
}

StoreConfig ParseStore(const YamlMap& root) {
  StoreConfig s;
  YamlMap m(root.Child("store"), root.KeyPath("store"),
            {"engine", "path", "synchronous", "queue_jobs", "url", "pool", "notify_url"});
  const std::string engine = m.String("engine", "sqlite");
  if (engine != "sqlite" && engine != "postgres") {
    FailAt(m.KeyPath("engine"), "must be sqlite or postgres, not \"" + engine + "\"");
  }
  s.engine = engine == "postgres" ? StoreConfig::Engine::kPostgres : StoreConfig::Engine::kSqlite;
  s.url = m.String("url", "");
  s.notify_url = m.String("notify_url", "");
  s.pool = static_cast<int>(m.Int("pool", s.pool, 1, kMaxStorePool));
  if (s.engine == StoreConfig::Engine::kPostgres) {
    if (s.url.empty()) FailAt(m.KeyPath("url"), "is required with engine: postgres");
    for (const auto& [key, url] :
         {std::pair{"url", &s.url}, std::pair{"notify_url", &s.notify_url}}) {
      if (!url->empty() && url->rfind("postgresql://", 0) != 0 &&
          url->rfind("postgres://", 0) != 0) {
        FailAt(m.KeyPath(key), "must be a postgresql:// URL");
      }
    }
  } else {
    for (const auto& [key, url] :
         {std::pair{"url", &s.url}, std::pair{"notify_url", &s.notify_url}}) {
      if (!url->empty()) FailAt(m.KeyPath(key), "is only for engine: postgres");
    }
  }
  s.path = m.String("path", s.path);
  if (s.path.empty()) FailAt(m.KeyPath("path"), "must not be empty");
  const std::string sync = m.String("synchronous", "normal");
  if (sync != "normal" && sync != "full") {
    FailAt(m.KeyPath("synchronous"), "must be normal or full, not \"" + sync + "\"");
  }
  s.synchronous_full = sync == "full";
  s.queue_jobs =
      static_cast<size_t>(m.Int("queue_jobs", static_cast<int64_t>(s.queue_jobs), 1, 1'000'000));
  return s;
}

CallLogConfig ParseCallLog(const YamlMap& root) {
  CallLogConfig c;
  YamlMap m(root.Child("call_log"), root.KeyPath("call_log"),
            {"log_store", "queue_rows", "batch_rows", "flush_interval", "when_full", "max_wait",
             "retention", "purge_interval"});
  c.log_store = m.Bool("log_store", c.log_store);
  c.queue_rows =
      static_cast<size_t>(m.Int("queue_rows", static_cast<int64_t>(c.queue_rows), 1, 100'000'000));
  c.batch_rows =
      static_cast<size_t>(m.Int("batch_rows", static_cast<int64_t>(c.batch_rows), 1, 1'000'000));
  c.flush_interval = m.Duration("flush_interval", c.flush_interval);
  RequirePositive(m, "flush_interval", c.flush_interval);
  const std::string when_full = m.String("when_full", "wait");
  if (when_full != "wait" && when_full != "drop") {
    FailAt(m.KeyPath("when_full"), "must be wait or drop, not \"" + when_full + "\"");
  }
  c.drop_when_full = when_full == "drop";
  c.max_wait = m.Duration("max_wait", c.max_wait);
  c.retention = m.Duration("retention", c.retention);
  if (c.retention.count() > 0 && c.retention < kMinRetention) {
    FailAt(m.KeyPath("retention"),
           "must be 0s (off) or at least 62d: reconcile sums this month's and last month's rows");
  }
  c.purge_interval = m.Duration("purge_interval", c.purge_interval);
  RequirePositive(m, "purge_interval", c.purge_interval);
  return c;
}

SecurityConfig ParseSecurity(const YamlMap& root) {
  SecurityConfig c;
  YamlMap m(root.Child("security"), root.KeyPath("security"), {"data_key_file"});
  c.data_key_file = m.String("data_key_file", "");
  return c;
}

// redis://host[:port][/db]; no credentials or TLS yet (README "Fleet: Redis leases").
void ParseRedisUrl(const std::string& path, RedisConfig& r) {
  constexpr std::string_view kScheme = "redis://";
  if (r.url.rfind(kScheme, 0) != 0)
    FailAt(path, "must start with redis:// (got \"" + r.url + "\")");
  std::string rest = r.url.substr(kScheme.size());
  if (rest.find('@') != std::string::npos) FailAt(path, "credentials in the url are not supported");
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    rest.resize(slash);
    if (!db.empty()) {
      if (db.size() > 2 || db.find_first_not_of("0123456789") != std::string::npos) {
        FailAt(path, "database must be a number 0..15, not \"" + db + "\"");
      }
      r.db = std::stoi(db);
      if (r.db > 15) FailAt(path, "database must be a number 0..15");
    }
  }
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) == 0 ||
        std::stoi(port) > 65535) {
      FailAt(path, "port must be 1..65535, not \"" + port + "\"");
    }
    r.port = static_cast<uint16_t>(std::stoi(port));
    rest.resize(colon);
  }
  if (rest.empty()) FailAt(path, "missing host");
  r.host = rest;
}

RedisConfig ParseRedis(const YamlMap& root) {
  RedisConfig r;
  YamlMap m(root.Child("redis"), root.KeyPath("redis"),
            {"url", "command_timeout", "lease_ttl", "refill_wait", "report_interval"});
  r.url = m.String("url", "");
  if (!r.url.empty()) ParseRedisUrl(m.KeyPath("url"), r);
  r.command_timeout = m.Duration("command_timeout", r.command_timeout);
  RequirePositive(m, "command_timeout", r.command_timeout);
  r.lease_ttl = m.Duration("lease_ttl", r.lease_ttl);
  if (r.lease_ttl < Millis(1'000)) FailAt(m.KeyPath("lease_ttl"), "must be at least 1s");
  r.refill_wait = m.Duration("refill_wait", r.refill_wait);  // 0 = never wait
  r.report_interval = m.Duration("report_interval", r.report_interval);
  RequirePositive(m, "report_interval", r.report_interval);
  return r;
}

FleetConfig ParseFleet(const YamlMap& root) {
  FleetConfig f;
  YamlMap m(root.Child("fleet"), root.KeyPath("fleet"), {"outage_deadline"});
  f.outage_deadline = m.Duration("outage_deadline", f.outage_deadline);
  RequirePositive(m, "outage_deadline", f.outage_deadline);
  return f;
}

SearchConfig ParseSearch(const YamlMap& root) {
  SearchConfig c;
  const YAML::Node node = root.Child("search");
  if (!node.IsDefined() || node.IsNull()) return c;
  YamlMap m(node, root.KeyPath("search"),
            {"enabled", "prefix", "backend", "path", "timeout", "queue_jobs", "qdrant", "cache"});
  c.enabled = m.Bool("enabled", true);
  c.prefix = m.String("prefix", c.prefix);
  if (c.prefix.size() < 2 || c.prefix[0] != '/' || c.prefix.back() == '/' ||
      c.prefix.find_first_of("{}*?# ") != std::string::npos) {
    FailAt(m.KeyPath("prefix"),
           "must be \"/\" followed by path segments, without a trailing \"/\"");
  }
  c.backend = m.String("backend", c.backend);
  if (c.backend != "embedded" && c.backend != "qdrant") {
    FailAt(m.KeyPath("backend"), "must be embedded or qdrant, not \"" + c.backend + "\"");
  }
  const YAML::Node qdrant = m.Child("qdrant");
  if (qdrant.IsDefined() && !qdrant.IsNull()) {
    YamlMap q(qdrant, m.KeyPath("qdrant"), {"url", "api_key", "max_candidates", "mapping_ttl"});
    c.qdrant_url = q.String("url", "");
    c.qdrant_api_key = q.String("api_key", "");
    c.qdrant_max_candidates = q.Int("max_candidates", c.qdrant_max_candidates, 1, 1'000'000);
    c.qdrant_mapping_ttl = q.Duration("mapping_ttl", c.qdrant_mapping_ttl);  // 0 = off
    if (c.qdrant_mapping_ttl > kMaxMappingTtl) {
      FailAt(q.KeyPath("mapping_ttl"), "must be at most 1h");
    }
  }
  if (c.backend == "qdrant" && c.qdrant_url.rfind("http://", 0) != 0 &&
      c.qdrant_url.rfind("https://", 0) != 0) {
    FailAt(
        m.KeyPath("qdrant") + ".url",
        "must be an http:// or https:// URL when backend is qdrant, not \"" + c.qdrant_url + "\"");
  }
  c.path = m.String("path", c.path);
  if (c.path.empty()) FailAt(m.KeyPath("path"), "must not be empty");
  c.timeout = m.Duration("timeout", c.timeout);
  RequirePositive(m, "timeout", c.timeout);
  c.queue_jobs =
      static_cast<size_t>(m.Int("queue_jobs", static_cast<int64_t>(c.queue_jobs), 1, 1'000'000));
  const YAML::Node cache = m.Child("cache");
  if (cache.IsDefined() && !cache.IsNull()) {
    YamlMap k(cache, m.KeyPath("cache"), {"enabled", "max_bytes", "tenant_max_bytes", "ttl"});
    c.cache_enabled = k.Bool("enabled", true);
    c.cache_max_bytes = k.Size("max_bytes", c.cache_max_bytes);
    RequireAtLeast(k, "max_bytes", c.cache_max_bytes, kMinCacheBytes, "64KiB");
    c.cache_tenant_max_bytes = k.Size("tenant_max_bytes", c.cache_tenant_max_bytes);
    if (c.cache_tenant_max_bytes > c.cache_max_bytes) {
      FailAt(k.KeyPath("tenant_max_bytes"), "must not exceed search.cache.max_bytes");
    }
    c.cache_ttl = k.Duration("ttl", c.cache_ttl);  // 0 = off
  }
  return c;
}

int64_t ToMicros(double usd) { return static_cast<int64_t>(std::llround(usd * kMicros)); }

std::vector<PriceConfig> ParsePrices(const YamlMap& root) {
  std::vector<PriceConfig> out;
  const YAML::Node prices = root.Child("prices");
  if (!prices.IsDefined() || prices.IsNull()) return out;
  if (!prices.IsMap()) FailAt("prices", "expected a mapping of model name to price", prices);
  for (const auto& entry : prices) {
    PriceConfig p;
    p.model = entry.first.as<std::string>();
    const std::string path = "prices." + p.model;
    YamlMap m(entry.second, path,
              {"input", "output", "cached_input", "cache_write", "reasoning", "max_output_tokens"});
    if (!entry.second.IsMap()) FailAt(path, "expected a mapping", entry.second);
    m.Require("input");
    m.Require("output");
    m.Require("max_output_tokens");
    p.input_micros_per_mtok = ToMicros(m.Number("input", 0, 0, kMaxPricePerMtok));
    p.output_micros_per_mtok = ToMicros(m.Number("output", 0, 0, kMaxPricePerMtok));
    p.cached_input_micros_per_mtok =
        ToMicros(m.Number("cached_input", static_cast<double>(p.input_micros_per_mtok) / kMicros, 0,
                          kMaxPricePerMtok));
    p.cache_write_micros_per_mtok =
        ToMicros(m.Number("cache_write", static_cast<double>(p.input_micros_per_mtok) / kMicros, 0,
                          kMaxPricePerMtok));
    p.reasoning_micros_per_mtok = ToMicros(m.Number(
        "reasoning", static_cast<double>(p.output_micros_per_mtok) / kMicros, 0, kMaxPricePerMtok));
    p.max_output_tokens = m.Int("max_output_tokens", 0, 1, kMaxOutputTokens);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string DialectOf(const Deployment& deployment) {
  if (deployment.provider == "openai" && deployment.api == "responses") return "openai_responses";
  return deployment.provider;
}

Config ParseConfig(const std::string& yaml_text) {
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    YamlMap top(root, "",
                {"server", "upstream", "routing", "models", "governance", "hotpath", "store",
                 "call_log", "prices", "redis", "fleet", "search", "llm_cache", "agents",
                 "webhooks", "telemetry", "ui", "security"});
    Config config;
    config.server = ParseServer(top);
    config.upstream = ParseUpstream(top);
    config.routing = ParseRouting(top);
    config.models = ParseModels(top);
    config.governance = ParseGovernance(top);
    config.store = ParseStore(top);
    config.call_log = ParseCallLog(top);
    config.prices = ParsePrices(top);
    config.redis = ParseRedis(top);
    config.fleet = ParseFleet(top);
    // No request waits on Redis past the outage deadline: a command queued behind a batch in
    // flight waits for that batch's timeout and then its own (redis/client.h), so each is at
    // most half of it; a request parked for a refill at most all of it.
    config.redis.command_timeout =
        std::min(config.redis.command_timeout, config.fleet.outage_deadline / 2);
    config.redis.refill_wait = std::min(config.redis.refill_wait, config.fleet.outage_deadline);
    config.search = ParseSearch(top);
    config.llm_cache = ParseLlmCache(top);
    CheckSemanticModel(config);
    config.agents = ParseAgents(top);
    config.webhooks = ParseWebhooks(top);
    config.telemetry = ParseTelemetry(top);
    config.ui = ParseUi(top);
    config.security = ParseSecurity(top);
    CheckDeploymentNames(config);
    if (config.search.enabled && !config.governance.enabled) {
      FailAt("search.enabled", "the search door needs governance (an index belongs to a tenant)");
    }
    return config;
  } catch (const YAML::Exception& e) {
    std::string where;
    if (!e.mark.is_null()) {
      where = " at line " + std::to_string(e.mark.line + 1) + ", column " +
              std::to_string(e.mark.column + 1);
    }
    throw ConfigError("(yaml)" + where + ": " + e.msg);
  }
}

Config LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open config file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read config file");
  try {
    return ParseConfig(text.str());
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

}  // namespace turnpike::config
