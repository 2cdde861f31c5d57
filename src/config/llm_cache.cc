// ParseLlmCache: the `llm_cache` section (config.h), read like every other section through a
// strict YamlMap; CheckSemanticModel: its embeddings model against `models:`. ParseAgents: the
// `agents` section, the other feature section of the same size; ParseUi: the `ui` section.
#include "config/config.h"
#include "config/yaml_map.h"

namespace turnpike::config {
namespace {

constexpr size_t kMinBytes = size_t{64} << 10;
constexpr int64_t kMaxFollowers = 1'000'000;
constexpr int64_t kMaxSemanticEntries = 1'000'000;

void RequireBytes(const YamlMap& map, std::string_view key, size_t value) {
  if (value < kMinBytes) FailAt(map.KeyPath(key), "must be at least 64KiB");
}

LlmCacheSemanticConfig ParseSemantic(const YamlMap& cache) {
  LlmCacheSemanticConfig s;
  const YAML::Node node = cache.Child("semantic");
  if (!node.IsDefined() || node.IsNull()) return s;
  YamlMap m(node, cache.KeyPath("semantic"), {"model", "max_entries"});
  m.Require("model");
  s.model = m.String("model", s.model);
  if (s.model.empty()) FailAt(m.KeyPath("model"), "must name a model");
  s.max_entries = static_cast<size_t>(
      m.Int("max_entries", static_cast<int64_t>(s.max_entries), 1, kMaxSemanticEntries));
  return s;
}

}  // namespace

void CheckSemanticModel(const Config& config) {
  const std::string& name = config.llm_cache.semantic.model;
  if (name.empty()) return;
  const std::string key = "llm_cache.semantic.model";
  for (const ModelRoute& model : config.models) {
    if (model.name != name) continue;
    for (const Deployment& deployment : model.deployments) {
      const std::string dialect = DialectOf(deployment);
      if (dialect != "anthropic" && dialect != "openai_responses") return;
    }
    FailAt(key, "the model `" + name +
                    "` has no deployment whose provider has an embeddings API (openai, ollama, "
                    "cohere, gemini)");
  }
  FailAt(key, "no model named `" + name + "` in models:");
}

LlmCacheConfig ParseLlmCache(const YamlMap& root) {
  LlmCacheConfig c;
  const YAML::Node node = root.Child("llm_cache");
  if (!node.IsDefined() || node.IsNull()) return c;
  YamlMap m(node, root.KeyPath("llm_cache"),
            {"enabled", "ttl", "max_bytes", "tenant_max_bytes", "max_entry_bytes", "coalesce",
             "max_followers", "key_secret", "semantic"});
  c.enabled = m.Bool("enabled", c.enabled);
  c.ttl = m.Duration("ttl", c.ttl);  // 0 = off
  c.max_bytes = m.Size("max_bytes", c.max_bytes);
  RequireBytes(m, "max_bytes", c.max_bytes);
  c.tenant_max_bytes = m.Size("tenant_max_bytes", c.tenant_max_bytes);
  RequireBytes(m, "tenant_max_bytes", c.tenant_max_bytes);
  if (c.tenant_max_bytes > c.max_bytes) {
    FailAt(m.KeyPath("tenant_max_bytes"), "must not exceed llm_cache.max_bytes");
  }
  c.max_entry_bytes = m.Size("max_entry_bytes", c.max_entry_bytes);
  RequireBytes(m, "max_entry_bytes", c.max_entry_bytes);
  c.coalesce = m.Bool("coalesce", c.coalesce);
  c.max_followers = static_cast<size_t>(
      m.Int("max_followers", static_cast<int64_t>(c.max_followers), 0, kMaxFollowers));
  c.key_secret = m.String("key_secret", c.key_secret);
  c.semantic = ParseSemantic(m);
  return c;
}

// Below these, renewals and sweeps would run every few milliseconds.
constexpr Millis kMinFleetOwnerTtl{300};
constexpr Millis kMinSessionTtl{60'000};
constexpr Millis kMinFleetSweepInterval{100};

AgentsConfig ParseAgents(const YamlMap& root) {
  AgentsConfig c;
  const YAML::Node node = root.Child("agents");
  if (!node.IsDefined() || node.IsNull()) return c;
  YamlMap m(node, root.KeyPath("agents"),
            {"enabled", "cache_ttl", "max_input_bytes", "retention", "purge_interval",
             "fleet_owner_ttl", "fleet_sweep_interval"});
  c.enabled = m.Bool("enabled", c.enabled);
  c.cache_ttl = m.Duration("cache_ttl", c.cache_ttl);
  c.max_input_bytes = m.Size("max_input_bytes", c.max_input_bytes);
  if (c.max_input_bytes < 1024) FailAt(m.KeyPath("max_input_bytes"), "must be at least 1KiB");
  c.retention = m.Duration("retention", c.retention);
  if (c.retention.count() != 0 && c.retention < Millis(1'000)) {
    FailAt(m.KeyPath("retention"), "must be 0 (kept forever) or at least 1s");
  }
  c.purge_interval = m.Duration("purge_interval", c.purge_interval);
  if (c.purge_interval < Millis(10)) FailAt(m.KeyPath("purge_interval"), "must be at least 10ms");
  c.fleet_owner_ttl = m.Duration("fleet_owner_ttl", c.fleet_owner_ttl);
  if (c.fleet_owner_ttl < kMinFleetOwnerTtl) {
    FailAt(m.KeyPath("fleet_owner_ttl"), "must be at least 300ms");
  }
  c.fleet_sweep_interval = m.Duration("fleet_sweep_interval", c.fleet_sweep_interval);
  if (c.fleet_sweep_interval < kMinFleetSweepInterval) {
    FailAt(m.KeyPath("fleet_sweep_interval"), "must be at least 100ms");
  }
  return c;
}

UiConfig ParseUi(const YamlMap& root) {
  UiConfig c;
  const YAML::Node node = root.Child("ui");
  if (!node.IsDefined() || node.IsNull()) return c;
  YamlMap m(node, root.KeyPath("ui"), {"enabled", "session_ttl"});
  c.enabled = m.Bool("enabled", c.enabled);
  c.session_ttl = m.Duration("session_ttl", c.session_ttl);
  if (c.session_ttl < kMinSessionTtl) FailAt(m.KeyPath("session_ttl"), "must be at least 1m");
  return c;
}

}  // namespace turnpike::config
