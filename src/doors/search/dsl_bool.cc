// The DSL parser's bool query: its clauses and minimum_should_match.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "doors/search/dsl_internal.h"

namespace turnpike::search::dsl {
namespace {

using Parsed = Result<Query>;

Status Clauses(const json::value& v, const Mapping& m, int depth, int64_t now_ms,
               std::vector<Query>& out) {
  if (v.is_array()) {
    for (const json::value& item : v.as_array()) {
      Parsed q = ParseQuery(item, m, depth, now_ms);
      if (!q.ok()) return q.error();
      out.push_back(std::move(*q));
    }
    return Ok{};
  }
  Parsed q = ParseQuery(v, m, depth, now_ms);
  if (!q.ok()) return q.error();
  out.push_back(std::move(*q));
  return Ok{};
}

Result<int> MinimumShouldMatch(const json::value& v, int should) {
  int64_t n = 0;
  if (v.is_int64()) {
    n = v.as_int64();
  } else if (v.is_string()) {
    std::string s(v.as_string());
    const bool percent = !s.empty() && s.back() == '%';
    if (percent) s.pop_back();
    char* end = nullptr;
    const long parsed = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size()) {
      return ParseError("[minimum_should_match] must be an integer or a percentage");
    }
    n = percent ? static_cast<int64_t>(std::trunc(should * static_cast<double>(parsed) / 100))
                : parsed;
  } else {
    return ParseError("[minimum_should_match] must be an integer or a percentage");
  }
  if (n < 0) n = std::max<int64_t>(0, should + n);
  return static_cast<int>(std::min<int64_t>(n, should + 1));
}

}  // namespace

Result<Query> ParseBool(const json::value& body, const Mapping& m, int depth, int64_t now_ms) {
  const json::object* o = body.if_object();
  if (o == nullptr) return ParseError("[bool] query must be an object");
  Query q = MakeQuery(QueryKind::kBool);
  const json::value* msm = nullptr;
  for (const auto& [key, value] : *o) {
    std::vector<Query>* list = key == "must"       ? &q.must
                               : key == "filter"   ? &q.filter
                               : key == "should"   ? &q.should
                               : key == "must_not" ? &q.must_not
                                                   : nullptr;
    if (list != nullptr) {
      Status s = Clauses(value, m, depth + 1, now_ms, *list);
      if (!s.ok()) return s.error();
    } else if (key == "minimum_should_match") {
      msm = &value;
    } else if (key == "boost") {
      const std::optional<double> b = NumberOf(value);
      if (!b) return ParseError("[boost] must be a number");
      q.boost = static_cast<float>(*b);
    } else if (key != "_name") {
      return ParseError("[bool] query does not support [" + std::string(key) + "]");
    }
  }
  const int should = static_cast<int>(q.should.size());
  if (msm != nullptr) {
    Result<int> n = MinimumShouldMatch(*msm, should);
    if (!n.ok()) return n.error();
    q.minimum_should_match = *n;
  } else {
    q.minimum_should_match = (q.must.empty() && q.filter.empty() && should > 0) ? 1 : 0;
  }
  return q;
}

}  // namespace turnpike::search::dsl
