// The query DSL parser: an ES `_search` / `_count` body plus the URL's options, typed against
// the index's mapping, into query.h's SearchRequest. Everything outside the supported subset
// is a 400 naming it, never ignored:
//   malformed JSON, a non-object query        400 parsing_exception
//   an unknown query type / option            400 parsing_exception ("unknown query [fuzzy]")
//   a value of the wrong type for its field   400 parsing_exception / illegal_argument_exception
//   from + size > 10,000                      400 illegal_argument_exception (result window)
//   a query vector of the wrong dimension     400 illegal_argument_exception
//   sort / aggs on text or unmapped fields    400 illegal_argument_exception
//
// Pure functions, no I/O, thread-safe; also the libFuzzer entry point's target
// (fuzz/search_dsl_fuzz.cc).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "doors/search/mapping.h"
#include "doors/search/query.h"

namespace turnpike::search {

// The URL query string's options that shape a search (anything else on the URL is the
// door's to accept or refuse).
struct UrlOptions {
  std::optional<int64_t> from, size;
  std::optional<std::string> track_total_hits;  // "true", "false" or a number
  std::optional<bool> rest_total_hits_as_int;
  std::optional<bool> request_cache;
  std::optional<std::string> timeout;  // ES time units ("50ms"); checked by ParseSearch
  std::optional<bool> allow_partial_search_results;
};

// `body` may be empty (match_all, defaults). URL options override the body's. `now_ms` is the
// request's one instant (epoch ms) for date math (date_math.h): the caller takes it once per
// request; the parser never reads a clock (0, the default, pins `now` to the epoch).
Result<SearchRequest> ParseSearch(std::string_view body, const Mapping& mapping,
                                  const UrlOptions& url = {}, int64_t now_ms = 0);

// A `_count` body: only `query` is allowed.
Result<Query> ParseCount(std::string_view body, const Mapping& mapping, int64_t now_ms = 0);

// An ES time value (`timeout`): an integer and a unit (nanos, micros, ms, s, m, h, d), or "-1"
// (no timeout, nullopt) or "0". Anything else: 400 parse_exception "failed to parse setting
// [<setting>] with value [...] as a time value: ...", as ES answers.
Result<std::optional<std::chrono::nanoseconds>> ParseTimeValue(std::string_view text,
                                                               std::string_view setting);

// Parses a date as ES does for a date field: epoch milliseconds (number or digit string) or
// ISO-8601 (date, date-time with optional fraction and Z / +hh:mm). nullopt: not a date.
std::optional<int64_t> ParseDateMillis(std::string_view text);

}  // namespace turnpike::search
