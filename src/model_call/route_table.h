// The routing table: public model names -> deployments, built once from config.
//
// Immutable after Build(); shared read-only by every worker (a later admin API publishes a new
// table as a new snapshot). Holds everything a request needs pre-computed: parsed origins,
// each deployment's dialect, upstream paths and headers, so the hot path only looks things up.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "providers/registry.h"
#include "upstream/origin.h"

namespace turnpike::model_call {

// max_tokens for a provider that requires it (anthropic) when the client gave none and no
// price entry names the model's max output.
inline constexpr int64_t kDefaultMaxTokens = 4096;

struct DeploymentTarget {
  // The dialect's name: config `provider`, or openai_responses for `api: responses`.
  std::string provider;
  const providers::Provider* dialect = nullptr;  // that dialect, owned by the registry
  std::string name;                              // for logs and metrics: "<origin key><base path>"
  std::string id;              // config `name`: a tenant's own provider key names it (ProviderKey)
  std::string upstream_model;  // the model name sent upstream
  upstream::Origin origin;
  // Request targets and headers, from the dialect's Endpoint (providers/provider.h).
  std::string chat_path;          // a whole answer
  std::string stream_path;        // a streamed answer
  std::string embed_path;         // embeddings; empty when the dialect has none
  std::string count_tokens_path;  // the dialect's token count; empty when it has none
  std::string authorization;      // empty: no Authorization header
  std::string extra_headers;      // "Name: value" lines joined by CRLF (upstream::OutgoingRequest)
  // max_tokens for a translated request that names none: max_output_tokens of the upstream
  // model's price (config `prices`, else the built-in table), else kDefaultMaxTokens.
  int64_t default_max_tokens = kDefaultMaxTokens;
  uint32_t weight = 1;
};

struct ModelEntry {
  std::string name;
  size_t index = 0;  // dense index, for per-model metrics
  std::vector<DeploymentTarget> deployments;
  uint64_t total_weight = 0;
};

class RouteTable {
 public:
  // Throws config::ConfigError on an unparseable base URL or a provider no dialect in
  // `dialects` speaks (start-up only). The registry must outlive the table.
  static std::shared_ptr<const RouteTable> Build(const config::Config& config,
                                                 const providers::Registry& dialects);

  // nullptr when the model is unknown.
  const ModelEntry* Find(std::string_view model) const;
  const std::vector<ModelEntry>& models() const { return models_; }

 private:
  std::vector<ModelEntry> models_;
  std::unordered_map<std::string_view, size_t> by_name_;  // views into models_
};

// Up to kMaxAttempts deployment indexes to try, in order: a weighted random draw without
// replacement, then repeating from the start if attempts outnumber deployments.
constexpr int kMaxAttempts = 10;
struct AttemptPlan {
  uint8_t order[kMaxAttempts];
  int count = 0;
};
AttemptPlan PlanAttempts(const ModelEntry& model, int max_attempts, std::minstd_rand& rng);

// Delay before attempt `attempt` (1-based retries): exponential from `base`, capped at `max`,
// with jitter in [d/2, d].
std::chrono::milliseconds Backoff(int attempt, std::chrono::milliseconds base,
                                  std::chrono::milliseconds max, std::minstd_rand& rng);

// Seconds from a Retry-After header (delta-seconds form only); negative if absent/unparseable.
int64_t ParseRetryAfterSeconds(std::string_view value);

}  // namespace turnpike::model_call
