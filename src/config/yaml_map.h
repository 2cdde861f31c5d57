// Internal to config/: typed, strict reading of one YAML mapping.
//
// A YamlMap wraps one mapping node and the key path that leads to it ("server.timeouts",
// "models[0].deployments[1]"). Construction rejects unknown and duplicate keys, so a typo is
// an error rather than a silently ignored setting. Every scalar read goes through
// SubstituteEnv() first, then is parsed as the requested type.
//
// Absent keys and explicit nulls ("key:" with no value) return the caller's fallback.
// Errors: every method throws ConfigError("<path>: <problem> (line N)").
// Thread safety: none needed; used only while loading config at start-up.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "config/config.h"

namespace turnpike::config {

// Throws ConfigError("<path>: <problem>"), adding " (line N)" when `at` has a position.
[[noreturn]] void FailAt(const std::string& path, std::string_view problem,
                         const YAML::Node& at = YAML::Node());

class YamlMap {
 public:
  // `node` may be undefined or null (read as an empty mapping). `known_keys` lists every key
  // this mapping may contain.
  YamlMap(const YAML::Node& node, std::string path,
          std::initializer_list<std::string_view> known_keys);

  // "path.key", or just "key" at the root.
  std::string KeyPath(std::string_view key) const;

  // The raw child node; undefined when the key is absent.
  YAML::Node Child(std::string_view key) const;

  std::string String(std::string_view key, std::string fallback) const;
  // Accepts integers within [min, max] only.
  int64_t Int(std::string_view key, int64_t fallback, int64_t min, int64_t max) const;
  bool Bool(std::string_view key, bool fallback) const;
  // A decimal number in [min, max] ("0.15", "3", "2.5e-1").
  double Number(std::string_view key, double fallback, double min, double max) const;
  Millis Duration(std::string_view key, Millis fallback) const;
  size_t Size(std::string_view key, size_t fallback) const;

  // Throws unless `key` is present with a non-null value.
  void Require(std::string_view key) const;

 private:
  // Whether the key has a non-null value.
  bool Present(std::string_view key) const;
  // The env-substituted scalar text of a present key.
  std::string Scalar(std::string_view key) const;

  YAML::Node node_;
  std::string path_;
};

// server.tls (tls.cc), from the `server` mapping.
TlsConfig ParseTls(const YamlMap& server);

// The `llm_cache` section (llm_cache.cc), from the top-level mapping.
LlmCacheConfig ParseLlmCache(const YamlMap& root);
AgentsConfig ParseAgents(const YamlMap& root);
WebhooksConfig ParseWebhooks(const YamlMap& root);  // webhooks.cc
// The `telemetry` section (telemetry.cc), from the top-level mapping.
TelemetryConfig ParseTelemetry(const YamlMap& root);
UiConfig ParseUi(const YamlMap& root);
// Throws unless llm_cache.semantic.model (when set) names a model in `models:` with a deployment
// of a dialect that has an embeddings API.
void CheckSemanticModel(const Config& config);

}  // namespace turnpike::config
