#include "doors/search/document.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "doors/search/dsl_internal.h"

namespace turnpike::search {
namespace {

namespace json = boost::json;

constexpr int kMaxSourceDepth = 20;

Error FieldError(const std::string& path, const FieldMapping& f, std::string_view why) {
  return EsError(kMapperParsing, "failed to parse field [" + path + "] of type [" + f.type_name +
                                     "]: " + std::string(why));
}

struct Extractor {
  const Mapping& mapping;
  Document& doc;

  Status Vector(const std::string& path, const FieldMapping& f, int index, const json::value& v) {
    const json::array* a = v.if_array();
    if (a == nullptr) return FieldError(path, f, "a dense_vector must be an array of numbers");
    if (static_cast<int>(a->size()) != f.dims) {
      return FieldError(path, f,
                        "the vector has " + std::to_string(a->size()) +
                            " dimensions, the mapping [" + std::to_string(f.dims) + "]");
    }
    VectorValue out{index, {}};
    out.vector.reserve(a->size());
    for (const json::value& x : *a) {
      if (!x.is_number()) return FieldError(path, f, "a dense_vector must be an array of numbers");
      out.vector.push_back(static_cast<float>(x.to_number<double>()));
    }
    if (std::any_of(doc.vectors.begin(), doc.vectors.end(),
                    [index](const VectorValue& x) { return x.field == index; })) {
      return FieldError(path, f, "a document has one vector per field");
    }
    doc.vectors.push_back(std::move(out));
    return Ok{};
  }

  Status Scalar(const std::string& path, const FieldMapping& f, int index, const json::value& v) {
    if (v.is_null()) return Ok{};  // null = missing, as in ES
    if (v.is_object()) return FieldError(path, f, "an object where a value was expected");
    Result<Value> typed = dsl::TypedValue(v, f);
    if (!typed.ok()) return FieldError(path, f, typed.error().message);
    auto it = std::find_if(doc.fields.begin(), doc.fields.end(),
                           [index](const FieldValues& x) { return x.field == index; });
    if (it == doc.fields.end()) {
      doc.fields.push_back(FieldValues{index, {}});
      it = doc.fields.end() - 1;
    }
    it->values.push_back(std::move(*typed));
    return Ok{};
  }

  Status Walk(const std::string& path, const json::value& v, int depth) {
    if (depth > kMaxSourceDepth) return EsError(kMapperParsing, "document is nested too deeply");
    const int index = mapping.IndexOf(path);
    if (index >= 0) {
      const FieldMapping& f = mapping.fields[static_cast<size_t>(index)];
      if (f.type == FieldType::kDenseVector) return Vector(path, f, index, v);
      if (const json::array* a = v.if_array()) {
        for (const json::value& x : *a) {
          if (x.is_array()) return FieldError(path, f, "nested arrays are not supported");
          Status s = Scalar(path, f, index, x);
          if (!s.ok()) return s;
        }
        return Ok{};
      }
      return Scalar(path, f, index, v);
    }
    if (const json::object* o = v.if_object()) {
      for (const auto& [key, child] : *o) {
        Status s =
            Walk(path.empty() ? std::string(key) : path + "." + std::string(key), child, depth + 1);
        if (!s.ok()) return s;
      }
    } else if (const json::array* a = v.if_array()) {
      for (const json::value& x : *a) {
        Status s = Walk(path, x, depth + 1);
        if (!s.ok()) return s;
      }
    }
    return Ok{};  // unmapped: kept in _source only
  }
};

bool Glob(std::string_view text, std::string_view pattern) {
  size_t t = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// `path` or one of its parents matches a pattern.
bool Covered(std::string_view path, const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    for (size_t end = path.find('.');; end = path.find('.', end + 1)) {
      if (Glob(path.substr(0, end), pattern)) return true;
      if (end == std::string_view::npos) break;
    }
  }
  return false;
}

// An include pattern could match something under `path` (so an object must be descended).
bool MayCoverChild(std::string_view path, const std::vector<std::string>& includes) {
  for (const std::string& pattern : includes) {
    if (pattern.find('*') != std::string::npos) return true;
    if (pattern.size() > path.size() && pattern.compare(0, path.size(), path) == 0 &&
        pattern[path.size()] == '.') {
      return true;
    }
  }
  return false;
}

// Keeps what the filter keeps; false if nothing of `v` is kept.
bool FilterValue(const std::string& path, json::value& v, const SourceFilter& filter, int depth) {
  if (depth > kMaxSourceDepth) return false;
  if (Covered(path, filter.excludes)) return false;
  const bool included = filter.includes.empty() || Covered(path, filter.includes);
  if (json::object* o = v.if_object()) {
    if (!included && !MayCoverChild(path, filter.includes)) return false;
    for (auto it = o->begin(); it != o->end();) {
      const std::string child =
          path.empty() ? std::string(it->key()) : path + "." + std::string(it->key());
      if (FilterValue(child, it->value(), filter, depth + 1)) {
        ++it;
      } else {
        it = o->erase(it);
      }
    }
    return included || !o->empty();
  }
  if (json::array* a = v.if_array()) {
    if (included && filter.excludes.empty()) return true;
    for (auto it = a->begin(); it != a->end();) {
      if (!it->is_object() || FilterValue(path, *it, filter, depth + 1)) {
        ++it;
      } else {
        it = a->erase(it);
      }
    }
    return included || !a->empty();
  }
  return included;
}

void MergeInto(json::object& into, const json::object& from) {
  for (const auto& [key, value] : from) {
    json::value* existing = into.if_contains(key);
    if (existing != nullptr && existing->is_object() && value.is_object()) {
      MergeInto(existing->as_object(), value.as_object());
    } else {
      into[key] = value;
    }
  }
}

}  // namespace

Result<Document> ExtractDocument(const Mapping& mapping, std::string id, std::string source) {
  boost::system::error_code ec;
  json::value root = json::parse(source, ec);
  if (ec || !root.is_object()) {
    return EsError(kMapperParsing, "failed to parse: the document must be a JSON object");
  }
  Document doc;
  doc.id = std::move(id);
  Extractor extractor{mapping, doc};
  Status s = extractor.Walk("", root, 0);
  if (!s.ok()) return s.error();
  std::sort(doc.fields.begin(), doc.fields.end(),
            [](const FieldValues& a, const FieldValues& b) { return a.field < b.field; });
  doc.source = std::move(source);
  return doc;
}

Result<std::string> MergeSource(std::string_view current, std::string_view partial) {
  boost::system::error_code ec;
  json::value base = json::parse(current, ec);
  if (ec || !base.is_object()) return EsError(kMapperParsing, "stored document is not an object");
  json::value patch = json::parse(partial, ec);
  if (ec || !patch.is_object()) return EsError(kParsingException, "[doc] must be a JSON object");
  MergeInto(base.as_object(), patch.as_object());
  return json::serialize(base);
}

std::string FilterSource(std::string_view source, const SourceFilter& filter) {
  if (!filter.enabled) return {};
  if (filter.includes.empty() && filter.excludes.empty()) return std::string(source);
  boost::system::error_code ec;
  json::value root = json::parse(source, ec);
  if (ec || !root.is_object()) return std::string(source);
  for (auto it = root.as_object().begin(); it != root.as_object().end();) {
    if (FilterValue(std::string(it->key()), it->value(), filter, 1)) {
      ++it;
    } else {
      it = root.as_object().erase(it);
    }
  }
  return json::serialize(root);
}

}  // namespace turnpike::search
