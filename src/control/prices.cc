// The price layers: the built-in table, config `prices:`, then the admin's overrides in the
// records, each replacing the one before.
#include <map>
#include <utility>

#include "control/governance_service.h"
#include "governance/default_prices.h"

namespace turnpike::control {

std::string_view PriceSourceName(PriceSource source) {
  switch (source) {
    case PriceSource::kBuiltIn:
      return "built_in";
    case PriceSource::kConfig:
      return "config";
    case PriceSource::kAdmin:
      return "admin";
  }
  return "built_in";
}

std::vector<PriceInfo> GovernanceService::EffectivePrices(
    const std::vector<store::PriceOverride>& overrides) const {
  std::map<std::string, PriceInfo> merged;
  for (const governance::DefaultPrice& p : governance::DefaultPrices()) {
    merged[std::string(p.model)] = {std::string(p.model), p.price, PriceSource::kBuiltIn};
  }
  for (const config::PriceConfig& p : config_.prices) {
    merged[p.model] = {
        p.model,
        {p.input_micros_per_mtok, p.output_micros_per_mtok, p.cached_input_micros_per_mtok,
         p.max_output_tokens, p.cache_write_micros_per_mtok, p.reasoning_micros_per_mtok},
        PriceSource::kConfig};
  }
  for (const store::PriceOverride& p : overrides) {
    merged[p.model] = {p.model, p.price, PriceSource::kAdmin};
  }
  std::vector<PriceInfo> out;
  out.reserve(merged.size());
  for (auto& [model, info] : merged) out.push_back(std::move(info));
  return out;
}

Result<PriceInfo> GovernanceService::PriceOf(const std::string& model) const {
  for (PriceInfo& info : EffectivePrices(rows_.prices)) {
    if (info.model == model) return std::move(info);
  }
  return Error{ErrorCode::kNotFound, "no price for model " + model, "model"};
}

boost::asio::awaitable<Result<std::vector<PriceInfo>>> GovernanceService::Prices() {
  auto job = [this](store::Engine&) -> Result<std::vector<PriceInfo>> {
    return EffectivePrices(rows_.prices);
  };
  Result<std::vector<PriceInfo>> result =
      co_await thread_.Call<std::vector<PriceInfo>>(std::move(job));
  co_return result;
}

}  // namespace turnpike::control
