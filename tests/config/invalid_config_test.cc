// Table of invalid configs: each must throw ConfigError whose message contains the exact key
// path and the problem.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace turnpike::config {
namespace {

constexpr const char* kModels = R"(
models:
  - name: m
    deployments: [{provider: openai, base_url: "http://h"}]
)";

struct InvalidCase {
  const char* name;
  std::string yaml;
  const char* expected;  // must appear verbatim in the message
};

std::string WithModels(const char* yaml) { return std::string(yaml) + kModels; }

std::vector<InvalidCase> Cases() {
  return {
      {"UnknownServerKey", WithModels("server: {listn: 1.2.3.4:80}"), "server.listn: unknown key"},
      {"UnknownTopKey", WithModels("sever: {}"), "sever: unknown key"},
      {"UiSessionTooShort", WithModels("ui: {session_ttl: 1s}"),
       "ui.session_ttl: must be at least 1m"},
      {"UiUnknownKey", WithModels("ui: {enable: false}"), "ui.enable: unknown key"},
      {"SemanticUnknownModel", WithModels("llm_cache: {semantic: {model: emb}}"),
       "llm_cache.semantic.model: no model named `emb` in models:"},
      {"SemanticNoEmbeddingsApi",
       "llm_cache: {semantic: {model: c}}\nmodels:\n  - name: c\n    deployments: "
       "[{provider: anthropic, base_url: \"http://h\"}]\n",
       "llm_cache.semantic.model: the model `c` has no deployment whose provider has an "
       "embeddings API"},
      {"SemanticNoModel", WithModels("llm_cache: {semantic: {max_entries: 5}}"),
       "llm_cache.semantic.model"},
      {"SemanticZeroEntries", WithModels("llm_cache: {semantic: {model: m, max_entries: 0}}"),
       "llm_cache.semantic.max_entries"},
      {"UnknownRedisKey", WithModels("redis: {url: 'redis://h:1/0', lease: 1s}"),
       "redis.lease: unknown key"},
      {"RedisBadScheme", WithModels("redis: {url: 'http://h:6379'}"),
       "redis.url: must start with redis://"},
      {"RedisBadPort", WithModels("redis: {url: 'redis://h:99999'}"),
       "redis.url: port must be 1..65535"},
      {"RedisBadDb", WithModels("redis: {url: 'redis://h:6379/x'}"),
       "redis.url: database must be a number 0..15"},
      {"RedisCredentials", WithModels("redis: {url: 'redis://u:p@h:6379'}"),
       "redis.url: credentials in the url are not supported"},
      {"RedisShortTtl", WithModels("redis: {url: 'redis://h', lease_ttl: 100ms}"),
       "redis.lease_ttl: must be at least 1s"},
      {"SearchPrefixWithoutSlash", WithModels("search: {prefix: es}"), "search.prefix: must be"},
      {"SearchUnknownBackend", WithModels("search: {backend: elastic}"),
       "search.backend: must be embedded"},
      {"SearchWithoutGovernance", WithModels("governance: {enabled: false}\nsearch: {}"),
       "search.enabled: the search door needs governance"},
      {"SearchCacheTiny", WithModels("search: {cache: {max_bytes: 1KiB}}"),
       "search.cache.max_bytes: must be at least 64KiB"},
      {"SearchCacheTenantOverTotal",
       WithModels("search: {cache: {max_bytes: 1MiB, tenant_max_bytes: 2MiB}}"),
       "search.cache.tenant_max_bytes: must not exceed"},
      {"SearchCacheUnknownKey", WithModels("search: {cache: {tll: 1s}}"),
       "search.cache.tll: unknown key"},
      {"SearchCacheBadTtl", WithModels("search: {cache: {ttl: soon}}"), "search.cache.ttl"},
      {"SearchUnknownKey", WithModels("search: {pth: x.db}"), "search.pth: unknown key"},
      {"UnknownNestedKey", WithModels("server: {timeouts: {reed_headers: 1s}}"),
       "server.timeouts.reed_headers: unknown key"},
      {"UnknownDeploymentKey",
       "models: [{name: m, deployments: [{provider: openai, base_url: 'http://h', "
       "apikey: x}]}]",
       "models[0].deployments[0].apikey: unknown key"},
      {"DuplicateKey", WithModels("server:\n  workers: 1\n  workers: 2\n"),
       "server.workers: duplicate key"},
      {"PortTooLarge", WithModels("server: {listen: '127.0.0.1:70000'}"),
       "server.listen: port must be 0..65535"},
      {"ListenWithoutPort", WithModels("server: {listen: localhost}"),
       "server.listen: expected host:port"},
      {"WorkersNotInteger", WithModels("server: {workers: many}"),
       "server.workers: expected an integer, got \"many\""},
      {"WorkersNegative", WithModels("server: {workers: -1}"),
       "server.workers: must be between 0 and 1024"},
      {"ServerNotMapping", WithModels("server: [1, 2]"), "server: expected a mapping, got a list"},
      {"ScalarWhereMappingExpected", WithModels("server: {timeouts: 5s}"),
       "server.timeouts: expected a mapping, got a scalar"},
      {"ListWhereScalarExpected", WithModels("server: {listen: [a, b]}"),
       "server.listen: expected a single value, got a list"},
      {"BadBool", WithModels("server: {server_timing: yes}"),
       "server.server_timing: expected true or false"},
      {"BadDuration", WithModels("server: {timeouts: {idle: 30}}"),
       "server.timeouts.idle: invalid duration \"30\""},
      {"ZeroReadTimeout", WithModels("server: {timeouts: {read_headers: 0s}}"),
       "server.timeouts.read_headers: must be greater than 0"},
      {"BadSize", WithModels("server: {max_body_bytes: 4MB}"),
       "server.max_body_bytes: invalid size \"4MB\""},
      {"StreamBufferTooSmall", WithModels("upstream: {stream_buffer_bytes: 512}"),
       "upstream.stream_buffer_bytes: must be at least 1KiB"},
      {"ConnectTimeoutZero", WithModels("upstream: {timeouts: {connect: 0}}"),
       "upstream.timeouts.connect: must be greater than 0"},
      {"PoolIdleNegative", WithModels("upstream: {pool: {max_idle_per_origin: -3}}"),
       "upstream.pool.max_idle_per_origin: must be between 0 and"},
      {"PoolActiveNegative", WithModels("upstream: {pool: {max_active_per_origin: -1}}"),
       "upstream.pool.max_active_per_origin: must be between 0 and"},
      {"HeaderFieldsZero", WithModels("server: {max_header_fields: 0}"),
       "server.max_header_fields: must be between 1 and 10000"},
      {"MaxAttemptsZero", WithModels("routing: {max_attempts: 0}"),
       "routing.max_attempts: must be between 1 and 10"},
      {"MaxAttemptsEleven", WithModels("routing: {max_attempts: 11}"),
       "routing.max_attempts: must be between 1 and 10"},
      {"BackoffMaxBelowBase", WithModels("routing: {backoff_base: 1s, backoff_max: 10ms}"),
       "routing.backoff_max: must be at least routing.backoff_base"},
      {"MissingModels", "server: {workers: 1}", "models: required"},
      {"EmptyModels", "models: []", "models: at least one model is required"},
      {"ModelsNotList", "models: {name: m}", "models: expected a list"},
      {"ModelMissingName", "models: [{deployments: [{provider: openai, base_url: 'http://h'}]}]",
       "models[0].name: required"},
      {"ModelMissingDeployments", "models: [{name: m}]", "models[0].deployments: required"},
      {"ModelEmptyDeployments", "models: [{name: m, deployments: []}]",
       "models[0].deployments: at least one deployment is required"},
      {"DuplicateModelName",
       "models:\n"
       "  - {name: x, deployments: [{provider: openai, base_url: 'http://a'}]}\n"
       "  - {name: x, deployments: [{provider: openai, base_url: 'http://b'}]}\n",
       "models[1].name: duplicate model name \"x\""},
      {"EmptyProvider", "models: [{name: m, deployments: [{provider: '', base_url: 'http://h'}]}]",
       "models[0].deployments[0].provider: must not be empty"},
      {"MissingProvider", "models: [{name: m, deployments: [{base_url: 'http://h'}]}]",
       "models[0].deployments[0].provider: required"},
      {"ApiOnAnotherProvider",
       "models: [{name: m, deployments: [{provider: anthropic, api: responses, base_url: "
       "'http://h'}]}]",
       "models[0].deployments[0].api: only a deployment of provider openai may choose its api"},
      {"UnknownApi",
       "models: [{name: m, deployments: [{provider: openai, api: assistants, base_url: "
       "'http://h'}]}]",
       "models[0].deployments[0].api: must be chat or responses, not \"assistants\""},
      {"MissingBaseUrl", "models: [{name: m, deployments: [{provider: openai}]}]",
       "models[0].deployments[0].base_url: required"},
      {"BadScheme",
       "models:\n"
       "  - name: m\n"
       "    deployments:\n"
       "      - {provider: openai, base_url: 'http://ok'}\n"
       "      - {provider: openai, base_url: 'ftp://h'}\n",
       "models[0].deployments[1].base_url: must start with http:// or https://"},
      {"BaseUrlWithoutHost",
       "models: [{name: m, deployments: [{provider: openai, base_url: 'https:///v1'}]}]",
       "models[0].deployments[0].base_url: missing host"},
      {"WeightZero",
       "models: [{name: m, deployments: [{provider: openai, base_url: 'http://h', weight: 0}]}]",
       "models[0].deployments[0].weight: must be between 1 and"},
      {"TlsVerifyNotBool",
       "models: [{name: m, deployments: [{provider: openai, base_url: 'http://h', "
       "tls_verify: maybe}]}]",
       "models[0].deployments[0].tls_verify: expected true or false"},
      {"Http2NotBool",
       "models: [{name: m, deployments: [{provider: openai, base_url: 'http://h', "
       "http2: maybe}]}]",
       "models[0].deployments[0].http2: expected true or false"},
      {"DeploymentNotMapping", "models: [{name: m, deployments: [openai]}]",
       "models[0].deployments[0]: expected a mapping"},
      {"RootNotMapping", "- a\n- b\n", "(root): expected a mapping, got a list"},
      {"YamlSyntax", "server: {listen: [\n", "(yaml) at line"},
      {"SnapshotTtlOverCap", WithModels("hotpath: {snapshot_ttl: 31s}"),
       "hotpath.snapshot_ttl: must be at most 30s"},
      {"SnapshotTtlNotUnderGovernance", WithModels("governance: {snapshot_ttl: 1s}"),
       "governance.snapshot_ttl: unknown key"},
      {"StoreSynchronous", WithModels("store: {synchronous: sometimes}"),
       "store.synchronous: must be normal or full"},
      {"StoreEmptyPath", WithModels("store: {path: ''}"), "store.path: must not be empty"},
      {"StoreEngine", WithModels("store: {engine: mysql}"),
       "store.engine: must be sqlite or postgres, not \"mysql\""},
      {"StorePostgresWithoutUrl", WithModels("store: {engine: postgres}"),
       "store.url: is required with engine: postgres"},
      {"StorePostgresUrlScheme", WithModels("store: {engine: postgres, url: 'mysql://h/db'}"),
       "store.url: must be a postgresql:// URL"},
      {"StoreUrlWithoutPostgres", WithModels("store: {url: 'postgresql://h/db'}"),
       "store.url: is only for engine: postgres"},
      {"StorePool", WithModels("store: {engine: postgres, url: 'postgresql://h/db', pool: 0}"),
       "store.pool"},
      {"StoreUnknownKey",
       WithModels("store: {engine: postgres, url: 'postgresql://h/db', "
                  "notify: 'postgresql://h/db'}"),
       "store.notify: unknown key"},
      {"CallLogWhenFull", WithModels("call_log: {when_full: block}"),
       "call_log.when_full: must be wait or drop"},
      {"CallLogBool", WithModels("call_log: {log_store: maybe}"),
       "call_log.log_store: expected true or false"},
      {"PriceNegative", WithModels("prices: {m: {input: -1, output: 1, max_output_tokens: 10}}"),
       "prices.m.input: must be between"},
      {"PriceMissingOutput", WithModels("prices: {m: {input: 1, max_output_tokens: 10}}"),
       "prices.m.output: required"},
      {"PriceNegativeReasoning",
       WithModels("prices: {m: {input: 1, output: 1, reasoning: -2, max_output_tokens: 10}}"),
       "prices.m.reasoning: must be between"},
      {"PriceUnknownKey",
       WithModels("prices: {m: {input: 1, output: 1, max_output_tokens: 10, inptu: 2}}"),
       "prices.m.inptu: unknown key"},
      {"PriceNotNumber",
       WithModels("prices: {m: {input: cheap, output: 1, max_output_tokens: 10}}"),
       "prices.m.input: expected a number"},
      {"UnsetEnvInDeployment",
       "models: [{name: m, deployments: [{provider: openai, base_url: "
       "'${TP_SURELY_UNSET_VAR_42}'}]}]",
       "models[0].deployments[0].base_url: environment variable TP_SURELY_UNSET_VAR_42 is not set"},
      {"SearchBackendNamedInError", WithModels("search: {backend: elastic}"),
       "search.backend: must be embedded or qdrant, not \"elastic\""},
      {"SearchQdrantWithoutUrl", WithModels("search: {backend: qdrant}"),
       "search.qdrant.url: must be an http:// or https:// URL when backend is qdrant"},
      {"SearchQdrantUnknownKey",
       WithModels("search: {backend: qdrant, qdrant: {url: 'http://q:6333', apikey: x}}"),
       "search.qdrant.apikey: unknown key"},
      {"SearchQdrantUnsetKey",
       WithModels("search: {backend: qdrant, qdrant: {url: 'http://q:6333', api_key: "
                  "'${TP_SURELY_UNSET_QDRANT_KEY}'}}"),
       "search.qdrant.api_key: environment variable TP_SURELY_UNSET_QDRANT_KEY is not set"},
      {"SearchQdrantMappingTtlTooLong",
       WithModels("search: {backend: qdrant, qdrant: {url: 'http://q:6333', mapping_ttl: 2h}}"),
       "search.qdrant.mapping_ttl: must be at most 1h"},
      {"SearchQdrantMappingTtlNotADuration",
       WithModels("search: {backend: qdrant, qdrant: {url: 'http://q:6333', mapping_ttl: soon}}"),
       "search.qdrant.mapping_ttl:"},
  };
}

class InvalidConfigTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidConfigTest, MessageNamesKeyPathAndProblem) {
  const InvalidCase& c = GetParam();
  try {
    ParseConfig(c.yaml);
    FAIL() << "accepted:\n" << c.yaml;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << c.expected;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, InvalidConfigTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace turnpike::config
