#include "doors/search/qdrant/legs.h"

#include "common/json_escape.h"
#include "doors/search/es_error.h"
#include "doors/search/qdrant/filter.h"
#include "doors/search/qdrant/json_write.h"
#include "doors/search/qdrant/layout.h"

namespace turnpike::search::qdrant {

std::string CollectionPath(Scope scope, std::string_view rest) {
  std::string path = "/collections/" + CollectionName(scope.tenant, scope.index);
  path.append(rest);
  return path;
}

Error NotFound(Scope scope) {
  return EsError(kIndexNotFound, "no such index [" + std::string(scope.index) + "]",
                 ErrorCode::kNotFound);
}

Error OnIndex(Scope scope, const Error& error) {
  return error.code == ErrorCode::kNotFound ? NotFound(scope) : error;
}

Error TooManyCandidates(int64_t bound) {
  return Unsupported("a search whose sort, paging or aggregation needs more than " +
                     std::to_string(bound) + " matching documents in the gateway");
}

Error NoPoints() {
  return Error{ErrorCode::kUpstreamBadResponse, "qdrant: an answer without points", ""};
}

std::string RangeOn(std::string_view key, const Value& gte, const Value& lte, const Value& lt) {
  std::string out = R"({"key":)";
  AppendJsonQuoted(out, key);
  out += R"(,"range":{)";
  bool first = true;
  for (auto [name, v] :
       {std::pair<std::string_view, const Value*>{"gte", &gte}, {"lte", &lte}, {"lt", &lt}}) {
    if (std::holds_alternative<std::monostate>(*v)) continue;
    if (!first) out.push_back(',');
    first = false;
    AppendKey(out, name);
    AppendValue(out, *v);
  }
  out += "}}";
  return out;
}

std::string IsEmpty(std::string_view key) {
  std::string out = R"({"is_empty":{"key":)";
  AppendJsonQuoted(out, key);
  out += "}}";
  return out;
}

const boost::json::array* PointsOf(const boost::json::value& result) {
  if (result.is_array()) return &result.get_array();
  if (!result.is_object()) return nullptr;
  const auto* points = result.get_object().if_contains("points");
  return points != nullptr && points->is_array() ? &points->get_array() : nullptr;
}

const boost::json::object* PayloadOf(const boost::json::value& point) {
  if (!point.is_object()) return nullptr;
  const auto* p = point.get_object().if_contains("payload");
  return p != nullptr && p->is_object() ? &p->get_object() : nullptr;
}

std::optional<int64_t> IntOf(const boost::json::value& v) {
  boost::system::error_code ec;
  const auto n = v.to_number<int64_t>(ec);
  if (ec) return std::nullopt;
  return n;
}

std::optional<int64_t> CountOf(const boost::json::value& result) {
  const auto* count = result.is_object() ? result.get_object().if_contains("count") : nullptr;
  if (count == nullptr) return std::nullopt;
  return IntOf(*count);
}

}  // namespace turnpike::search::qdrant
