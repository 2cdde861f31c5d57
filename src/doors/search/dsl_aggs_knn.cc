// The DSL parser's aggregations and top-level knn.
#include <algorithm>
#include <boost/json/serialize.hpp>

#include "doors/search/dsl_internal.h"

namespace turnpike::search::dsl {

Result<Aggregation> ParseAgg(std::string_view name, const json::value& v, const Mapping& m) {
  const json::object* o = v.if_object();
  if (o == nullptr || o->size() != 1) {
    if (o != nullptr && (o->contains("aggs") || o->contains("aggregations"))) {
      return ParseError("sub-aggregations are not implemented (in [" + std::string(name) + "])");
    }
    return ParseError("aggregation [" + std::string(name) + "] must have exactly one type");
  }
  Aggregation agg;
  agg.name = std::string(name);
  const std::string_view type = o->begin()->key();
  const json::object* body = o->begin()->value().if_object();
  if (type == "terms") {
    agg.kind = Aggregation::Kind::kTerms;
  } else if (type == "range") {
    agg.kind = Aggregation::Kind::kRange;
  } else if (type == "histogram") {
    agg.kind = Aggregation::Kind::kHistogram;
    agg.min_doc_count = 0;
  } else {
    return ParseError("unknown aggregation type [" + std::string(type) + "]");
  }
  if (body == nullptr) return ParseError("[" + std::string(type) + "] must be an object");
  for (const auto& [key, value] : *body) {
    if (key == "field") {
      if (!value.is_string()) return ParseError("[field] must be a string");
      agg.field = std::string(value.as_string());
    } else if (key == "size" && agg.kind == Aggregation::Kind::kTerms) {
      Result<int64_t> n = NonNegative(value, "size");
      if (!n.ok()) return n.error();
      agg.size = std::min<int64_t>(*n, kMaxResultWindow);
    } else if (key == "min_doc_count" && agg.kind != Aggregation::Kind::kRange) {
      Result<int64_t> n = NonNegative(value, "min_doc_count");
      if (!n.ok()) return n.error();
      agg.min_doc_count = *n;
    } else if (key == "interval" && agg.kind == Aggregation::Kind::kHistogram) {
      const std::optional<double> d = NumberOf(value);
      if (!d || !(*d > 0)) return ParseError("[interval] must be a positive number");
      agg.interval = *d;
    } else if (key == "ranges" && agg.kind == Aggregation::Kind::kRange) {
      if (!value.is_array()) return ParseError("[ranges] must be an array");
      for (const json::value& r : value.as_array()) {
        const json::object* ro = r.if_object();
        if (ro == nullptr) return ParseError("a range must be an object");
        RangeSpec spec;
        for (const auto& [rk, rv] : *ro) {
          if (rk == "key" && rv.is_string()) {
            spec.key = std::string(rv.as_string());
          } else if ((rk == "from" || rk == "to") && (rv.is_null() || NumberOf(rv))) {
            if (!rv.is_null()) (rk == "from" ? spec.from : spec.to) = *NumberOf(rv);
          } else {
            return ParseError("range option [" + std::string(rk) + "] is invalid");
          }
        }
        agg.ranges.push_back(std::move(spec));
      }
    } else {
      return ParseError("[" + std::string(type) + "] does not support [" + std::string(key) + "]");
    }
  }
  Result<const FieldMapping*> f = RequireField(m, agg.field, type);
  if (!f.ok()) return f.error();
  agg.type = (*f)->type;
  if (!IsDocValue(agg.type)) {
    return ArgError("field [" + agg.field + "] of type [" + (*f)->type_name +
                    "] cannot be aggregated");
  }
  if (agg.kind != Aggregation::Kind::kTerms && !IsNumeric(agg.type) &&
      agg.type != FieldType::kDate) {
    return ArgError("[" + std::string(type) + "] needs a numeric or date field");
  }
  if (agg.kind == Aggregation::Kind::kHistogram && agg.interval == 0) {
    return ParseError("[histogram] needs an [interval]");
  }
  if (agg.kind == Aggregation::Kind::kRange && agg.ranges.empty()) {
    return ParseError("[range] needs [ranges]");
  }
  return agg;
}

Status ParseKnn(const json::value& v, const Mapping& m, int64_t size, int64_t now_ms,
                SearchRequest& out) {
  const json::value* one = &v;
  if (v.is_array()) {
    if (v.as_array().size() != 1) return ParseError("only one [knn] clause is implemented");
    one = &v.as_array()[0];
  }
  const json::object* o = one->if_object();
  if (o == nullptr) return ParseError("[knn] must be an object");
  Knn knn;
  knn.k = -1;
  knn.num_candidates = -1;
  for (const auto& [key, value] : *o) {
    if (key == "field") {
      if (!value.is_string()) return ParseError("[knn] field must be a string");
      knn.field = std::string(value.as_string());
    } else if (key == "query_vector") {
      if (!value.is_array()) return ParseError("[knn] query_vector must be an array of numbers");
      knn.query_vector.reserve(value.as_array().size());
      for (const json::value& x : value.as_array()) {
        if (!x.is_number()) return ParseError("[knn] query_vector must be an array of numbers");
        knn.query_vector.push_back(static_cast<float>(x.to_number<double>()));
      }
    } else if (key == "k" || key == "num_candidates") {
      Result<int64_t> n = NonNegative(value, key);
      if (!n.ok()) return n.error();
      (key == "k" ? knn.k : knn.num_candidates) = *n;
    } else if (key == "filter") {
      // One filter or an array of them (a plain loop: clang 14 cannot capture a structured
      // binding in a lambda).
      std::vector<Query> filters;
      const json::value* one = value.is_array() ? nullptr : &value;
      const size_t count = one != nullptr ? 1 : value.as_array().size();
      for (size_t i = 0; i < count; ++i) {
        Result<Query> q = ParseQuery(one != nullptr ? *one : value.as_array()[i], m, 1, now_ms);
        if (!q.ok()) return q.error();
        filters.push_back(std::move(*q));
      }
      if (filters.size() == 1) {
        knn.filter = std::move(filters[0]);
      } else if (!filters.empty()) {
        Query all = MakeQuery(QueryKind::kBool);
        all.filter = std::move(filters);
        knn.filter = std::move(all);
      }
    } else if (key != "boost") {
      return ParseError("[knn] does not support [" + std::string(key) + "]");
    }
  }
  Result<const FieldMapping*> f = RequireField(m, knn.field, "knn");
  if (!f.ok()) return f.error();
  if ((*f)->type != FieldType::kDenseVector) {
    return ArgError("[knn] field [" + knn.field + "] is not a dense_vector");
  }
  if (static_cast<int>(knn.query_vector.size()) != (*f)->dims) {
    return ArgError("the query vector has a different number of dimensions [" +
                    std::to_string(knn.query_vector.size()) + "] than the document vectors [" +
                    std::to_string((*f)->dims) + "]");
  }
  knn.similarity = (*f)->similarity;
  if (knn.k < 0) knn.k = size;
  if (knn.k < 1) return ArgError("[k] must be greater than 0");
  if (knn.num_candidates < 0) {
    knn.num_candidates =
        std::min<int64_t>(kMaxResultWindow, std::max<int64_t>(knn.k, knn.k * 3 / 2));
  }
  if (knn.num_candidates < knn.k) return ArgError("[num_candidates] cannot be less than [k]");
  if (knn.num_candidates > kMaxResultWindow) {
    return ArgError("[num_candidates] cannot exceed [10000]");
  }
  out.knn = std::move(knn);
  return Ok{};
}

}  // namespace turnpike::search::dsl
