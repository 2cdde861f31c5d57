// The search door's JSON answers in Elasticsearch's shapes: search responses (hits, totals,
// _shards, aggregations), counts, write results and bulk items, index descriptions.
// Pure functions; `took_ms` and the like come from the caller.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "doors/search/backend.h"

namespace turnpike::search {

void AppendValue(std::string& out, const Value& value);
// "2024-01-02T03:04:05.678Z" for epoch milliseconds.
std::string IsoMillis(int64_t ms);

struct SearchAnswer {
  const SearchRequest* request = nullptr;
  std::string_view index;
  int64_t took_ms = 0;
  bool timed_out = false;
  Coverage coverage;
  const Page* page = nullptr;    // null: size 0
  const Total* total = nullptr;  // null: track_total_hits false
  const std::vector<AggResult>* aggs = nullptr;
  const Error* shard_failure = nullptr;  // the cover leg's error (search_join.h)
};
std::string RenderSearch(const SearchAnswer& answer);

// `_shards`; with failed shards also ES's `failures` entries: [{"shard":0,"index":...,
// "reason":{"type":...,"reason":...}}], the reason from `failure` when given.
std::string RenderShards(const Coverage& coverage, std::string_view index = {},
                         const Error* failure = nullptr);
// One write's answer (`_doc`, `_create`, `_update`, `_delete`, or a bulk item's body).
std::string RenderWrite(std::string_view index, const WriteResult& result);
// The HTTP status of a write result (201 created, 200, 404 not found, the error's).
int WriteStatus(const WriteResult& result);
std::string_view WriteResultName(const WriteResult& result);

}  // namespace turnpike::search
