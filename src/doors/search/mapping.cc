#include "doors/search/mapping.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "doors/search/es_error.h"

namespace turnpike::search {
namespace {

namespace json = boost::json;

struct TypeName {
  std::string_view name;
  FieldType type;
};
constexpr TypeName kTypes[] = {
    {"keyword", FieldType::kKeyword},   {"text", FieldType::kText},
    {"long", FieldType::kLong},         {"integer", FieldType::kLong},
    {"short", FieldType::kLong},        {"byte", FieldType::kLong},
    {"double", FieldType::kDouble},     {"float", FieldType::kDouble},
    {"half_float", FieldType::kDouble}, {"date", FieldType::kDate},
    {"boolean", FieldType::kBoolean},   {"dense_vector", FieldType::kDenseVector},
};

Error MapperError(std::string reason) { return EsError(kMapperParsing, std::move(reason)); }

Status ParseVector(const json::object& spec, FieldMapping& field) {
  const json::value* dims = spec.if_contains("dims");
  if (dims == nullptr || !dims->is_int64() || dims->as_int64() < 1 ||
      dims->as_int64() > kMaxVectorDims) {
    return MapperError("[dims] of field [" + field.path + "] must be an integer in [1, " +
                       std::to_string(kMaxVectorDims) + "]");
  }
  field.dims = static_cast<int>(dims->as_int64());
  if (const json::value* sim = spec.if_contains("similarity")) {
    const json::string* s = sim->if_string();
    if (s != nullptr && *s == "cosine") {
      field.similarity = Similarity::kCosine;
    } else if (s != nullptr && *s == "dot_product") {
      field.similarity = Similarity::kDotProduct;
    } else if (s != nullptr && *s == "l2_norm") {
      field.similarity = Similarity::kL2Norm;
    } else {
      return MapperError("unknown [similarity] of field [" + field.path + "]");
    }
  }
  return Ok{};
}

// Adds the fields of one `properties` object under `prefix`.
Status AddProperties(const json::value& properties, const std::string& prefix, int depth,
                     std::vector<FieldMapping>& out) {
  constexpr int kMaxDepth = 20;  // index.mapping.depth.limit
  if (depth > kMaxDepth) return MapperError("mapping depth exceeds " + std::to_string(kMaxDepth));
  const json::object* props = properties.if_object();
  if (props == nullptr) return MapperError("[properties] must be an object");
  for (const auto& [key, spec_value] : *props) {
    std::string path = prefix + std::string(key);
    if (key.empty() || key.find('.') != json::string_view::npos) {
      return MapperError("field name [" + path + "] must be non-empty and without '.'");
    }
    const json::object* spec = spec_value.if_object();
    if (spec == nullptr) return MapperError("mapping of field [" + path + "] must be an object");
    const json::value* type = spec->if_contains("type");
    const json::value* nested = spec->if_contains("properties");
    if (nested != nullptr &&
        (type == nullptr || (type->is_string() && type->as_string() == "object"))) {
      Status s = AddProperties(*nested, path + ".", depth + 1, out);
      if (!s.ok()) return s;
      continue;
    }
    if (type == nullptr || !type->is_string()) {
      return MapperError("no type specified for field [" + path + "]");
    }
    const std::string_view name = type->as_string();
    const auto* known = std::find_if(std::begin(kTypes), std::end(kTypes),
                                     [name](const TypeName& t) { return t.name == name; });
    if (known == std::end(kTypes)) {
      return MapperError("No handler for type [" + std::string(name) + "] declared on field [" +
                         path + "]");
    }
    FieldMapping field;
    field.path = path;
    field.type = known->type;
    field.type_name = std::string(name);
    if (field.type == FieldType::kDenseVector) {
      Status s = ParseVector(*spec, field);
      if (!s.ok()) return s;
    }
    if (field.type == FieldType::kDate) {
      if (const json::value* format = spec->if_contains("format"); format && format->is_string()) {
        field.format = std::string(format->as_string());
      }
    }
    out.push_back(std::move(field));
  }
  return Ok{};
}

void RenderLevel(const std::vector<const FieldMapping*>& fields, size_t prefix_len,
                 std::string& out);

}  // namespace

const FieldMapping* Mapping::Find(std::string_view path) const {
  const int i = IndexOf(path);
  return i < 0 ? nullptr : &fields[static_cast<size_t>(i)];
}

int Mapping::IndexOf(std::string_view path) const {
  auto it = std::lower_bound(fields.begin(), fields.end(), path,
                             [](const FieldMapping& f, std::string_view p) { return f.path < p; });
  if (it == fields.end() || it->path != path) return -1;
  return static_cast<int>(it - fields.begin());
}

bool IsInteger(FieldType type) { return type == FieldType::kLong || type == FieldType::kDate; }
bool IsFloating(FieldType type) { return type == FieldType::kDouble; }
bool IsNumeric(FieldType type) { return type == FieldType::kLong || type == FieldType::kDouble; }
bool IsDocValue(FieldType type) {
  return type != FieldType::kText && type != FieldType::kDenseVector;
}

std::string_view SimilarityName(Similarity similarity) {
  switch (similarity) {
    case Similarity::kCosine:
      return "cosine";
    case Similarity::kDotProduct:
      return "dot_product";
    case Similarity::kL2Norm:
      return "l2_norm";
  }
  return "cosine";
}

Result<Mapping> ParseMapping(std::string_view text) {
  boost::system::error_code ec;
  json::value root = json::parse(text, ec);
  if (ec || !root.is_object()) return MapperError("mappings must be a JSON object");
  Mapping mapping;
  for (const auto& [key, value] : root.as_object()) {
    if (key == "properties") {
      Status s = AddProperties(value, "", 0, mapping.fields);
      if (!s.ok()) return s.error();
    } else if (key != "dynamic" && key != "_source") {
      return MapperError("unsupported mapping parameter [" + std::string(key) + "]");
    }
  }
  std::sort(mapping.fields.begin(), mapping.fields.end(),
            [](const FieldMapping& a, const FieldMapping& b) { return a.path < b.path; });
  for (size_t i = 1; i < mapping.fields.size(); ++i) {
    if (mapping.fields[i].path == mapping.fields[i - 1].path) {
      return MapperError("field [" + mapping.fields[i].path + "] is declared twice");
    }
  }
  return mapping;
}

namespace {

// Renders the fields (sorted by path) that share `prefix_len` characters of prefix, nesting
// objects where paths continue with '.'.
void RenderLevel(const std::vector<const FieldMapping*>& fields, size_t prefix_len,
                 std::string& out) {
  out += R"({"properties":{)";
  for (size_t i = 0; i < fields.size();) {
    const std::string& path = fields[i]->path;
    const size_t dot = path.find('.', prefix_len);
    if (i > 0) out += ',';
    if (dot == std::string::npos) {
      const FieldMapping& f = *fields[i];
      out += json::serialize(json::value(path.substr(prefix_len)));
      out += R"(:{"type":)";
      out += json::serialize(json::value(f.type_name));
      if (f.type == FieldType::kDenseVector) {
        out += R"(,"dims":)" + std::to_string(f.dims) + R"(,"similarity":")";
        out += SimilarityName(f.similarity);
        out += '"';
      }
      if (!f.format.empty()) out += R"(,"format":)" + json::serialize(json::value(f.format));
      out += '}';
      ++i;
      continue;
    }
    const std::string object = path.substr(0, dot + 1);
    std::vector<const FieldMapping*> children;
    while (i < fields.size() && fields[i]->path.compare(0, object.size(), object) == 0) {
      children.push_back(fields[i++]);
    }
    out += json::serialize(json::value(object.substr(prefix_len, object.size() - prefix_len - 1)));
    out += ':';
    RenderLevel(children, object.size(), out);
  }
  out += "}}";
}

}  // namespace

std::string RenderMapping(const Mapping& mapping) {
  std::vector<const FieldMapping*> fields;
  fields.reserve(mapping.fields.size());
  for (const FieldMapping& f : mapping.fields) fields.push_back(&f);
  std::string out;
  RenderLevel(fields, 0, out);
  return out;
}

Result<Mapping> MergeMapping(const Mapping& current, const Mapping& added) {
  Mapping merged = current;
  for (const FieldMapping& f : added.fields) {
    const FieldMapping* existing = current.Find(f.path);
    if (existing == nullptr) {
      merged.fields.push_back(f);
      continue;
    }
    if (existing->type_name != f.type_name || existing->dims != f.dims ||
        existing->similarity != f.similarity) {
      return EsError(kIllegalArgument, "mapper [" + f.path + "] cannot be changed from type [" +
                                           existing->type_name + "] to [" + f.type_name + "]");
    }
  }
  std::sort(merged.fields.begin(), merged.fields.end(),
            [](const FieldMapping& a, const FieldMapping& b) { return a.path < b.path; });
  return merged;
}

}  // namespace turnpike::search
