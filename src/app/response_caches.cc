#include "app/response_caches.h"

namespace turnpike::app {

ResponseCaches MakeResponseCaches(const config::Config& config, bool search_door,
                                  redis::Client* client, size_t workers,
                                  core::ProbeRegistry& probes) {
  ResponseCaches caches;
  const config::SearchConfig& search = config.search;
  const bool search_cache = search_door && search.cache_enabled && search.cache_ttl.count() > 0;
  const config::LlmCacheConfig& llm = config.llm_cache;
  const bool llm_cache = llm.ttl.count() > 0 && (llm.enabled || config.governance.enabled);
  if (client != nullptr && (search_cache || llm_cache)) {
    caches.l2 = std::make_unique<cache::RedisL2Store>(*client);
  }
  if (search_cache) {
    cache::CacheOptions options;
    options.name = "search";
    options.l1.max_bytes = search.cache_max_bytes;
    options.l1.tenant_max_bytes = search.cache_tenant_max_bytes;
    options.ttl = search.cache_ttl;
    options.workers = workers;
    caches.search = std::make_unique<cache::Cache>(std::move(options), caches.l2.get());
    probes.cache_metrics.push_back(
        [c = caches.search.get()](observability::PrometheusWriter& w) { c->WriteMetrics(w); });
  }
  if (llm_cache) {
    caches.llm = std::make_unique<doors::llm::ResponseCache>(llm, caches.l2.get(), workers);
    probes.cache_metrics.push_back(
        [c = caches.llm.get()](observability::PrometheusWriter& w) { c->WriteMetrics(w); });
  }
  return caches;
}

}  // namespace turnpike::app
