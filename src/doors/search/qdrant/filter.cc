#include "doors/search/qdrant/filter.h"

#include "common/json_escape.h"
#include "doors/search/es_error.h"
#include "doors/search/qdrant/json_write.h"
#include "doors/search/qdrant/layout.h"

namespace turnpike::search::qdrant {
namespace {

constexpr std::string_view kMatchNothing = R"({"has_id":[]})";

void OpenField(std::string& out, std::string_view path) {
  out += "{\"key\":";
  AppendJsonQuoted(out, FieldKey(path));
  out.push_back(',');
}

std::string MatchValue(std::string_view path, const Value& value) {
  std::string out;
  OpenField(out, path);
  out += "\"match\":{\"value\":";
  AppendValue(out, value);
  out += "}}";
  return out;
}

std::string RangeCondition(std::string_view path, const Value& gt, const Value& gte,
                           const Value& lt, const Value& lte) {
  std::string out;
  OpenField(out, path);
  out += "\"range\":{";
  bool first = true;
  for (auto [name, bound] : {std::pair<std::string_view, const Value*>{"gt", &gt},
                             {"gte", &gte},
                             {"lt", &lt},
                             {"lte", &lte}}) {
    if (std::holds_alternative<std::monostate>(*bound)) continue;
    if (!first) out.push_back(',');
    first = false;
    AppendKey(out, name);
    AppendValue(out, *bound);
  }
  out += "}}";
  return out;
}

std::string TextMatch(std::string_view path, std::string_view text) {
  std::string out;
  OpenField(out, path);
  out += "\"match\":{\"text\":";
  AppendJsonQuoted(out, text);
  out += "}}";
  return out;
}

// {"<clause>":[a,b,...]} for the non-empty conditions.
std::string Clause(std::string_view clause, const std::vector<std::string>& conditions) {
  std::string out = "{";
  AppendKey(out, clause);
  out.push_back('[');
  for (size_t i = 0; i < conditions.size(); ++i) {
    if (i) out.push_back(',');
    out += conditions[i];
  }
  out += "]}";
  return out;
}

Result<std::string> Term(const Query& q, const Value& value) {
  switch (q.type) {
    case FieldType::kDouble:
      return RangeCondition(q.field, {}, value, {}, value);
    case FieldType::kText:
      if (const auto* s = std::get_if<std::string>(&value)) return TextMatch(q.field, *s);
      return Unsupported("a non-string term on a text field");
    case FieldType::kDenseVector:
      return Unsupported("a term query on a dense_vector field");
    default:
      return MatchValue(q.field, value);
  }
}

Result<std::string> Terms(const Query& q) {
  if (q.values.empty()) return std::string(kMatchNothing);
  const bool any =
      q.type == FieldType::kKeyword || q.type == FieldType::kLong || q.type == FieldType::kDate;
  if (any) {
    std::string out;
    OpenField(out, q.field);
    out += "\"match\":{\"any\":[";
    // AnyVariants items are unique: repeated terms are written once.
    std::vector<const Value*> seen;
    for (const Value& v : q.values) {
      bool dup = false;
      for (const Value* s : seen) dup = dup || *s == v;
      if (dup) continue;
      if (!seen.empty()) out.push_back(',');
      seen.push_back(&v);
      AppendValue(out, v);
    }
    out += "]}}";
    return out;
  }
  std::vector<std::string> each;
  for (const Value& v : q.values) {
    auto c = Term(q, v);
    if (!c.ok()) return c.error();
    each.push_back(std::move(*c));
  }
  return Clause("should", each);
}

Result<std::string> Match(const Query& q, std::string_view field, FieldType type) {
  if (type == FieldType::kKeyword) return MatchValue(field, Value{q.text});
  const std::vector<std::string> words = Words(q.text);
  if (words.empty()) return std::string(kMatchNothing);
  if (q.op == MatchOperator::kAnd) {
    std::string joined;
    for (const std::string& w : words) {
      if (!joined.empty()) joined.push_back(' ');
      joined += w;
    }
    return TextMatch(field, joined);
  }
  std::vector<std::string> each;
  for (const std::string& w : words) each.push_back(TextMatch(field, w));
  return each.size() == 1 ? each[0] : Clause("should", each);
}

Result<std::string> Bool(const Query& q, std::string_view tenant, std::string_view index,
                         const Mapping* mapping) {
  std::vector<std::string> must, must_not, should;
  for (const auto* list : {&q.must, &q.filter}) {
    for (const Query& sub : *list) {
      auto c = ToCondition(sub, tenant, index, mapping);
      if (!c.ok()) return c.error();
      if (!c->empty()) must.push_back(std::move(*c));
    }
  }
  for (const Query& sub : q.must_not) {
    auto c = ToCondition(sub, tenant, index, mapping);
    if (!c.ok()) return c.error();
    // must_not match_all excludes everything.
    must_not.push_back(c->empty() ? R"({"must":[]})" : std::move(*c));
  }
  if (q.minimum_should_match > 0) {
    if (static_cast<size_t>(q.minimum_should_match) > q.should.size()) {
      return std::string(kMatchNothing);
    }
    for (const Query& sub : q.should) {
      auto c = ToCondition(sub, tenant, index, mapping);
      if (!c.ok()) return c.error();
      should.push_back(c->empty() ? R"({"must":[]})" : std::move(*c));
    }
  }
  std::string out = "{";
  auto add = [&out](std::string_view name, const std::vector<std::string>& list) {
    if (list.empty()) return;
    if (out.size() > 1) out.push_back(',');
    AppendKey(out, name);
    out.push_back('[');
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out.push_back(',');
      out += list[i];
    }
    out.push_back(']');
  };
  add("must", must);
  add("must_not", must_not);
  if (q.minimum_should_match == 1) {
    add("should", should);
  } else if (q.minimum_should_match > 1) {
    if (out.size() > 1) out.push_back(',');
    out += "\"min_should\":{\"conditions\":[";
    for (size_t i = 0; i < should.size(); ++i) {
      if (i) out.push_back(',');
      out += should[i];
    }
    out += "],\"min_count\":";
    AppendInt(out, q.minimum_should_match);
    out.push_back('}');
  }
  out.push_back('}');
  if (out == "{}") return std::string();
  return out;
}

}  // namespace

Error Unsupported(std::string_view feature) {
  return EsError(kIllegalArgument,
                 std::string(feature) + " is not supported by the qdrant backend");
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80 || (c >= 'A' && c <= 'Z');
    if (keep) {
      word.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

Result<std::string> ToCondition(const Query& q, std::string_view tenant, std::string_view index,
                                const Mapping* mapping) {
  switch (q.kind) {
    case QueryKind::kMatchAll:
      return std::string();
    case QueryKind::kMatchNone:
      return std::string(kMatchNothing);
    case QueryKind::kBool:
      return Bool(q, tenant, index, mapping);
    case QueryKind::kTerm:
      if (q.values.empty()) return std::string(kMatchNothing);
      return Term(q, q.values[0]);
    case QueryKind::kTerms:
      return Terms(q);
    case QueryKind::kRange:
      if (q.type == FieldType::kKeyword || q.type == FieldType::kText) {
        return Unsupported("a range query on a keyword or text field");
      }
      return RangeCondition(q.field, q.gt, q.gte, q.lt, q.lte);
    case QueryKind::kExists: {
      std::string out = R"({"must_not":[{"is_empty":{"key":)";
      AppendJsonQuoted(out, FieldKey(q.field));
      out += "}}]}";
      return out;
    }
    case QueryKind::kIds: {
      std::string out = R"({"has_id":[)";
      std::vector<std::string> ids;
      for (const Value& v : q.values) {
        const auto* s = std::get_if<std::string>(&v);
        if (s == nullptr) continue;
        std::string id = PointId(tenant, index, *s);
        bool dup = false;
        for (const std::string& seen : ids) dup = dup || seen == id;
        if (!dup) ids.push_back(std::move(id));
      }
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out.push_back(',');
        AppendJsonQuoted(out, ids[i]);
      }
      out += "]}";
      return out;
    }
    case QueryKind::kMatch:
      return Match(q, q.field, q.type);
    case QueryKind::kMultiMatch: {
      if (q.fields.empty()) return std::string(kMatchNothing);
      std::vector<std::string> each;
      for (const std::string& f : q.fields) {
        FieldType type = FieldType::kText;
        if (mapping != nullptr) {
          for (const FieldMapping& m : mapping->fields) {
            if (m.path == f) type = m.type;
          }
        }
        auto c = Match(q, f, type);
        if (!c.ok()) return c.error();
        each.push_back(std::move(*c));
      }
      return each.size() == 1 ? each[0] : Clause("should", each);
    }
    case QueryKind::kMatchPhrase: {
      if (q.type == FieldType::kKeyword) return MatchValue(q.field, Value{q.text});
      // The words in order, adjacent: Qdrant's phrase match over a text index built with
      // phrase_matching (requests.h IndexBodies).
      const std::vector<std::string> words = Words(q.text);
      if (words.empty()) return std::string(kMatchNothing);
      std::string joined;
      for (const std::string& w : words) {
        if (!joined.empty()) joined.push_back(' ');
        joined += w;
      }
      std::string out;
      OpenField(out, q.field);
      out += "\"match\":{\"phrase\":";
      AppendJsonQuoted(out, joined);
      out += "}}";
      return out;
    }
    case QueryKind::kPrefix: {
      if (q.type != FieldType::kKeyword) return Unsupported("prefix on a text field");
      // Byte-wise and case-sensitive, as ES's prefix on a keyword (a keyword index with the
      // prefix option serves it).
      std::string out;
      OpenField(out, q.field);
      out += "\"match\":{\"prefix\":";
      AppendJsonQuoted(out, q.text);
      out += "}}";
      return out;
    }
  }
  return Unsupported("this query");
}

Result<std::string> ScopedFilter(Scope scope, const Query* query,
                                 const std::vector<std::string>& extra, const Mapping* mapping) {
  std::string out = R"({"must":[{"key":")";
  out += kTenantKey;
  out += R"(","match":{"value":)";
  AppendJsonQuoted(out, scope.tenant);
  out += "}}";
  if (query != nullptr) {
    auto c = ToCondition(*query, scope.tenant, scope.index, mapping);
    if (!c.ok()) return c.error();
    if (!c->empty()) {
      out.push_back(',');
      out += *c;
    }
  }
  for (const std::string& e : extra) {
    out.push_back(',');
    out += e;
  }
  out += "]}";
  return out;
}

}  // namespace turnpike::search::qdrant
