// Turnpike's configuration: a plain immutable value built once from YAML at start-up.
//
// Ownership: a Config is built by LoadConfig() and then shared read-only (const) by every
// worker thread; nothing mutates it after start-up. Thread safety: const access only.
// Errors: LoadConfig/ParseConfig throw ConfigError whose message names the key path
// (e.g. "models[0].deployments[1].base_url: must start with http:// or https://").
// Exceptions are allowed here because a bad config abandons start-up as a whole.
//
// YAML shape (every key optional unless marked; booleans true/false or on/off; durations
// "250ms", "10s", "2m", "1h";
// sizes as integers or "16KiB", "4MiB"; ${VAR} and ${VAR:-default} are substituted from the
// environment in every scalar before parsing; an unset ${VAR} without default is an error):
//
//   server:
//     listen: 127.0.0.1:8080           # host:port; port 0 picks a free port
//     workers: 0                       # 0 = number of cores
//     max_header_bytes: 16KiB          # the request head: start line and fields together
//     max_header_fields: 100           # more fields: 431
//     max_body_bytes: 4MiB
//     timeouts: {read_headers: 10s, read_body: 30s, idle: 60s, drain: 30s}
//     sse_keepalive: 15s               # 0s = off
//     server_timing: false             # Server-Timing response header
//     access_log: "-"                  # "-" = stdout, "" = off, else a file path
//     http2: false                     # HTTP/2 too: by ALPN "h2" over TLS, by prior knowledge
//                                      # (the connection preface) in cleartext; HTTP/1.1 is
//                                      # still served on the same port (http/http2_session.h)
//     http2_max_concurrent_streams: 128  # SETTINGS_MAX_CONCURRENT_STREAMS per connection
//     tls:                             # absent = cleartext HTTP/1.1 (http/tls_context.h)
//       cert_file: /etc/turnpike/cert.pem  # PEM chain, leaf first; with key_file: the default
//       key_file: /etc/turnpike/key.pem    # certificate (served to clients whose SNI matches
//                                      # no certificate, and to clients that send none)
//       certificates:                  # more certificates, chosen by SNI against each one's
//         - {cert_file: a.pem, key_file: a.key}  # DNS names (wildcards too); without the pair
//                                      # above, the first entry is the default
//       min_version: "1.2"             # "1.2" or "1.3"
//       ciphers: ""                    # TLS 1.2 suites (OpenSSL list); "" = ECDHE with AES-GCM
//                                      # or ChaCha20 only; TLS 1.3 suites are OpenSSL's
//       client_ca_file: ""             # client certificates signed by these CAs are verified
//       require_client_cert: false     # true (needs client_ca_file): no valid cert, no handshake
//       handshake_timeout: 10s
//                                      # SIGHUP reloads every file above; open connections keep
//                                      # the certificates they started with
//   upstream:
//     timeouts: {connect: 5s, first_byte: 60s, idle: 60s}
//     pool:                            # per worker and origin
//       max_idle_per_origin: 1024      # hard cap on idle connections; below it the pool keeps
//                                      # as many as were in flight at the recent peak (last ~10 s)
//       idle_ttl: 60s                  # idle longer than this: closed (a reaper checks each
//                                      # second, and also closes the ones the origin closed)
//       max_active_per_origin: 0       # 0 = no cap; else exchanges beyond it wait (at most the
//                                      # connect timeout) for a connection to be released
//     max_response_bytes: 16MiB        # non-stream upstream bodies
//     stream_buffer_bytes: 16KiB       # per-stream read buffer (the backpressure bound)
//     ca_file: ""                      # extra CA bundle for TLS upstreams
//   routing:
//     max_attempts: 3                  # deployments tried per request, 1..10
//     backoff_base: 50ms
//     backoff_max: 2s
//     max_retry_after: 10s             # longer Retry-After: fail over without waiting
//   models:                            # required, at least one
//     - name: gpt-4o-mini              # required, unique: the public model name
//       deployments:                   # required, at least one
//         - provider: openai           # required: openai (OpenAI-compatible servers),
//                                      # anthropic (the Messages API) or cohere (v2 Chat)
//           base_url: http://127.0.0.1:9000/v1   # required. openai: up to /v1 (the gateway
//                                      # adds /chat/completions); anthropic: the origin, e.g.
//                                      # https://api.anthropic.com (the gateway adds
//                                      # /v1/messages); cohere: the origin, e.g.
//                                      # https://api.cohere.com (the gateway adds /v2/chat)
//           api: chat                  # openai only: chat (default, /chat/completions) or
//                                      # responses (the Responses API, <base_url>/responses)
//           api_key: ${OPENAI_API_KEY} # optional; openai: Authorization: Bearer; anthropic:
//                                      # x-api-key (with anthropic-version: 2023-06-01);
//                                      # cohere: Authorization: Bearer
//           model: gpt-4o-mini         # upstream model name; default = public name
//           weight: 1                  # >= 1
//           tls_verify: true
//           http2: false               # HTTP/2 to this deployment: ALPN "h2" over https (HTTP/1.1
//                                      # when the server does not select it), prior knowledge
//                                      # over http; streams share a few connections per worker
//                                      # (upstream/h2_connection.h)
//           name: gpt-4o-mini          # the deployment's id in the admin API (a tenant's own
//                                      # provider key: /admin/v1/tenants/{id}/provider-keys/
//                                      # {name}); unique; default: the model's name, and
//                                      # "<model>.<n>" for its n-th deployment from n = 2
//   governance:
//     enabled: true                    # false: no keys, budgets or limits (an open gateway)
//     reconcile_interval: 1h           # recompute spend from the call log; 0s = off
//   hotpath:
//     snapshot_ttl: 3s                 # how often the store is checked for changes made by
//                                      # another process (tenants/keys/prices re-read in the
//                                      # background, single flight); max 30s; 0s = read-through
//                                      # on every request (debugging: every request waits for
//                                      # one store round trip of 4 statements)
//   store:
//     engine: sqlite                   # sqlite (default) | postgres (a fleet: README "Fleet:
//                                      # PostgreSQL")
//     path: turnpike.db                # the SQLite file (WAL); created with its directory;
//                                      # postgres: <path>.spool keeps the call log while the
//                                      # server is down
//     url: postgresql://turnpike@127.0.0.1:5432/turnpike   # postgres only (required)
//     pool: 4                          # postgres: statement connections per replica (1..64),
//                                      # one store thread each: the call log's, admin writes'
//                                      # and reloads', admin reads'; 1 = all on one, in order;
//                                      # LISTEN's connection is not counted
//     notify_url: postgresql://...     # postgres: a direct connection for LISTEN when url goes
//                                      # through PgBouncer (transaction pooling); also turns
//                                      # pipelining off on url
//     synchronous: normal              # normal | full (fsync every commit)
//     queue_jobs: 1024                 # admin/reload jobs waiting for the store thread
//   call_log:
//     log_store: on                    # off: no call-log rows (spend is still persisted)
//     queue_rows: 65536                # rows waiting for the writer, all workers together
//     batch_rows: 4096                 # rows per transaction at most (group commit)
//     flush_interval: 100ms            # a worker hands its rows over at least this often
//     when_full: wait                  # wait: keep rows in the worker up to max_wait; drop
//     max_wait: 2s
//     retention: 0s                    # call-log rows older than this are deleted by a job on
//                                      # the store thread (e.g. 90d); 0s = kept forever; at
//                                      # least 62d, so reconcile's two months stay whole
//     purge_interval: 1h               # how often the retention job runs
//   fleet:
//     outage_deadline: 2s              # PostgreSQL and Redis: the longest a request, a round
//                                      # trip or a connect waits on either; then held state or
//                                      # 503 + Retry-After (caps redis.command_timeout
//                                      # at half of it)
//   security:
//     data_key_file: ""                # the data keys that seal tenants' provider keys
//                                      # (governance/data_keys.h); unset: env TURNPIKE_DATA_KEY
//   prices:                            # USD per million tokens; override the built-in table
//     gpt-4o-mini: {input: 0.15, output: 0.60, cached_input: 0.075, max_output_tokens: 16384}
//     claude-x: {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75,
//                max_output_tokens: 64000}
//                                      # cached_input, cache_write (prompt-cache reads and
//                                      # writes) default to the input price
//     o3-x: {input: 2, output: 8, reasoning: 12, max_output_tokens: 100000}
//                                      # reasoning: the completion tokens spent thinking
//                                      # (usage reasoning_tokens); default: the output price
//                                      # max_output_tokens is also the max_tokens sent to a
//                                      # provider that requires one (anthropic) when the client
//                                      # gave none; without a price entry, 4096
//
//   agents:                            # agent turns (doors/agents/): on whenever governance is
//     enabled: true                    # false: no /v1/conversations, no "agent:" models
//     cache_ttl: 2s                    # how long an agent's config and a conversation's memory
//                                      # are served from this replica's caches before a read
//                                      # (a write on this replica evicts at once); 0s = read
//                                      # through on every turn
//     max_input_bytes: 1MiB            # a turn's input, a conversation's items in one request
//     retention: 720h                  # stored responses (by creation) and conversations (by
//                                      # last activity) older than this are purged; 0 = kept
//     purge_interval: 60s              # how often the purge looks (doors/agents/retention.h)
//     fleet_owner_ttl: 15s             # fleet mode (redis.url): how long a running turn's lock
//                                      # and owner key in Redis outlive their replica's last
//                                      # renewal (every third of it); at least 300ms
//     fleet_sweep_interval: 10s        # fleet mode: how often one replica looks for turns whose
//                                      # owner is gone (failed after 2 owner TTLs at most plus
//                                      # 2 intervals: docs/adr/0002); at least 100ms
//
//   webhooks:                          # the webhook outbox and budget alerts (doors/webhooks/):
//     enabled: true                    # on whenever governance is; tenants register endpoints
//                                      # under /admin/v1/tenants/{id}/webhooks
//     budget_alerts: [50, 80, 100]     # percents of a plan's monthly budget announced once a
//                                      # month per tenant (budget.threshold_crossed; at 100 and
//                                      # above also budget.exceeded); [] = none; a plan's
//                                      # own budget_alerts (admin API) replace these for it
//     poll_interval: 30s               # the longest an idle delivery loop sleeps: it looks at
//                                      # once when this replica queues or replays a delivery,
//                                      # and when the next pending one falls due; the poll
//                                      # finds another replica's leftovers (a lapsed claim)
//     timeout: 10s                     # one attempt: connect, send, read the status
//     retry_base: 5s                   # the first retry's delay, doubled per attempt, plus up
//     retry_max: 1h                    # to 25% jitter, at most retry_max
//     max_attempts: 12                 # then the delivery is failed (replayable by the API)
//     max_age: 24h                     # or once the event is this old
//     batch: 16                        # deliveries claimed at once (a claim lasts
//                                      # timeout x batch + 30s)
//
//   llm_cache:                         # the LLM response cache (doors/llm/response_cache.h)
//     enabled: false                   # the gateway's default; a plan turns it on or off
//     ttl: 300s                        # an entry's life; 0s = off; x-turnpike-cache-ttl lowers
//                                      # it per request
//     max_bytes: 256MiB                # L1 (in-process) bytes, all tenants
//     tenant_max_bytes: 64MiB          # L1 bytes per tenant
//     max_entry_bytes: 2MiB            # one recorded answer; a longer one is not stored (and
//                                      # followers that reach its cut make their own call)
//     coalesce: true                   # identical requests in flight share one upstream call
//     max_followers: 256               # per call; later requests make their own
//     key_secret: ""                   # seeds the request digest (replicas sharing a Redis L2
//                                      # must agree); set it to make crafted collisions hard
//                                      # The L2 is Redis in fleet mode (governance on and
//                                      # redis.url set); otherwise the cache is in process only
//     semantic:                        # optional: what a plan's semantic mode (cache_semantic,
//                                      # doors/llm/semantic_index.h) embeds with; without it
//                                      # semantic mode is off for every plan
//       model: text-embedding-3-small  # required: a public name in `models:` with a deployment
//                                      # whose dialect has an embeddings API (not anthropic,
//                                      # not api: responses)
//       max_entries: 1000              # vectors per cache namespace (tenant, client dialect,
//                                      # model [, key]); the oldest is evicted. A lookup scans
//                                      # them all on the worker thread: ~0.16 ms at 1000 x 1536
//                                      # dims, ~7 ms at 10000 (that long, the worker serves no
//                                      # other connection: raise it with care)
//
//   telemetry:                         # OpenTelemetry traces (observability/otlp_exporter.h)
//     otlp:
//       endpoint: http://127.0.0.1:4318/v1/traces  # OTLP/HTTP; http:// only; "" or
//                                      # absent = tracing off (no traceparent read or sent)
//       protocol: http/protobuf        # or http/json (OTLP's two HTTP encodings)
//       sampling_ratio: 1.0            # 0..1 of new traces recorded; below 1 a client's
//                                      # traceparent decides (parent-based sampling)
//       headers: {authorization: "Bearer ${OTLP_TOKEN}"}  # sent with every export
//       queue_size: 2048               # finished requests waiting for export; full: dropped
//                                      # and counted (turnpike_otel_spans_dropped_total)
//       batch_size: 512                # requests per export request at most
//       export_interval: 1s            # a partial batch is sent at least this often
//       timeout: 5s                    # one export request (connect, send, answer)
//   ui:                                # the web console at /ui (doors/ui/): on whenever governance
//     enabled: true                    # is on and TURNPIKE_ADMIN_TOKEN is set; false: /ui is 404
//     session_ttl: 12h                 # a console sign-in's life (its signed cookie's expiry)
//
// A client of one API reaches a deployment of the other through translation (providers/):
// OpenAI /v1/chat/completions -> anthropic, Anthropic /v1/messages -> openai.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace turnpike::config {

using Millis = std::chrono::milliseconds;

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TlsCertificateFiles {
  std::string cert_file;
  std::string key_file;
};

// server.tls. The files are only named here; they are read (and checked) when the server
// starts and on every reload (http/tls_context.h).
struct TlsConfig {
  std::vector<TlsCertificateFiles> certificates;  // empty = no TLS; the first is the default
  std::string min_version = "1.2";                // "1.2" | "1.3"
  std::string ciphers;                            // "" = the default policy
  std::string client_ca_file;                     // "" = no client certificates asked for
  bool require_client_cert = false;
  Millis handshake_timeout{10'000};
  bool enabled() const { return !certificates.empty(); }
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  int workers = 0;  // 0 = std::thread::hardware_concurrency()
  size_t max_header_bytes = 16 * 1024;
  size_t max_header_fields = 100;
  size_t max_body_bytes = 4 * 1024 * 1024;
  Millis read_headers_timeout{10'000};
  Millis read_body_timeout{30'000};
  Millis idle_timeout{60'000};
  Millis drain_timeout{30'000};
  Millis sse_keepalive{15'000};  // 0 = off
  bool server_timing = false;
  std::string access_log = "-";  // "-" stdout, "" off, else path
  // After a burst: once the load (exchanges per second, begun or open) has stayed at or under
  // a quarter of the burst's peak this long, the heap's free pages go back to the OS
  // (common/memory_trim.h).
  // 0 = off.
  Millis memory_trim{10'000};
  TlsConfig tls;
  bool http2 = false;
  uint32_t http2_max_concurrent_streams = 128;
};

struct UpstreamConfig {
  Millis connect_timeout{5'000};
  Millis first_byte_timeout{60'000};
  Millis idle_timeout{60'000};  // between chunks of a response; no total deadline
  size_t pool_max_idle_per_origin = 1024;
  Millis pool_idle_ttl{60'000};
  size_t pool_max_active_per_origin = 0;  // 0 = no cap
  size_t max_response_bytes = 16 * 1024 * 1024;
  size_t stream_buffer_bytes = 16 * 1024;
  std::string ca_file;
};

struct RoutingConfig {
  int max_attempts = 3;
  Millis backoff_base{50};
  Millis backoff_max{2'000};
  Millis max_retry_after{10'000};
};

struct Deployment {
  std::string provider = "openai";  // "openai" | "anthropic" | "ollama" | "cohere" | "gemini"
  std::string api = "chat";         // openai only: "chat" | "responses" (see DialectOf)
  std::string base_url;             // scheme://host[:port][/path], no trailing slash after parsing
  std::string api_key;              // already substituted; may be empty
  std::string model;                // upstream model name
  uint32_t weight = 1;
  bool tls_verify = true;
  bool http2 = false;  // HTTP/2 upstream (ALPN h2 over TLS, prior knowledge in cleartext)
  std::string name;    // unique id (admin API: provider keys); default from the model's name
};

struct ModelRoute {
  std::string name;
  std::vector<Deployment> deployments;
};

struct GovernanceConfig {
  bool enabled = true;
  Millis snapshot_ttl{3'000};            // hotpath.snapshot_ttl
  Millis reconcile_interval{3'600'000};  // 0 = off
};

struct StoreConfig {
  enum class Engine { kSqlite, kPostgres };
  Engine engine = Engine::kSqlite;
  std::string path = "turnpike.db";  // sqlite: the file; postgres: path + ".spool", the spool
  std::string url;                   // postgres: postgresql://user@host:port/db
  int pool = 4;                      // postgres: connections per replica
  std::string notify_url;            // postgres: a direct connection for LISTEN
  bool synchronous_full = false;
  size_t queue_jobs = 1024;
};

// `redis:` (fleet mode, README "Fleet: Redis leases"): absent = single node, in-process
// counters. With a url, budgets and RPM/TPM limits are enforced from leases of shared Redis
// state (redis/lease_counters.h).
struct RedisConfig {
  std::string url;  // redis://host:port/db ("" = no Redis)
  std::string host = "127.0.0.1";
  uint16_t port = 6379;
  int db = 0;
  Millis command_timeout{1'000};  // every command, also connect
  Millis lease_ttl{10'000};       // a lease not renewed for this long frees on Redis
  Millis refill_wait{250};        // how long a request may wait for its slice to be refilled
  Millis report_interval{100};    // settled spend is reported to the ledger this often
};

// `fleet:` (PostgreSQL and/or Redis). outage_deadline: the longest a request (and any one
// PostgreSQL round trip or Redis command, connect included) waits on either server; past it the
// request is served from what the replica holds or answered 503 with Retry-After
// (docs/RELIABILITY.md "Store and Redis outages"). Caps redis.command_timeout at half of it and
// redis.refill_wait at all of it; with engine postgres, every round trip and connect and every
// request's wait for a store job.
struct FleetConfig {
  Millis outage_deadline{2'000};
};

struct CallLogConfig {
  bool log_store = true;
  size_t queue_rows = 65'536;
  size_t batch_rows = 4'096;
  Millis flush_interval{100};
  bool drop_when_full = false;  // when_full: drop (else wait)
  Millis max_wait{2'000};
  Millis retention{0};  // 0: rows are kept forever
  Millis purge_interval{3'600'000};
};

struct SecurityConfig {
  std::string data_key_file;  // "" = the environment's TURNPIKE_DATA_KEY, or none
};

// Money in integer micro-USD per million tokens (config says USD per million).
struct PriceConfig {
  std::string model;
  int64_t input_micros_per_mtok = 0;
  int64_t output_micros_per_mtok = 0;
  int64_t cached_input_micros_per_mtok = 0;  // default: the input price
  int64_t max_output_tokens = 0;
  int64_t cache_write_micros_per_mtok = -1;  // prompt-cache writes; -1: the input price
  int64_t reasoning_micros_per_mtok = -1;    // reasoning (thinking) tokens; -1: the output price
};

// search: the Elasticsearch-compatible door (doors/search/). Off unless the section is present
// or `enabled: true`; it needs governance (an index belongs to the key's tenant).
struct SearchConfig {
  bool enabled = false;
  std::string prefix = "/es";               // "/" + segments, no trailing '/'
  std::string backend = "embedded";         // embedded | qdrant
  std::string path = "turnpike-search.db";  // embedded: the SQLite file
  Millis timeout{10'000};                   // each backend leg's deadline
  size_t queue_jobs = 4096;                 // embedded: the engine thread's queue
  // search.qdrant (backend: qdrant): where Qdrant's REST API answers, its key (sent as
  // `api-key`; write it as ${ENV_VAR}), and the bound of what the gateway sorts or
  // aggregates itself (more matching documents: 400 naming the feature).
  std::string qdrant_url;
  std::string qdrant_api_key;
  int64_t qdrant_max_candidates = 10'000;
  // search.qdrant.mapping_ttl: how long a replica answers searches from its cached mapping of
  // an index without reading the collection (the bound on seeing an index re-created with a
  // retyped field on another replica by a _count; searches notice sooner). 0 = no cache.
  Millis qdrant_mapping_ttl{5'000};
  // search.cache: the shared response cache of _search/_count/_msearch answers (cache/cache.h):
  // in-process L1 bounded by bytes (and per tenant), plus the Redis L2 when `redis.url` is set.
  // On with the door (what Elasticsearch's request cache does for clients that never name it);
  // `cache: {enabled: false}` or ttl 0 turns it off.
  bool cache_enabled = true;
  size_t cache_max_bytes = size_t{64} << 20;
  size_t cache_tenant_max_bytes = size_t{16} << 20;  // 0: no per-tenant cap
  Millis cache_ttl{60'000};
};

// llm_cache.semantic: see the YAML shape above. An empty model: semantic mode is off.
struct LlmCacheSemanticConfig {
  std::string model;
  size_t max_entries = 1'000;
};

// llm_cache: see the YAML shape above.
struct LlmCacheConfig {
  bool enabled = false;
  Millis ttl{300'000};
  size_t max_bytes = size_t{256} << 20;
  size_t tenant_max_bytes = size_t{64} << 20;
  size_t max_entry_bytes = size_t{2} << 20;
  bool coalesce = true;
  size_t max_followers = 256;
  std::string key_secret;
  LlmCacheSemanticConfig semantic;
};

// webhooks: see the YAML shape above.
struct WebhooksConfig {
  bool enabled = true;
  std::vector<int> budget_alerts{50, 80, 100};  // percents of a plan's monthly budget, ascending
  Millis poll_interval{30'000};
  Millis timeout{10'000};
  Millis retry_base{5'000};
  Millis retry_max{3'600'000};
  int max_attempts = 12;
  Millis max_age{24LL * 3'600'000};
  int64_t batch = 16;
};

// agents: see the YAML shape above.
struct AgentsConfig {
  bool enabled = true;
  Millis cache_ttl{2'000};
  size_t max_input_bytes = size_t{1} << 20;
  Millis retention{30LL * 24 * 3'600'000};  // 0: kept forever
  Millis purge_interval{60'000};
  Millis fleet_owner_ttl{15'000};
  Millis fleet_sweep_interval{10'000};
};

// telemetry.otlp: see the YAML shape above. An empty endpoint = tracing off.
struct OtlpConfig {
  std::string endpoint;
  std::string protocol = "http/protobuf";  // or "http/json"
  double sampling_ratio = 1.0;
  std::vector<std::pair<std::string, std::string>> headers;  // name, value
  size_t queue_size = 2'048;
  size_t batch_size = 512;
  Millis export_interval{1'000};
  Millis timeout{5'000};
};

struct TelemetryConfig {
  OtlpConfig otlp;
};

// ui: see the YAML shape above.
struct UiConfig {
  bool enabled = true;
  Millis session_ttl{12LL * 3'600'000};
};

struct Config {
  ServerConfig server;
  UpstreamConfig upstream;
  RoutingConfig routing;
  std::vector<ModelRoute> models;
  GovernanceConfig governance;
  StoreConfig store;
  CallLogConfig call_log;
  std::vector<PriceConfig> prices;
  RedisConfig redis;
  FleetConfig fleet;
  SearchConfig search;
  LlmCacheConfig llm_cache;
  AgentsConfig agents;
  WebhooksConfig webhooks;
  TelemetryConfig telemetry;
  UiConfig ui;
  SecurityConfig security;
};

// The dialect (provider registry entry) a deployment is called in: its `provider`, or
// "openai_responses" for `provider: openai` with `api: responses` (the Responses API).
std::string DialectOf(const Deployment& deployment);

// Parses and validates YAML text. Throws ConfigError naming the key and the problem.
Config ParseConfig(const std::string& yaml_text);

// Reads the file and calls ParseConfig. Throws ConfigError (also for an unreadable file).
Config LoadConfig(const std::string& path);

// Parses "250ms", "10s", "2m", "1h", "90d" (and "0"). Throws ConfigError mentioning `key`.
Millis ParseDuration(const std::string& key, const std::string& text);

// Parses "1024", "16KiB", "4MiB", "1GiB". Throws ConfigError mentioning `key`.
size_t ParseSize(const std::string& key, const std::string& text);

// Replaces ${VAR} and ${VAR:-default} from the environment. Throws ConfigError mentioning
// `key` for an unset variable with no default, or an unterminated "${".
std::string SubstituteEnv(const std::string& key, const std::string& text);

}  // namespace turnpike::config
