#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cmath>

#include "doors/search/date_math.h"
#include "doors/search/dsl_internal.h"

namespace turnpike::search {

bool Query::Scores() const {
  switch (kind) {
    case QueryKind::kMatch:
    case QueryKind::kMatchPhrase:
    case QueryKind::kMultiMatch:
      return true;
    case QueryKind::kBool:
      return std::any_of(must.begin(), must.end(), [](const Query& q) { return q.Scores(); }) ||
             std::any_of(should.begin(), should.end(), [](const Query& q) { return q.Scores(); });
    default:
      return false;
  }
}

namespace dsl {
namespace {

using Parsed = Result<Query>;

// `{"<field>": <value or {"value"|"query": ..., options}>}`: the single field and its object.
struct FieldClause {
  std::string field;
  const json::value* value = nullptr;     // the scalar (or the object's value/query key)
  const json::object* options = nullptr;  // the object form, if given
};

Result<FieldClause> OneField(const json::value& body, std::string_view type,
                             std::string_view value_key) {
  const json::object* o = body.if_object();
  if (o == nullptr || o->size() != 1) {
    return ParseError("[" + std::string(type) + "] query must name exactly one field");
  }
  FieldClause clause{std::string(o->begin()->key()), &o->begin()->value(), nullptr};
  if (const json::object* inner = clause.value->if_object()) {
    clause.options = inner;
    clause.value = inner->if_contains(value_key);
    if (clause.value == nullptr) {
      return ParseError("[" + std::string(type) + "] query on [" + clause.field + "] needs [" +
                        std::string(value_key) + "]");
    }
  }
  return clause;
}

// Reads `boost` and refuses keys outside `allowed` in an options object.
Status Options(const json::object* options, std::initializer_list<std::string_view> allowed,
               std::string_view type, Query& q) {
  if (options == nullptr) return Ok{};
  for (const auto& [key, value] : *options) {
    if (key == "boost") {
      const std::optional<double> b = NumberOf(value);
      if (!b || *b < 0) return ParseError("[boost] must be a non-negative number");
      q.boost = static_cast<float>(*b);
      continue;
    }
    if (key == "_name") continue;  // a label ES echoes in matched_queries: harmless
    if (std::find(allowed.begin(), allowed.end(), std::string_view(key)) == allowed.end()) {
      return ParseError("[" + std::string(type) + "] query does not support [" + std::string(key) +
                        "]");
    }
  }
  return Ok{};
}

Result<std::string> TextOf(const json::value* v, std::string_view type) {
  if (v == nullptr) return ParseError("[" + std::string(type) + "] needs a query");
  if (v->is_string()) return std::string(v->as_string());
  if (v->is_number() || v->is_bool()) return json::serialize(*v);
  return ParseError("[" + std::string(type) + "] query must be a string, number or boolean");
}

Result<MatchOperator> OperatorOf(const json::object* options) {
  const json::value* op = options ? options->if_contains("operator") : nullptr;
  if (op == nullptr) return MatchOperator::kOr;
  const json::string* s = op->if_string();
  if (s != nullptr && (*s == "and" || *s == "AND")) return MatchOperator::kAnd;
  if (s != nullptr && (*s == "or" || *s == "OR")) return MatchOperator::kOr;
  return ParseError("[operator] must be \"and\" or \"or\"");
}

Result<const FieldMapping*> TextField(const Mapping& m, std::string_view path,
                                      std::string_view type) {
  Result<const FieldMapping*> f = RequireField(m, path, type);
  if (!f.ok()) return f;
  if ((*f)->type == FieldType::kDenseVector) {
    return ArgError("[" + std::string(type) + "] cannot query dense_vector field [" +
                    std::string(path) + "]");
  }
  return f;
}

Parsed ParseTerm(const json::value& body, const Mapping& m) {
  Result<FieldClause> c = OneField(body, "term", "value");
  if (!c.ok()) return c.error();
  Query q = MakeQuery(QueryKind::kTerm, c->field);
  Status s = Options(c->options, {"value", "case_insensitive"}, "term", q);
  if (!s.ok()) return s.error();
  if (c->options && c->options->if_contains("case_insensitive") &&
      c->options->at("case_insensitive") != json::value(false)) {
    return ParseError("[term] case_insensitive is not implemented");
  }
  Result<const FieldMapping*> f = TextField(m, c->field, "term");
  if (!f.ok()) return f.error();
  q.type = (*f)->type;
  Result<Value> v = TypedValue(*c->value, **f);
  if (!v.ok()) return v.error();
  q.values.push_back(std::move(*v));
  return q;
}

Parsed ParseTerms(const json::value& body, const Mapping& m) {
  const json::object* o = body.if_object();
  Query q = MakeQuery(QueryKind::kTerms);
  if (o == nullptr) return ParseError("[terms] query must be an object");
  for (const auto& [key, value] : *o) {
    if (key == "boost" || key == "_name") {
      Status s = Options(o, {}, "terms", q);
      if (!s.ok()) return s.error();
      continue;
    }
    if (!q.field.empty()) return ParseError("[terms] query must name exactly one field");
    q.field = std::string(key);
    const json::array* values = value.if_array();
    if (values == nullptr) return ParseError("[terms] query on [" + q.field + "] needs an array");
    Result<const FieldMapping*> f = TextField(m, q.field, "terms");
    if (!f.ok()) return f.error();
    q.type = (*f)->type;
    constexpr size_t kMaxTerms = 65'536;  // index.max_terms_count
    if (values->size() > kMaxTerms) return ArgError("[terms] has too many values");
    for (const json::value& v : *values) {
      Result<Value> typed = TypedValue(v, **f);
      if (!typed.ok()) return typed.error();
      q.values.push_back(std::move(*typed));
    }
  }
  if (q.field.empty()) return ParseError("[terms] query must name a field");
  return q;
}

// A date bound: epoch ms (a number) exactly; a string as a date or date math (date_math.h),
// rounded per ES's rule for its bound (range query docs, "Date math and rounding": gt and lte
// round up to the unit's last millisecond, gte and lt round down to its first).
Result<Value> DateBound(const json::value& v, const FieldMapping& field, bool round_up,
                        int64_t now_ms, int64_t offset_ms) {
  if (!v.is_string()) return TypedValue(v, field, /*allow_null=*/true);
  Result<int64_t> ms = ResolveDateBound(v.as_string(), now_ms, round_up, offset_ms);
  if (!ms.ok()) return ms.error();
  return Value{*ms};
}

Parsed ParseRange(const json::value& body, const Mapping& m, int64_t now_ms) {
  const json::object* o = body.if_object();
  if (o == nullptr || o->size() != 1 || !o->begin()->value().is_object()) {
    return ParseError("[range] query must name one field with an object of bounds");
  }
  Query q = MakeQuery(QueryKind::kRange, std::string(o->begin()->key()));
  Result<const FieldMapping*> f = RequireField(m, q.field, "range");
  if (!f.ok()) return f.error();
  if (!IsDocValue((*f)->type) || (*f)->type == FieldType::kBoolean) {
    return ArgError("[range] is not supported on field [" + q.field + "] of type [" +
                    (*f)->type_name + "]");
  }
  q.type = (*f)->type;
  const bool date = q.type == FieldType::kDate;
  // Bounds are resolved after the loop: time_zone may come after them.
  struct Bound {
    Value* into;
    const json::value* value;
    bool round_up;
  };
  std::vector<Bound> bounds;
  int64_t offset_ms = 0;
  for (const auto& [key, value] : o->begin()->value().as_object()) {
    Value* bound = key == "gt"    ? &q.gt
                   : key == "gte" ? &q.gte
                   : key == "lt"  ? &q.lt
                   : key == "lte" ? &q.lte
                                  : nullptr;
    if (bound != nullptr) {
      bounds.push_back({bound, &value, key == "gt" || key == "lte"});
    } else if (key == "boost") {
      const std::optional<double> b = NumberOf(value);
      if (!b) return ParseError("[boost] must be a number");
      q.boost = static_cast<float>(*b);
    } else if (key == "format" && date) {
      continue;  // ISO-8601 and epoch_millis are always accepted
    } else if (key == "time_zone" && date) {
      if (!value.is_string()) return ParseError("[range] time_zone must be a string");
      Result<int64_t> offset = ParseTimeZone(value.as_string());
      if (!offset.ok()) return offset.error();
      offset_ms = *offset;
    } else if (key == "time_zone") {
      return ParseError("[range] time_zone can not be applied to non date field [" + q.field + "]");
    } else {
      return ParseError("[range] query does not support [" + std::string(key) + "]");
    }
  }
  for (const Bound& b : bounds) {
    Result<Value> v = date ? DateBound(*b.value, **f, b.round_up, now_ms, offset_ms)
                           : TypedValue(*b.value, **f, /*allow_null=*/true);
    if (!v.ok()) return v.error();
    *b.into = std::move(*v);
  }
  return q;
}

Parsed ParseMatch(const json::value& body, const Mapping& m, QueryKind kind) {
  const std::string_view type = kind == QueryKind::kMatch ? "match" : "match_phrase";
  Result<FieldClause> c = OneField(body, type, "query");
  if (!c.ok()) return c.error();
  Query q = MakeQuery(kind, c->field);
  Status s = kind == QueryKind::kMatch ? Options(c->options, {"query", "operator"}, type, q)
                                       : Options(c->options, {"query"}, type, q);
  if (!s.ok()) return s.error();
  Result<const FieldMapping*> f = TextField(m, c->field, type);
  if (!f.ok()) return f.error();
  q.type = (*f)->type;
  Result<std::string> text = TextOf(c->value, type);
  if (!text.ok()) return text.error();
  q.text = std::move(*text);
  Result<MatchOperator> op = OperatorOf(c->options);
  if (!op.ok()) return op.error();
  q.op = *op;
  if (q.type != FieldType::kText) {
    // On a non-text field ES's match is a term query on the typed value.
    Result<Value> v = TypedValue(json::value(q.text), **f);
    if (!v.ok()) return v.error();
    Query term = MakeQuery(QueryKind::kTerm, q.field);
    term.boost = q.boost;
    term.type = q.type;
    term.values.push_back(std::move(*v));
    return term;
  }
  return q;
}

Parsed ParseMultiMatch(const json::value& body, const Mapping& m) {
  const json::object* o = body.if_object();
  if (o == nullptr) return ParseError("[multi_match] must be an object");
  Query q = MakeQuery(QueryKind::kMultiMatch);
  Status s = Options(o, {"query", "fields", "operator", "type"}, "multi_match", q);
  if (!s.ok()) return s.error();
  if (const json::value* t = o->if_contains("type"); t && *t != json::value("best_fields")) {
    return ParseError("[multi_match] type [" + json::serialize(*t) + "] is not implemented");
  }
  Result<std::string> text = TextOf(o->if_contains("query"), "multi_match");
  if (!text.ok()) return text.error();
  q.text = std::move(*text);
  Result<MatchOperator> op = OperatorOf(o);
  if (!op.ok()) return op.error();
  q.op = *op;
  const json::value* fields = o->if_contains("fields");
  if (fields == nullptr || !fields->is_array() || fields->as_array().empty()) {
    return ParseError("[multi_match] needs a non-empty [fields] array (no default field)");
  }
  for (const json::value& f : fields->as_array()) {
    if (!f.is_string()) return ParseError("[multi_match] fields must be strings");
    std::string name(f.as_string());
    if (const size_t caret = name.find('^'); caret != std::string::npos) name.resize(caret);
    Result<const FieldMapping*> mapped = RequireField(m, name, "multi_match");
    if (!mapped.ok()) return mapped.error();
    if ((*mapped)->type != FieldType::kText && (*mapped)->type != FieldType::kKeyword) {
      return ArgError("[multi_match] field [" + name + "] must be text or keyword");
    }
    q.fields.push_back(std::move(name));
  }
  return q;
}

Parsed ParsePrefix(const json::value& body, const Mapping& m) {
  Result<FieldClause> c = OneField(body, "prefix", "value");
  if (!c.ok()) return c.error();
  Query q = MakeQuery(QueryKind::kPrefix, c->field);
  Status s = Options(c->options, {"value"}, "prefix", q);
  if (!s.ok()) return s.error();
  Result<const FieldMapping*> f = RequireField(m, c->field, "prefix");
  if (!f.ok()) return f.error();
  if ((*f)->type != FieldType::kKeyword && (*f)->type != FieldType::kText) {
    return ArgError("[prefix] needs a keyword or text field, [" + c->field + "] is [" +
                    (*f)->type_name + "]");
  }
  q.type = (*f)->type;
  if (!c->value->is_string()) return ParseError("[prefix] value must be a string");
  q.text = std::string(c->value->as_string());
  return q;
}

}  // namespace

Result<Query> ParseQuery(const json::value& v, const Mapping& m, int depth, int64_t now_ms) {
  if (depth > kMaxQueryDepth) return ParseError("query is nested too deeply");
  const json::object* o = v.if_object();
  if (o == nullptr || o->size() != 1) {
    return ParseError("a query must be an object with exactly one query type");
  }
  const std::string_view type = o->begin()->key();
  const json::value& body = o->begin()->value();
  if (type == "match_all" || type == "match_none") {
    Query q = MakeQuery(type == "match_all" ? QueryKind::kMatchAll : QueryKind::kMatchNone);
    Status s = Options(body.if_object(), {}, type, q);
    if (!s.ok()) return s.error();
    if (!body.is_object()) return ParseError("[" + std::string(type) + "] must be an object");
    return q;
  }
  if (type == "bool") return ParseBool(body, m, depth, now_ms);
  if (type == "term") return ParseTerm(body, m);
  if (type == "terms") return ParseTerms(body, m);
  if (type == "range") return ParseRange(body, m, now_ms);
  if (type == "match") return ParseMatch(body, m, QueryKind::kMatch);
  if (type == "match_phrase") return ParseMatch(body, m, QueryKind::kMatchPhrase);
  if (type == "multi_match") return ParseMultiMatch(body, m);
  if (type == "prefix") return ParsePrefix(body, m);
  if (type == "exists" || type == "ids") {
    const json::object* b = body.if_object();
    const std::string_view key = type == "exists" ? "field" : "values";
    Query q = MakeQuery(type == "exists" ? QueryKind::kExists : QueryKind::kIds);
    Status s = Options(b, {key}, type, q);
    if (!s.ok()) return s.error();
    const json::value* arg = b ? b->if_contains(key) : nullptr;
    if (type == "exists") {
      if (arg == nullptr || !arg->is_string() || arg->as_string().empty()) {
        return ParseError("[exists] needs a [field] string");
      }
      q.field = std::string(arg->as_string());
      return q;
    }
    if (arg == nullptr || !arg->is_array()) return ParseError("[ids] needs a [values] array");
    for (const json::value& id : arg->as_array()) {
      if (!id.is_string()) return ParseError("[ids] values must be strings");
      q.values.emplace_back(std::string(id.as_string()));
    }
    return q;
  }
  return ParseError("unknown query [" + std::string(type) + "]");
}

}  // namespace dsl
}  // namespace turnpike::search
