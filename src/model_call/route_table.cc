#include "model_call/route_table.h"

#include <algorithm>
#include <charconv>

#include "governance/default_prices.h"

namespace turnpike::model_call {
namespace {

// The configured price's max output, else the built-in table's, else the documented default.
int64_t MaxOutputTokens(const config::Config& config, std::string_view model) {
  for (const config::PriceConfig& price : config.prices) {
    if (price.model == model && price.max_output_tokens > 0) return price.max_output_tokens;
  }
  for (const governance::DefaultPrice& price : governance::DefaultPrices()) {
    if (price.model == model) return price.price.max_output_tokens;
  }
  return kDefaultMaxTokens;
}

}  // namespace

std::shared_ptr<const RouteTable> RouteTable::Build(const config::Config& config,
                                                    const providers::Registry& dialects) {
  auto table = std::make_shared<RouteTable>();
  table->models_.reserve(config.models.size());
  for (size_t m = 0; m < config.models.size(); ++m) {
    const config::ModelRoute& route = config.models[m];
    ModelEntry entry;
    entry.name = route.name;
    entry.index = m;
    for (size_t d = 0; d < route.deployments.size(); ++d) {
      const config::Deployment& dep = route.deployments[d];
      const std::string where =
          "models[" + std::to_string(m) + "].deployments[" + std::to_string(d) + "].";
      Result<upstream::Origin> origin = upstream::ParseOrigin(dep.base_url, dep.tls_verify);
      if (!origin.ok()) throw config::ConfigError(where + "base_url: " + origin.error().message);
      origin->http2 = dep.http2;
      DeploymentTarget target;
      // `provider` (and `api`) name the registry's dialect that calls the deployment.
      target.provider = config::DialectOf(dep);
      target.dialect = dialects.Find(target.provider);
      if (target.dialect == nullptr) {
        throw config::ConfigError(where + "provider: unsupported provider \"" + target.provider +
                                  "\" (supported: " + dialects.Names() + ")");
      }
      if (!target.dialect->serves_upstream()) {
        throw config::ConfigError(where + "provider: \"" + target.provider +
                                  "\" is a client API only, not an upstream provider");
      }
      target.origin = std::move(origin.value());
      target.name = target.origin.key + target.origin.base_path;
      target.id = dep.name;
      target.upstream_model = dep.model.empty() ? route.name : dep.model;
      providers::UpstreamEndpoint endpoint =
          target.dialect->Endpoint({target.origin.base_path, target.upstream_model, dep.api_key});
      target.chat_path = std::move(endpoint.path);
      target.stream_path = std::move(endpoint.stream_path);
      target.embed_path = std::move(endpoint.embed_path);
      target.count_tokens_path = std::move(endpoint.count_tokens_path);
      target.authorization = std::move(endpoint.authorization);
      target.extra_headers = std::move(endpoint.extra_headers);
      target.default_max_tokens = MaxOutputTokens(config, target.upstream_model);
      target.weight = std::max<uint32_t>(1, dep.weight);
      entry.total_weight += target.weight;
      entry.deployments.push_back(std::move(target));
    }
    table->models_.push_back(std::move(entry));
  }
  for (size_t i = 0; i < table->models_.size(); ++i) {
    table->by_name_.emplace(table->models_[i].name, i);
  }
  return table;
}

const ModelEntry* RouteTable::Find(std::string_view model) const {
  auto it = by_name_.find(model);
  return it == by_name_.end() ? nullptr : &models_[it->second];
}

AttemptPlan PlanAttempts(const ModelEntry& model, int max_attempts, std::minstd_rand& rng) {
  AttemptPlan plan;
  const size_t n = std::min<size_t>(model.deployments.size(), kMaxAttempts);
  uint8_t remaining[kMaxAttempts];
  for (size_t i = 0; i < n; ++i) remaining[i] = static_cast<uint8_t>(i);
  uint64_t weight_left = 0;
  for (size_t i = 0; i < n; ++i) weight_left += model.deployments[i].weight;
  size_t left = n;
  uint8_t drawn[kMaxAttempts];
  for (size_t k = 0; k < n; ++k) {
    uint64_t pick = rng() % weight_left;
    size_t j = 0;
    while (pick >= model.deployments[remaining[j]].weight) {
      pick -= model.deployments[remaining[j]].weight;
      ++j;
    }
    drawn[k] = remaining[j];
    weight_left -= model.deployments[remaining[j]].weight;
    remaining[j] = remaining[--left];
  }
  plan.count = std::clamp(max_attempts, 1, kMaxAttempts);
  for (int a = 0; a < plan.count; ++a) plan.order[a] = drawn[static_cast<size_t>(a) % n];
  return plan;
}

std::chrono::milliseconds Backoff(int attempt, std::chrono::milliseconds base,
                                  std::chrono::milliseconds max, std::minstd_rand& rng) {
  int64_t d = base.count();
  for (int i = 1; i < attempt && d < max.count(); ++i) d *= 2;
  d = std::min<int64_t>(d, max.count());
  if (d <= 1) return std::chrono::milliseconds(d);
  const int64_t half = d / 2;
  return std::chrono::milliseconds(
      half + static_cast<int64_t>(rng() % static_cast<uint64_t>(d - half + 1)));
}

int64_t ParseRetryAfterSeconds(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  int64_t seconds = -1;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || seconds < 0) return -1;
  return seconds;
}

}  // namespace turnpike::model_call
