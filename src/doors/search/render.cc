#include "doors/search/render.h"

#include <charconv>
#include <cmath>
#include <ctime>

#include "common/json_escape.h"
#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

void AppendDouble(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  out.append(buf, end);
}

void AppendAggs(std::string& out, const std::vector<AggResult>& aggs) {
  out += R"(,"aggregations":{)";
  for (size_t a = 0; a < aggs.size(); ++a) {
    const AggResult& agg = aggs[a];
    if (a > 0) out += ',';
    AppendJsonQuoted(out, agg.name);
    out += ":{";
    if (agg.kind == Aggregation::Kind::kTerms) {
      out += R"("doc_count_error_upper_bound":0,"sum_other_doc_count":)";
      out += std::to_string(agg.sum_other_doc_count);
      out += ',';
    }
    out += R"("buckets":[)";
    for (size_t i = 0; i < agg.buckets.size(); ++i) {
      const Bucket& b = agg.buckets[i];
      if (i > 0) out += ',';
      out += '{';
      if (agg.kind == Aggregation::Kind::kRange) {
        out += R"("key":)";
        std::string key = b.range_key;
        if (key.empty()) {
          key =
              (b.from ? std::to_string(*b.from) : "*") + "-" + (b.to ? std::to_string(*b.to) : "*");
        }
        AppendJsonQuoted(out, key);
        if (b.from) {
          out += R"(,"from":)";
          AppendDouble(out, *b.from);
        }
        if (b.to) {
          out += R"(,"to":)";
          AppendDouble(out, *b.to);
        }
      } else {
        out += R"("key":)";
        if (agg.type == FieldType::kBoolean && std::holds_alternative<bool>(b.key)) {
          const bool v = std::get<bool>(b.key);
          out += v ? R"(1,"key_as_string":"true")" : R"(0,"key_as_string":"false")";
        } else if (agg.type == FieldType::kDate && agg.kind == Aggregation::Kind::kTerms) {
          AppendValue(out, b.key);
          out += R"(,"key_as_string":)";
          AppendJsonQuoted(out, IsoMillis(std::get<int64_t>(b.key)));
        } else {
          AppendValue(out, b.key);
        }
      }
      out += R"(,"doc_count":)";
      out += std::to_string(b.doc_count);
      out += '}';
    }
    out += "]}";
  }
  out += '}';
}

}  // namespace

void AppendValue(std::string& out, const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) {
    out += "null";
  } else if (const bool* b = std::get_if<bool>(&v)) {
    out += *b ? "true" : "false";
  } else if (const int64_t* i = std::get_if<int64_t>(&v)) {
    out += std::to_string(*i);
  } else if (const double* d = std::get_if<double>(&v)) {
    AppendDouble(out, *d);
  } else {
    AppendJsonQuoted(out, std::get<std::string>(v));
  }
}

std::string IsoMillis(int64_t ms) {
  const int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  const auto frac = static_cast<int>(ms - secs * 1000);
  const std::time_t t = secs;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::string RenderShards(const Coverage& c, std::string_view index, const Error* failure) {
  std::string out = R"({"total":)" + std::to_string(c.shards_total) + R"(,"successful":)" +
                    std::to_string(c.shards_successful) + R"(,"skipped":0,"failed":)" +
                    std::to_string(c.shards_failed);
  if (c.shards_failed > 0) {
    out += R"(,"failures":[)";
    for (int shard = 0; shard < c.shards_failed; ++shard) {
      if (shard > 0) out += ',';
      out += R"({"shard":)" + std::to_string(shard) + R"(,"index":)";
      AppendJsonQuoted(out, index);
      out += R"(,"reason":{"type":)";
      AppendJsonQuoted(out, failure != nullptr ? EsErrorType(*failure) : "exception");
      out += R"(,"reason":)";
      AppendJsonQuoted(out, failure != nullptr ? std::string_view(failure->message)
                                               : "the backend reported the shard as failed");
      out += "}}";
    }
    out += ']';
  }
  out += '}';
  return out;
}

std::string RenderSearch(const SearchAnswer& a) {
  const SearchRequest& r = *a.request;
  std::string out;
  size_t reserve = 256;
  if (a.page != nullptr) {
    for (const Hit& h : a.page->hits) reserve += h.source.size() + h.id.size() + 96;
  }
  out.reserve(reserve);
  out += R"({"took":)";
  out += std::to_string(a.took_ms);
  out += R"(,"timed_out":)";
  out += a.timed_out ? "true" : "false";
  out += R"(,"_shards":)";
  out += RenderShards(a.coverage, a.index, a.shard_failure);
  out += R"(,"hits":{)";
  if (a.total != nullptr) {
    if (r.rest_total_hits_as_int) {
      out += R"("total":)" + std::to_string(a.total->value) + ",";
    } else {
      out += R"("total":{"value":)" + std::to_string(a.total->value) + R"(,"relation":")" +
             (a.total->exact ? "eq" : "gte") + "\"},";
    }
  }
  out += R"("max_score":)";
  const bool any_hits = a.page != nullptr && !a.page->hits.empty();
  if (r.scored && any_hits) {
    AppendDouble(out, a.page->max_score);
  } else {
    out += "null";
  }
  out += R"(,"hits":[)";
  if (a.page != nullptr) {
    for (size_t i = 0; i < a.page->hits.size(); ++i) {
      const Hit& h = a.page->hits[i];
      if (i > 0) out += ',';
      out += R"({"_index":)";
      AppendJsonQuoted(out, a.index);
      out += R"(,"_id":)";
      AppendJsonQuoted(out, h.id);
      out += R"(,"_score":)";
      if (r.scored) {
        AppendDouble(out, h.score);
      } else {
        out += "null";
      }
      if (r.source.enabled) {
        out += R"(,"_source":)";
        out += h.source.empty() ? "{}" : h.source;
      }
      if (r.sort_requested) {
        out += R"(,"sort":[)";
        for (size_t k = 0; k < h.sort.size(); ++k) {
          if (k > 0) out += ',';
          AppendValue(out, h.sort[k]);
        }
        out += ']';
      }
      out += '}';
    }
  }
  out += "]}";
  if (a.aggs != nullptr && !r.aggs.empty()) AppendAggs(out, *a.aggs);
  out += '}';
  return out;
}

std::string_view WriteResultName(const WriteResult& r) {
  switch (r.outcome) {
    case WriteResult::Outcome::kCreated:
      return "created";
    case WriteResult::Outcome::kUpdated:
      return "updated";
    case WriteResult::Outcome::kDeleted:
      return "deleted";
    case WriteResult::Outcome::kNotFound:
      return "not_found";
    case WriteResult::Outcome::kNoop:
      return "noop";
    case WriteResult::Outcome::kFailed:
      return "failed";
  }
  return "failed";
}

int WriteStatus(const WriteResult& r) {
  switch (r.outcome) {
    case WriteResult::Outcome::kCreated:
      return 201;
    case WriteResult::Outcome::kNotFound:
      return 404;
    case WriteResult::Outcome::kFailed:
      return HttpStatus(r.error.code);
    default:
      return 200;
  }
}

std::string RenderWrite(std::string_view index, const WriteResult& r) {
  std::string out = R"({"_index":)";
  AppendJsonQuoted(out, index);
  out += R"(,"_id":)";
  AppendJsonQuoted(out, r.id);
  if (r.outcome == WriteResult::Outcome::kFailed) {
    out += R"(,"status":)" + std::to_string(WriteStatus(r)) + R"(,"error":{"type":)";
    AppendJsonQuoted(out, EsErrorType(r.error));
    out += R"(,"reason":)";
    AppendJsonQuoted(out, r.error.message);
    out += "}}";
    return out;
  }
  out += R"(,"_version":)" + std::to_string(r.version) + R"(,"result":")";
  out += WriteResultName(r);
  out += R"(","_shards":{"total":1,"successful":1,"failed":0},"_seq_no":)" +
         std::to_string(r.seq_no) + R"(,"_primary_term":1})";
  return out;
}

}  // namespace turnpike::search
