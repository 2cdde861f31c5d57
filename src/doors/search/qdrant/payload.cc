#include "doors/search/qdrant/payload.h"

#include "doors/search/qdrant/layout.h"

namespace turnpike::search::qdrant {
namespace {

const boost::json::value* Lookup(const boost::json::object& payload, std::string_view path) {
  const auto* node = payload.if_contains(kFieldsKey);
  while (node != nullptr) {
    if (!node->is_object()) return nullptr;
    const size_t dot = path.find('.');
    node = node->as_object().if_contains(path.substr(0, dot));
    if (dot == std::string_view::npos) return node;
    path.remove_prefix(dot + 1);
  }
  return nullptr;
}

Value Typed(const boost::json::value& v, FieldType type) {
  switch (v.kind()) {
    case boost::json::kind::string:
      return std::string(v.get_string());
    case boost::json::kind::bool_:
      return v.get_bool();
    case boost::json::kind::int64:
      if (type == FieldType::kDouble) return static_cast<double>(v.get_int64());
      return v.get_int64();
    case boost::json::kind::uint64:
      if (type == FieldType::kDouble) return static_cast<double>(v.get_uint64());
      return static_cast<int64_t>(v.get_uint64());
    case boost::json::kind::double_: {
      const double d = v.get_double();
      if (type == FieldType::kDouble) return d;
      // An integer field stored as a double (another writer): in range, or not a value.
      constexpr double kLimit = 9.2e18;
      if (!(d > -kLimit && d < kLimit)) return std::monostate{};
      return static_cast<int64_t>(d);
    }
    default:
      return std::monostate{};
  }
}

}  // namespace

std::vector<Value> FieldValuesOf(const boost::json::object& payload, std::string_view path,
                                 FieldType type) {
  std::vector<Value> out;
  const boost::json::value* v = Lookup(payload, path);
  if (v == nullptr) return out;
  if (v->is_array()) {
    for (const auto& item : v->get_array()) {
      Value t = Typed(item, type);
      if (!std::holds_alternative<std::monostate>(t)) out.push_back(std::move(t));
    }
    return out;
  }
  Value t = Typed(*v, type);
  if (!std::holds_alternative<std::monostate>(t)) out.push_back(std::move(t));
  return out;
}

std::string_view PayloadString(const boost::json::object& payload, std::string_view key) {
  const auto* v = payload.if_contains(key);
  if (v == nullptr || !v->is_string()) return {};
  return v->get_string();
}

int CompareValues(const Value& a, const Value& b) {
  auto number = [](const Value& v, double& out) {
    if (const auto* i = std::get_if<int64_t>(&v)) {
      out = static_cast<double>(*i);
      return true;
    }
    if (const auto* d = std::get_if<double>(&v)) {
      out = *d;
      return true;
    }
    return false;
  };
  if (const auto* ia = std::get_if<int64_t>(&a)) {
    if (const auto* ib = std::get_if<int64_t>(&b)) return *ia < *ib ? -1 : *ia > *ib ? 1 : 0;
  }
  double da = 0;
  double db = 0;
  if (number(a, da) && number(b, db)) return da < db ? -1 : da > db ? 1 : 0;
  if (const auto* ba = std::get_if<bool>(&a)) {
    if (const auto* bb = std::get_if<bool>(&b)) return *ba == *bb ? 0 : (*ba ? 1 : -1);
  }
  if (const auto* sa = std::get_if<std::string>(&a)) {
    if (const auto* sb = std::get_if<std::string>(&b)) {
      const int c = sa->compare(*sb);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
  }
  return 0;
}

Value SortValue(const boost::json::object& payload, const SortKey& key) {
  if (key.kind == SortKey::Kind::kId) return std::string(PayloadString(payload, kIdKey));
  std::vector<Value> values = FieldValuesOf(payload, key.field, key.type);
  if (values.empty()) return std::monostate{};
  size_t best = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    const int c = CompareValues(values[i], values[best]);
    if (key.descending ? c > 0 : c < 0) best = i;
  }
  return std::move(values[best]);
}

std::vector<std::string> SortPayloadKeys(const std::vector<SortKey>& sort) {
  std::vector<std::string> keys{std::string(kIdKey)};
  for (const SortKey& k : sort) {
    if (k.kind == SortKey::Kind::kField) keys.push_back(FieldKey(k.field));
  }
  return keys;
}

}  // namespace turnpike::search::qdrant
