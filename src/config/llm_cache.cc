// ParseLlmCache: the `llm_cache` section (config.h), read like every other section through a
// strict YamlMap.
#include "config/config.h"
#include "config/yaml_map.h"

namespace turnpike::config {
namespace {

constexpr size_t kMinBytes = size_t{64} << 10;
constexpr int64_t kMaxFollowers = 1'000'000;

void RequireBytes(const YamlMap& map, std::string_view key, size_t value) {
  if (value < kMinBytes) FailAt(map.KeyPath(key), "must be at least 64KiB");
}

}  // namespace

LlmCacheConfig ParseLlmCache(const YamlMap& root) {
  LlmCacheConfig c;
  const YAML::Node node = root.Child("llm_cache");
  if (!node.IsDefined() || node.IsNull()) return c;
  YamlMap m(node, root.KeyPath("llm_cache"),
            {"enabled", "ttl", "max_bytes", "tenant_max_bytes", "max_entry_bytes", "coalesce",
             "max_followers", "key_secret"});
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
  return c;
}

}  // namespace turnpike::config
