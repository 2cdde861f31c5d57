#include "doors/search/dsl.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>

#include "doors/search/dsl_internal.h"

namespace turnpike::search {
namespace {

using namespace dsl;  // NOLINT: this file is the parser's top level

Result<SortKey> SortKeyOf(std::string_view name, const json::value* spec, const Mapping& m) {
  SortKey key;
  if (name == "_score") {
    key.kind = SortKey::Kind::kScore;
    key.descending = true;
  } else if (name == "_doc") {
    key.kind = SortKey::Kind::kDoc;
  } else if (name == "_id") {
    key.kind = SortKey::Kind::kId;
  } else {
    Result<const FieldMapping*> f = RequireField(m, name, "sort");
    if (!f.ok()) return f.error();
    if (!IsDocValue((*f)->type)) {
      return ArgError("cannot sort on field [" + std::string(name) + "] of type [" +
                      (*f)->type_name + "]");
    }
    key.field = std::string(name);
    key.type = (*f)->type;
  }
  if (spec == nullptr) return key;
  const json::value* order = spec;
  const json::object* o = spec->if_object();
  if (o != nullptr) {
    order = o->if_contains("order");
    for (const auto& [k, v] : *o) {
      if (k == "order" || k == "unmapped_type") continue;
      if (k == "missing" && key.kind == SortKey::Kind::kField) {
        if (v == json::value("_first")) {
          key.missing_first = true;
        } else if (v != json::value("_last")) {
          return ParseError("sort [missing] supports only _first and _last");
        }
        continue;
      }
      return ParseError("sort option [" + std::string(k) + "] is not supported");
    }
  }
  if (order != nullptr) {
    if (*order == json::value("asc")) {
      key.descending = false;
    } else if (*order == json::value("desc")) {
      key.descending = true;
    } else {
      return ParseError("sort order must be \"asc\" or \"desc\"");
    }
  }
  return key;
}

Status ParseSort(const json::value& v, const Mapping& m, std::vector<SortKey>& out) {
  auto one = [&](const json::value& item) -> Status {
    if (item.is_string()) {
      Result<SortKey> k = SortKeyOf(item.as_string(), nullptr, m);
      if (!k.ok()) return k.error();
      out.push_back(std::move(*k));
      return Ok{};
    }
    const json::object* o = item.if_object();
    if (o == nullptr || o->size() != 1) {
      return ParseError("a sort key must be a field name or {\"<field>\": <order or options>}");
    }
    Result<SortKey> k = SortKeyOf(o->begin()->key(), &o->begin()->value(), m);
    if (!k.ok()) return k.error();
    out.push_back(std::move(*k));
    return Ok{};
  };
  if (!v.is_array()) return one(v);
  for (const json::value& item : v.as_array()) {
    Status s = one(item);
    if (!s.ok()) return s;
  }
  return Ok{};
}

Status ParseSource(const json::value& v, SourceFilter& out) {
  auto patterns = [](const json::value& p, std::vector<std::string>& into) -> Status {
    if (p.is_string()) {
      into.emplace_back(p.as_string());
      return Ok{};
    }
    if (!p.is_array()) return ParseError("[_source] patterns must be a string or an array");
    for (const json::value& s : p.as_array()) {
      if (!s.is_string()) return ParseError("[_source] patterns must be strings");
      into.emplace_back(s.as_string());
    }
    return Ok{};
  };
  if (v.is_bool()) {
    out.enabled = v.as_bool();
    return Ok{};
  }
  if (!v.is_object()) return patterns(v, out.includes);
  for (const auto& [key, value] : v.as_object()) {
    if (key == "includes" || key == "include") {
      Status s = patterns(value, out.includes);
      if (!s.ok()) return s;
    } else if (key == "excludes" || key == "exclude") {
      Status s = patterns(value, out.excludes);
      if (!s.ok()) return s;
    } else {
      return ParseError("[_source] does not support [" + std::string(key) + "]");
    }
  }
  return Ok{};
}

Result<int64_t> TrackTotal(const json::value& v) {
  if (v.is_bool()) return v.as_bool() ? kExactTotal : 0;
  Result<int64_t> n = NonNegative(v, "track_total_hits");
  if (!n.ok()) return n.error();
  return *n;
}

Status ParseSearchAfter(const json::value& v, SearchRequest& req, const Mapping& m) {
  const json::array* values = v.if_array();
  if (values == nullptr) return ParseError("[search_after] must be an array");
  if (values->size() != req.sort.size()) {
    return ArgError("[search_after] has " + std::to_string(values->size()) +
                    " values but the sort (with its _id tie-breaker) has " +
                    std::to_string(req.sort.size()) + " keys: pass back a hit's [sort]");
  }
  for (size_t i = 0; i < values->size(); ++i) {
    const SortKey& key = req.sort[i];
    const json::value& x = (*values)[i];
    if (key.kind == SortKey::Kind::kField) {
      Result<Value> typed = TypedValue(x, *m.Find(key.field), /*allow_null=*/true);
      if (!typed.ok()) return typed.error();
      req.search_after.push_back(std::move(*typed));
    } else if (key.kind == SortKey::Kind::kId && x.is_string()) {
      req.search_after.emplace_back(std::string(x.as_string()));
    } else if (key.kind == SortKey::Kind::kScore && x.is_number()) {
      req.search_after.emplace_back(x.to_number<double>());
    } else if (key.kind == SortKey::Kind::kDoc && x.is_int64()) {
      req.search_after.emplace_back(x.as_int64());
    } else {
      return ArgError("[search_after] value " + std::to_string(i) + " does not fit its sort key");
    }
  }
  return Ok{};
}

}  // namespace

Result<SearchRequest> ParseSearch(std::string_view body, const Mapping& m, const UrlOptions& url,
                                  int64_t now_ms) {
  SearchRequest req;
  json::value root;
  if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    boost::system::error_code ec;
    root = json::parse(body, ec);
    if (ec) return ParseError("request body is not valid JSON: " + ec.message());
    if (!root.is_object()) return ParseError("request body must be a JSON object");
  } else {
    root = json::object();
  }
  const json::value* sort = nullptr;
  const json::value* search_after = nullptr;
  const json::value* knn = nullptr;
  for (const auto& [key, value] : root.as_object()) {
    Status s = Ok{};
    if (key == "query") {
      Result<Query> q = ParseQuery(value, m, 0, now_ms);
      if (!q.ok()) return q.error();
      req.query = std::move(*q);
    } else if (key == "from" || key == "size") {
      Result<int64_t> n = NonNegative(value, key);
      if (!n.ok()) return n.error();
      (key == "from" ? req.from : req.size) = *n;
    } else if (key == "sort") {
      sort = &value;
    } else if (key == "search_after") {
      search_after = &value;
    } else if (key == "knn") {
      knn = &value;
    } else if (key == "track_total_hits") {
      Result<int64_t> t = TrackTotal(value);
      if (!t.ok()) return t.error();
      req.track_total_up_to = *t;
    } else if (key == "timeout") {
      if (!value.is_string()) {
        return EsError("parse_exception", "[timeout] must be a time value string like \"50ms\"");
      }
      Result<std::optional<std::chrono::nanoseconds>> t = ParseTimeValue(value.as_string(), key);
      if (!t.ok()) return t.error();
      req.timeout = *t;
    } else if (key == "allow_partial_search_results") {
      if (!value.is_bool()) return ParseError("[allow_partial_search_results] must be a boolean");
      req.allow_partial_results = value.as_bool();
    } else if (key == "_source") {
      s = ParseSource(value, req.source);
    } else if (key == "aggs" || key == "aggregations") {
      if (!value.is_object()) return ParseError("[aggs] must be an object");
      for (const auto& [name, spec] : value.as_object()) {
        Result<Aggregation> agg = ParseAgg(name, spec, m);
        if (!agg.ok()) return agg.error();
        req.aggs.push_back(std::move(*agg));
      }
    } else {
      return ParseError("unknown or unsupported key [" + std::string(key) + "] in the search body");
    }
    if (!s.ok()) return s.error();
  }
  if (url.from) req.from = *url.from;
  if (url.size) req.size = *url.size;
  if (url.track_total_hits) {
    const std::string& t = *url.track_total_hits;
    Result<int64_t> tt = TrackTotal(t == "true"    ? json::value(true)
                                    : t == "false" ? json::value(false)
                                                   : json::value(json::string(t)));
    if (!tt.ok()) return tt.error();
    req.track_total_up_to = *tt;
  }
  if (url.rest_total_hits_as_int) req.rest_total_hits_as_int = *url.rest_total_hits_as_int;
  if (url.request_cache) req.request_cache = *url.request_cache;
  if (url.timeout) {
    Result<std::optional<std::chrono::nanoseconds>> t = ParseTimeValue(*url.timeout, "timeout");
    if (!t.ok()) return t.error();
    req.timeout = *t;
  }
  if (url.allow_partial_search_results) {
    req.allow_partial_results = *url.allow_partial_search_results;
  }
  if (req.from < 0 || req.size < 0 || req.from + req.size > kMaxResultWindow) {
    return ArgError("Result window is too large, from + size must be less than or equal to: [" +
                    std::to_string(kMaxResultWindow) + "] but was [" +
                    std::to_string(req.from + req.size) + "]");
  }
  if (knn != nullptr) {
    Status s = ParseKnn(*knn, m, req.size, now_ms, req);
    if (!s.ok()) return s.error();
  }
  if (sort != nullptr) {
    req.sort_requested = true;
    Status s = ParseSort(*sort, m, req.sort);
    if (!s.ok()) return s.error();
  }
  if (req.sort.empty()) {
    SortKey score;
    score.kind = SortKey::Kind::kScore;
    score.descending = true;
    req.sort.push_back(score);
  }
  if (req.sort.back().kind != SortKey::Kind::kId) {
    SortKey id;
    id.kind = SortKey::Kind::kId;
    req.sort.push_back(id);
  }
  if (search_after != nullptr) {
    if (req.from != 0) return ArgError("[from] must be 0 when [search_after] is used");
    req.sort_requested = true;
    Status s = ParseSearchAfter(*search_after, req, m);
    if (!s.ok()) return s.error();
  }
  for (const SortKey& k : req.sort) req.scored |= k.kind == SortKey::Kind::kScore;
  req.scored |= req.knn.has_value();
  return req;
}

Result<Query> ParseCount(std::string_view body, const Mapping& m, int64_t now_ms) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return Query{};
  boost::system::error_code ec;
  json::value root = json::parse(body, ec);
  if (ec) return ParseError("request body is not valid JSON: " + ec.message());
  if (!root.is_object()) return ParseError("request body must be a JSON object");
  Query q;
  for (const auto& [key, value] : root.as_object()) {
    if (key != "query")
      return ParseError("[_count] supports only [query], not [" + std::string(key) + "]");
    Result<Query> parsed = ParseQuery(value, m, 0, now_ms);
    if (!parsed.ok()) return parsed.error();
    q = std::move(*parsed);
  }
  return q;
}

}  // namespace turnpike::search
