#include "config/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "config/describe.h"

namespace turnpike::config {
namespace {

using std::chrono::milliseconds;

constexpr const char* kFullConfig = R"(
server:
  listen: "[::1]:9090"
  workers: 4
  max_header_bytes: 32KiB
  max_header_fields: 64
  max_body_bytes: 8MiB
  timeouts: {read_headers: 5s, read_body: 1m, idle: 2m, drain: 0}
  sse_keepalive: 0s
  server_timing: true
  access_log: /var/log/turnpike/access.log
  memory_trim: 2m
upstream:
  timeouts: {connect: 250ms, first_byte: 90s, idle: 1h}
  pool: {max_idle_per_origin: 8, idle_ttl: 30s, max_active_per_origin: 16}
  max_response_bytes: 1GiB
  stream_buffer_bytes: 4096
  ca_file: /etc/ssl/extra.pem
routing:
  max_attempts: 10
  backoff_base: 10ms
  backoff_max: 1s
  max_retry_after: 0
models:
  - name: gpt-4o-mini
    deployments:
      - provider: openai
        base_url: https://api.openai.com/v1/
        api_key: sk-secret-value
        model: gpt-4o-mini-2024-07-18
        weight: 3
        tls_verify: false
        http2: true
      - provider: openai
        base_url: http://127.0.0.1:9000
  - name: local
    deployments:
      - {provider: openai, base_url: "http://10.0.0.1:8000/v1"}
)";

TEST(ParseConfigTest, FullFileReadsEveryKey) {
  const Config c = ParseConfig(kFullConfig);
  EXPECT_EQ(c.server.host, "::1");
  EXPECT_EQ(c.server.port, 9090);
  EXPECT_EQ(c.server.workers, 4);
  EXPECT_EQ(c.server.max_header_bytes, 32u * 1024);
  EXPECT_EQ(c.server.max_header_fields, 64u);
  EXPECT_EQ(c.server.max_body_bytes, 8u * 1024 * 1024);
  EXPECT_EQ(c.server.read_headers_timeout, milliseconds(5'000));
  EXPECT_EQ(c.server.read_body_timeout, milliseconds(60'000));
  EXPECT_EQ(c.server.idle_timeout, milliseconds(120'000));
  EXPECT_EQ(c.server.drain_timeout, milliseconds(0));
  EXPECT_EQ(c.server.sse_keepalive, milliseconds(0));
  EXPECT_TRUE(c.server.server_timing);
  EXPECT_EQ(c.server.access_log, "/var/log/turnpike/access.log");
  EXPECT_EQ(c.server.memory_trim, milliseconds(120'000));

  EXPECT_EQ(c.upstream.connect_timeout, milliseconds(250));
  EXPECT_EQ(c.upstream.first_byte_timeout, milliseconds(90'000));
  EXPECT_EQ(c.upstream.idle_timeout, milliseconds(3'600'000));
  EXPECT_EQ(c.upstream.pool_max_idle_per_origin, 8u);
  EXPECT_EQ(c.upstream.pool_idle_ttl, milliseconds(30'000));
  EXPECT_EQ(c.upstream.pool_max_active_per_origin, 16u);
  EXPECT_EQ(c.upstream.max_response_bytes, size_t{1} << 30);
  EXPECT_EQ(c.upstream.stream_buffer_bytes, 4096u);
  EXPECT_EQ(c.upstream.ca_file, "/etc/ssl/extra.pem");

  EXPECT_EQ(c.routing.max_attempts, 10);
  EXPECT_EQ(c.routing.backoff_base, milliseconds(10));
  EXPECT_EQ(c.routing.backoff_max, milliseconds(1'000));
  EXPECT_EQ(c.routing.max_retry_after, milliseconds(0));

  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.models[0].name, "gpt-4o-mini");
  ASSERT_EQ(c.models[0].deployments.size(), 2u);
  const Deployment& d0 = c.models[0].deployments[0];
  EXPECT_EQ(d0.provider, "openai");
  EXPECT_EQ(d0.base_url, "https://api.openai.com/v1");  // trailing slash stripped
  EXPECT_EQ(d0.api_key, "sk-secret-value");
  EXPECT_EQ(d0.model, "gpt-4o-mini-2024-07-18");
  EXPECT_EQ(d0.weight, 3u);
  EXPECT_FALSE(d0.tls_verify);
  EXPECT_TRUE(d0.http2);
  const Deployment& d1 = c.models[0].deployments[1];
  EXPECT_EQ(d1.base_url, "http://127.0.0.1:9000");
  EXPECT_EQ(d1.model, "gpt-4o-mini");  // defaults to the public name
  EXPECT_EQ(d1.weight, 1u);
  EXPECT_TRUE(d1.tls_verify);
  EXPECT_FALSE(d1.http2);  // HTTP/1.1 unless asked
  EXPECT_EQ(c.models[1].deployments[0].model, "local");
}

TEST(ParseConfigTest, GovernanceStoreCallLogAndPrices) {
  const Config c = ParseConfig(std::string(R"(
governance: {enabled: off, reconcile_interval: 0s}
hotpath: {snapshot_ttl: 0s}
store: {path: /tmp/x.db, synchronous: full, queue_jobs: 8}
call_log: {log_store: off, queue_rows: 10, batch_rows: 5, flush_interval: 20ms, when_full: drop,
           max_wait: 1s}
prices:
  m: {input: 0.15, output: 0.6, max_output_tokens: 100}
  n: {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75, reasoning: 22.5,
      max_output_tokens: 8192}
models: [{name: m, deployments: [{provider: openai, base_url: "http://h"}]}]
)"));
  EXPECT_FALSE(c.governance.enabled);
  EXPECT_EQ(c.governance.snapshot_ttl, milliseconds(0));
  EXPECT_EQ(c.governance.reconcile_interval, milliseconds(0));
  EXPECT_EQ(c.store.path, "/tmp/x.db");
  EXPECT_TRUE(c.store.synchronous_full);
  EXPECT_EQ(c.store.queue_jobs, 8u);
  EXPECT_FALSE(c.call_log.log_store);
  EXPECT_EQ(c.call_log.batch_rows, 5u);
  EXPECT_TRUE(c.call_log.drop_when_full);
  ASSERT_EQ(c.prices.size(), 2u);
  EXPECT_EQ(c.prices[0].model, "m");
  EXPECT_EQ(c.prices[0].input_micros_per_mtok, 150'000);
  EXPECT_EQ(c.prices[0].output_micros_per_mtok, 600'000);
  EXPECT_EQ(c.prices[0].cached_input_micros_per_mtok, 150'000);  // defaults to the input price
  EXPECT_EQ(c.prices[1].cached_input_micros_per_mtok, 300'000);
  EXPECT_EQ(c.prices[0].cache_write_micros_per_mtok, 150'000);  // defaults to the input price
  EXPECT_EQ(c.prices[1].cache_write_micros_per_mtok, 3'750'000);
  EXPECT_EQ(c.prices[0].reasoning_micros_per_mtok, 600'000);  // defaults to the output price
  EXPECT_EQ(c.prices[1].reasoning_micros_per_mtok, 22'500'000);
  EXPECT_EQ(c.prices[1].max_output_tokens, 8192);
}

TEST(ParseConfigTest, StorePostgres) {
  ::setenv("TURNPIKE_TEST_PG_PASSWORD", "s3cret", 1);
  const Config c = ParseConfig(std::string(R"(
store:
  engine: postgres
  url: postgresql://turnpike:${TURNPIKE_TEST_PG_PASSWORD}@db:6432/turnpike
  pool: 8
  notify_url: postgresql://turnpike@db:5432/turnpike
models: [{name: m, deployments: [{provider: openai, base_url: "http://h"}]}]
)"));
  EXPECT_EQ(c.store.engine, StoreConfig::Engine::kPostgres);
  EXPECT_EQ(c.store.url, "postgresql://turnpike:s3cret@db:6432/turnpike");
  EXPECT_EQ(c.store.pool, 8);
  EXPECT_EQ(c.store.notify_url, "postgresql://turnpike@db:5432/turnpike");
  const Config d = ParseConfig(R"(
models: [{name: m, deployments: [{provider: openai, base_url: "http://h"}]}]
)");
  EXPECT_EQ(d.store.engine, StoreConfig::Engine::kSqlite);
  EXPECT_EQ(d.store.pool, 4);
}

TEST(ParseConfigTest, DefaultsMatchTheHeader) {
  const Config c = ParseConfig(R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  const Config defaults;
  EXPECT_EQ(c.server.host, "127.0.0.1");
  EXPECT_EQ(c.server.port, 8080);
  EXPECT_EQ(c.server.workers, 0);
  EXPECT_EQ(c.server.max_header_bytes, 16u * 1024);
  EXPECT_EQ(c.server.max_header_fields, 100u);
  EXPECT_EQ(c.server.max_body_bytes, 4u * 1024 * 1024);
  EXPECT_EQ(c.server.read_headers_timeout, milliseconds(10'000));
  EXPECT_EQ(c.server.sse_keepalive, milliseconds(15'000));
  EXPECT_FALSE(c.server.server_timing);
  EXPECT_EQ(c.server.access_log, "-");
  EXPECT_EQ(c.server.memory_trim, milliseconds(10'000));
  EXPECT_EQ(c.upstream.stream_buffer_bytes, defaults.upstream.stream_buffer_bytes);
  EXPECT_EQ(c.upstream.max_response_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(c.upstream.connect_timeout, milliseconds(5'000));
  EXPECT_EQ(c.routing.max_attempts, 3);
  EXPECT_EQ(c.routing.backoff_base, milliseconds(50));
  EXPECT_EQ(c.routing.backoff_max, milliseconds(2'000));
  EXPECT_EQ(c.routing.max_retry_after, milliseconds(10'000));
  EXPECT_EQ(c.models.at(0).deployments.at(0).model, "m");
  EXPECT_TRUE(c.governance.enabled);
  EXPECT_EQ(c.governance.snapshot_ttl, milliseconds(3'000));
  EXPECT_EQ(c.governance.reconcile_interval, milliseconds(3'600'000));
  EXPECT_EQ(c.store.path, "turnpike.db");
  EXPECT_FALSE(c.store.synchronous_full);
  EXPECT_TRUE(c.call_log.log_store);
  EXPECT_EQ(c.call_log.batch_rows, 4'096u);
  EXPECT_EQ(c.call_log.flush_interval, milliseconds(100));
  EXPECT_FALSE(c.call_log.drop_when_full);
  EXPECT_EQ(c.call_log.max_wait, milliseconds(2'000));
  EXPECT_TRUE(c.prices.empty());
}

TEST(ParseConfigTest, NullSectionsAndValuesMeanDefaults) {
  const Config c = ParseConfig(R"(
server:
upstream:
  ca_file:
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_EQ(c.server.port, 8080);
  EXPECT_EQ(c.upstream.ca_file, "");
}

TEST(ParseConfigTest, EmptyAccessLogMeansOff) {
  const Config c = ParseConfig(R"(
server: {access_log: ""}
models: [{name: m, deployments: [{provider: openai, base_url: "http://h"}]}]
)");
  EXPECT_EQ(c.server.access_log, "");
}

TEST(LoadConfigTest, ReadsAFileAndNamesItInErrors) {
  char path[] = "/tmp/turnpike_config_testXXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  { std::ofstream(path) << kFullConfig; }
  EXPECT_EQ(LoadConfig(path).models.size(), 2u);
  { std::ofstream(path) << "server: {listn: x}\n"; }
  try {
    LoadConfig(path);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("server.listn: unknown key"), std::string::npos);
  }
  std::remove(path);
  EXPECT_THROW(LoadConfig(path), ConfigError);
}

TEST(DescribeConfigTest, SummarizesWithoutSecrets) {
  Config c = ParseConfig(kFullConfig);
  c.models[1].deployments[0].base_url = "https://user:hunter2@10.0.0.1/v1";
  const std::string text = DescribeConfig(c);
  EXPECT_NE(text.find("listen: [::1]:9090"), std::string::npos) << text;
  EXPECT_NE(text.find("workers: 4"), std::string::npos) << text;
  EXPECT_NE(text.find("gpt-4o-mini\n"), std::string::npos) << text;
  EXPECT_NE(text.find("https://api.openai.com/v1"), std::string::npos) << text;
  EXPECT_NE(text.find("http://127.0.0.1:9000"), std::string::npos) << text;
  EXPECT_NE(text.find("https://***@10.0.0.1/v1"), std::string::npos) << text;
  EXPECT_EQ(text.find("sk-secret-value"), std::string::npos) << text;
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
}

TEST(ConfigTest, ApiPicksTheOpenAiDialect) {
  const Config c = ParseConfig(R"(
models:
  - name: m
    deployments:
      - {provider: openai, api: responses, base_url: "http://h/v1"}
      - {provider: openai, api: chat, base_url: "http://h/v1"}
      - {provider: openai, base_url: "http://h/v1"}
      - {provider: anthropic, base_url: "http://a"}
)");
  const std::vector<Deployment>& d = c.models[0].deployments;
  EXPECT_EQ(d[0].api, "responses");
  EXPECT_EQ(DialectOf(d[0]), "openai_responses");
  EXPECT_EQ(DialectOf(d[1]), "openai");
  EXPECT_EQ(d[2].api, "chat");
  EXPECT_EQ(DialectOf(d[2]), "openai");
  EXPECT_EQ(DialectOf(d[3]), "anthropic");
  // `validate` shows the api only where it is not the default.
  const std::string text = DescribeConfig(c);
  EXPECT_NE(text.find("- openai api=responses http://h/v1"), std::string::npos) << text;
  EXPECT_EQ(text.find("api=chat"), std::string::npos) << text;
}

TEST(ParseConfigTest, SearchSection) {
  const Config off = ParseConfig(R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_FALSE(off.search.enabled);
  const Config c = ParseConfig(R"(
search: {prefix: /search/v1, path: /tmp/s.db, timeout: 2s}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_TRUE(c.search.enabled);
  EXPECT_EQ(c.search.prefix, "/search/v1");
  EXPECT_EQ(c.search.backend, "embedded");
  EXPECT_EQ(c.search.path, "/tmp/s.db");
  EXPECT_EQ(c.search.timeout, milliseconds(2'000));
  EXPECT_TRUE(c.search.cache_enabled);  // on with the door
}

TEST(ParseConfigTest, SearchCache) {
  const Config c = ParseConfig(R"(
search: {cache: {max_bytes: 8MiB, tenant_max_bytes: 1MiB, ttl: 30s}}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_TRUE(c.search.cache_enabled);
  EXPECT_EQ(c.search.cache_max_bytes, size_t{8} << 20);
  EXPECT_EQ(c.search.cache_tenant_max_bytes, size_t{1} << 20);
  EXPECT_EQ(c.search.cache_ttl, milliseconds(30'000));
  const Config off = ParseConfig(R"(
search: {cache: {enabled: false}}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_FALSE(off.search.cache_enabled);
  EXPECT_EQ(off.search.cache_max_bytes, size_t{64} << 20);
  EXPECT_EQ(off.search.cache_ttl, milliseconds(60'000));
}

TEST(ParseConfigTest, SearchQdrantMappingTtl) {
  const Config c = ParseConfig(R"(
search: {backend: qdrant, qdrant: {url: "http://q:6333", mapping_ttl: 250ms}}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_EQ(c.search.qdrant_mapping_ttl, milliseconds(250));
  const Config defaults = ParseConfig(R"(
search: {backend: qdrant, qdrant: {url: "http://q:6333"}}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_EQ(defaults.search.qdrant_mapping_ttl, milliseconds(5'000));
  const Config off = ParseConfig(R"(
search: {backend: qdrant, qdrant: {url: "http://q:6333", mapping_ttl: 0s}}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_EQ(off.search.qdrant_mapping_ttl, milliseconds(0));
}

}  // namespace
}  // namespace turnpike::config

namespace turnpike::config {
namespace {

TEST(ParseConfigTest, RedisUrlAndLeaseKeys) {
  const Config c = ParseConfig(R"(
redis: {url: 'redis://10.0.0.5:6380/3', command_timeout: 300ms, lease_ttl: 5s, refill_wait: 0,
        report_interval: 50ms}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_EQ(c.redis.url, "redis://10.0.0.5:6380/3");
  EXPECT_EQ(c.redis.host, "10.0.0.5");
  EXPECT_EQ(c.redis.port, 6380);
  EXPECT_EQ(c.redis.db, 3);
  EXPECT_EQ(c.redis.command_timeout, Millis(300));
  EXPECT_EQ(c.redis.lease_ttl, Millis(5'000));
  EXPECT_EQ(c.redis.refill_wait, Millis(0));
  EXPECT_EQ(c.redis.report_interval, Millis(50));
}

TEST(ParseConfigTest, FleetOutageDeadlineDefaultsTo2sAndCapsRedisWaits) {
  constexpr const char* kModel = R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)";
  const Config defaults = ParseConfig(std::string("redis: {url: 'redis://r'}") + kModel);
  EXPECT_EQ(defaults.fleet.outage_deadline, Millis(2'000));
  EXPECT_EQ(defaults.redis.command_timeout, Millis(1'000));
  EXPECT_EQ(defaults.redis.refill_wait, Millis(250));
  const Config tight =
      ParseConfig(std::string("fleet: {outage_deadline: 400ms}\n"
                              "redis: {url: 'redis://r', command_timeout: 5s, refill_wait: 1s}") +
                  kModel);
  EXPECT_EQ(tight.fleet.outage_deadline, Millis(400));
  EXPECT_EQ(tight.redis.command_timeout, Millis(200));
  EXPECT_EQ(tight.redis.refill_wait, Millis(400));
  EXPECT_THROW(ParseConfig(std::string("fleet: {outage_deadline: 0s}") + kModel), ConfigError);
  EXPECT_THROW(ParseConfig(std::string("fleet: {deadline: 1s}") + kModel), ConfigError);
}

TEST(ParseConfigTest, LlmCacheSemanticModel) {
  const Config c = ParseConfig(R"(
llm_cache: {enabled: true, semantic: {model: emb, max_entries: 500}}
models:
  - name: m
    deployments: [{provider: anthropic, base_url: "http://h"}]
  - name: emb
    deployments: [{provider: anthropic, base_url: "http://h"}, {provider: ollama, base_url: "http://o"}]
)");
  EXPECT_EQ(c.llm_cache.semantic.model, "emb");
  EXPECT_EQ(c.llm_cache.semantic.max_entries, 500u);
  const Config off = ParseConfig(R"(
llm_cache: {enabled: true}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_TRUE(off.llm_cache.semantic.model.empty());
  EXPECT_EQ(off.llm_cache.semantic.max_entries, 1'000u);
}

TEST(ParseConfigTest, UiIsOnByDefaultAndCanBeTurnedOff) {
  constexpr const char* kModel = R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)";
  const Config on = ParseConfig(kModel);
  EXPECT_TRUE(on.ui.enabled);
  EXPECT_EQ(on.ui.session_ttl, Millis(12LL * 3'600'000));
  const Config off = ParseConfig(std::string("ui: {enabled: false, session_ttl: 30m}") + kModel);
  EXPECT_FALSE(off.ui.enabled);
  EXPECT_EQ(off.ui.session_ttl, Millis(1'800'000));
}

TEST(ParseConfigTest, RedisAbsentMeansSingleNode) {
  const Config c = ParseConfig(R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_TRUE(c.redis.url.empty());
  const Config defaults_port = ParseConfig(R"(
redis: {url: 'redis://cache.internal'}
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)");
  EXPECT_EQ(defaults_port.redis.host, "cache.internal");
  EXPECT_EQ(defaults_port.redis.port, 6379);
  EXPECT_EQ(defaults_port.redis.db, 0);
}

}  // namespace
}  // namespace turnpike::config
