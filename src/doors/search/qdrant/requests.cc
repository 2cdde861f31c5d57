#include "doors/search/qdrant/requests.h"

#include <map>
#include <memory>

#include "common/json_escape.h"
#include "doors/search/qdrant/json_write.h"
#include "doors/search/qdrant/layout.h"

namespace turnpike::search::qdrant {
namespace {

void AppendStringArray(std::string& out, const auto& items) {
  out.push_back('[');
  bool first = true;
  for (const auto& s : items) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonQuoted(out, s);
  }
  out.push_back(']');
}

void AppendPointIds(std::string& out, Scope scope, const std::vector<std::string>& ids) {
  std::vector<std::string> points;
  for (const std::string& id : ids) {
    std::string p = PointId(scope.tenant, scope.index, id);
    bool dup = false;
    for (const std::string& seen : points) dup = dup || seen == p;
    if (!dup) points.push_back(std::move(p));
  }
  AppendStringArray(out, points);
}

// The typed fields as nested objects: "a.b" and "a.c" become {"a":{"b":..,"c":..}}.
struct Node {
  std::string leaf;  // rendered JSON when this node is a field
  std::map<std::string, std::unique_ptr<Node>, std::less<>> children;
};

void Render(std::string& out, const Node& node) {
  out.push_back('{');
  bool first = true;
  for (const auto& [name, child] : node.children) {
    if (!first) out.push_back(',');
    first = false;
    AppendKey(out, name);
    if (!child->leaf.empty()) {
      out += child->leaf;
    } else {
      Render(out, *child);
    }
  }
  out.push_back('}');
}

void AppendFields(std::string& out, const Mapping& mapping, const Document& doc) {
  Node root;
  for (const FieldValues& fv : doc.fields) {
    if (fv.field < 0 || static_cast<size_t>(fv.field) >= mapping.fields.size()) continue;
    Node* node = &root;
    std::string_view path = mapping.fields[fv.field].path;
    while (true) {
      const size_t dot = path.find('.');
      std::string_view part = path.substr(0, dot);
      auto it = node->children.find(part);
      if (it == node->children.end()) {
        it = node->children.emplace(std::string(part), std::make_unique<Node>()).first;
      }
      node = it->second.get();
      if (dot == std::string_view::npos) break;
      path.remove_prefix(dot + 1);
    }
    std::string& leaf = node->leaf;
    if (fv.values.size() == 1) {
      AppendValue(leaf, fv.values[0]);
      continue;
    }
    leaf.push_back('[');
    for (size_t i = 0; i < fv.values.size(); ++i) {
      if (i) leaf.push_back(',');
      AppendValue(leaf, fv.values[i]);
    }
    leaf.push_back(']');
  }
  Render(out, root);
}

void AppendMetadata(std::string& out, std::string_view mapping_json, int64_t created_ms) {
  out += R"("metadata":{"es_mapping":)";
  out += mapping_json;
  out += R"(,"created_ms":)";
  AppendInt(out, created_ms);
  out.push_back('}');
}

}  // namespace

std::string CreateCollectionBody(const Mapping& mapping, std::string_view mapping_json,
                                 int64_t created_ms) {
  std::string out = R"({"vectors":{)";
  bool first = true;
  for (const FieldMapping& f : mapping.fields) {
    if (f.type != FieldType::kDenseVector) continue;
    if (!first) out.push_back(',');
    first = false;
    AppendKey(out, f.path);
    out += R"({"size":)";
    AppendInt(out, f.dims);
    out += R"(,"distance":")";
    out += DistanceName(f.similarity);
    out += "\"}";
  }
  out += "},";
  AppendMetadata(out, mapping_json, created_ms);
  out.push_back('}');
  return out;
}

std::string UpdateMetadataBody(std::string_view mapping_json, int64_t created_ms) {
  std::string out = "{";
  AppendMetadata(out, mapping_json, created_ms);
  out.push_back('}');
  return out;
}

std::vector<std::string> IndexBodies(const Mapping& mapping) {
  std::vector<std::string> bodies;
  std::string tenant = R"({"field_name":)";
  AppendJsonQuoted(tenant, kTenantKey);
  tenant += R"(,"field_schema":{"type":"keyword","is_tenant":true}})";
  bodies.push_back(std::move(tenant));
  std::string id = R"({"field_name":)";
  AppendJsonQuoted(id, kIdKey);
  id += R"(,"field_schema":"keyword"})";
  bodies.push_back(std::move(id));
  for (const FieldMapping& f : mapping.fields) {
    const std::string_view type = IndexType(f.type);
    if (type.empty()) continue;
    std::string body = R"({"field_name":)";
    AppendJsonQuoted(body, FieldKey(f.path));
    body += R"(,"field_schema":)";
    if (f.type == FieldType::kText) {
      body += R"({"type":"text","tokenizer":"word","lowercase":true,"phrase_matching":true})";
    } else if (f.type == FieldType::kKeyword) {
      body += R"({"type":"keyword","prefix":true})";
    } else {
      AppendJsonQuoted(body, type);
    }
    body.push_back('}');
    bodies.push_back(std::move(body));
  }
  return bodies;
}

std::string UpsertBody(Scope scope, const Mapping& mapping, const std::vector<PointWrite>& writes) {
  std::string out = R"({"points":[)";
  for (size_t i = 0; i < writes.size(); ++i) {
    const Document& doc = *writes[i].doc;
    if (i) out.push_back(',');
    out += R"({"id":)";
    AppendJsonQuoted(out, PointId(scope.tenant, scope.index, doc.id));
    out += R"(,"vector":{)";
    for (size_t v = 0; v < doc.vectors.size(); ++v) {
      const VectorValue& vec = doc.vectors[v];
      if (v) out.push_back(',');
      AppendKey(out, mapping.fields[vec.field].path);
      out.push_back('[');
      for (size_t k = 0; k < vec.vector.size(); ++k) {
        if (k) out.push_back(',');
        AppendFloat(out, vec.vector[k]);
      }
      out.push_back(']');
    }
    out += R"(},"payload":{)";
    AppendKey(out, kTenantKey);
    AppendJsonQuoted(out, scope.tenant);
    out.push_back(',');
    AppendKey(out, kIdKey);
    AppendJsonQuoted(out, doc.id);
    out.push_back(',');
    AppendKey(out, kSourceKey);
    AppendJsonQuoted(out, doc.source);
    out.push_back(',');
    AppendKey(out, kVersionKey);
    AppendInt(out, writes[i].version);
    out.push_back(',');
    AppendKey(out, kFieldsKey);
    AppendFields(out, mapping, doc);
    out += "}}";
  }
  out += "]}";
  return out;
}

std::string RetrieveBody(Scope scope, const std::vector<std::string>& ids,
                         const std::vector<std::string_view>& payload_keys) {
  std::string out = R"({"ids":)";
  AppendPointIds(out, scope, ids);
  out += R"(,"with_payload":)";
  AppendStringArray(out, payload_keys);
  out += R"(,"with_vector":false})";
  return out;
}

std::string DeleteBody(Scope scope, const std::vector<std::string>& ids) {
  std::string out = R"({"points":)";
  AppendPointIds(out, scope, ids);
  out.push_back('}');
  return out;
}

std::string CountBody(std::string_view filter) {
  std::string out = R"({"filter":)";
  out += filter;
  out += R"(,"exact":true})";
  return out;
}

std::string ScrollBody(std::string_view filter, int64_t limit,
                       const std::vector<std::string>& payload_keys,
                       const std::optional<OrderBy>& order_by, std::string_view offset) {
  std::string out = R"({"filter":)";
  out += filter;
  out += R"(,"limit":)";
  AppendInt(out, limit);
  out += R"(,"with_payload":)";
  AppendStringArray(out, payload_keys);
  out += R"(,"with_vector":false)";
  if (order_by) {
    out += R"(,"order_by":{"key":)";
    AppendJsonQuoted(out, order_by->key);
    out += order_by->descending ? R"(,"direction":"desc"})" : R"(,"direction":"asc"})";
  } else if (!offset.empty()) {
    out += R"(,"offset":)";
    AppendJsonQuoted(out, offset);
  }
  out.push_back('}');
  return out;
}

std::string NearestBody(std::string_view filter, std::string_view using_vector,
                        const std::vector<float>& vector, int64_t limit,
                        const std::vector<std::string>& payload_keys) {
  std::string out = R"({"query":{"nearest":[)";
  for (size_t i = 0; i < vector.size(); ++i) {
    if (i) out.push_back(',');
    AppendFloat(out, vector[i]);
  }
  out += R"(]},"using":)";
  AppendJsonQuoted(out, using_vector);
  out += R"(,"filter":)";
  out += filter;
  out += R"(,"limit":)";
  AppendInt(out, limit);
  out += R"(,"with_payload":)";
  AppendStringArray(out, payload_keys);
  out += R"(,"with_vector":false})";
  return out;
}

std::string FacetBody(std::string_view filter, std::string_view key, int64_t limit) {
  std::string out = R"({"key":)";
  AppendJsonQuoted(out, key);
  out += R"(,"filter":)";
  out += filter;
  out += R"(,"limit":)";
  AppendInt(out, limit);
  out += R"(,"exact":true})";
  return out;
}

}  // namespace turnpike::search::qdrant
