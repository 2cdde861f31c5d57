// How an Elasticsearch index of a tenant is laid out in Qdrant. Shared by the request builders
// (requests.h, filter.h) and the backend; pure functions, no I/O, safe on any thread.
//
//   ES index `i` of tenant `t`  -> collection CollectionName(t, i) = "t<t>__<i>"
//   document `_id`              -> point id PointId(t, i, _id): a UUID derived from the three
//                                  (Qdrant ids are unsigned integers or UUIDs, ES ids strings)
//   the point's payload         -> {"_t": tenant, "_id": ES id, "_src": the _source text,
//                                   "_v": version, "f": {typed mapped fields, nested by path}}
//   mapped field `a.b`          -> payload key "f.a.b" with a payload index of its type
//                                  (keyword, text, integer for long and date (epoch ms),
//                                  float, bool)
//   dense_vector field `v`      -> the named vector "v"
//   the ES mapping              -> the collection's metadata {"es_mapping": ..., "created_ms"}
//
// The tenant is in the collection name and also asserted as a payload condition on "_t" in
// every read (filter.h), so a wrong collection name can never show another tenant's points.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "doors/search/mapping.h"

namespace turnpike::search::qdrant {

inline constexpr std::string_view kTenantKey = "_t";
inline constexpr std::string_view kIdKey = "_id";
inline constexpr std::string_view kSourceKey = "_src";
inline constexpr std::string_view kVersionKey = "_v";
inline constexpr std::string_view kFieldsKey = "f";

// "t<tenant>__<index>"; bytes outside [A-Za-z0-9.-] in the tenant ('_' included) are written
// as "~XX" (hex), so two (tenant, index) pairs never share a name.
std::string CollectionName(std::string_view tenant, std::string_view index);

// The (tenant, index) whose collection is `name`; nullopt for a name CollectionName never makes
// (another application's collection on the same Qdrant).
std::optional<std::pair<std::string, std::string>> ParseCollectionName(std::string_view name);

// A UUID (RFC 4122 layout, version 5 bits) from SHA-1 over tenant, index and id
// (length-prefixed).
std::string PointId(std::string_view tenant, std::string_view index, std::string_view id);

// The payload key of a mapped field: "f." + path.
std::string FieldKey(std::string_view path);

// The payload index type of a field type ("keyword", "text", "integer", "float", "bool"), or
// "" for dense_vector.
std::string_view IndexType(FieldType type);

// Qdrant's distance for a similarity ("Cosine", "Dot", "Euclid").
std::string_view DistanceName(Similarity similarity);

// The ES score of a Qdrant score: cosine and dot_product (1 + s) / 2, l2_norm 1 / (1 + d^2)
// (Qdrant's Euclid score is the distance d), as Elasticsearch defines kNN scores.
double EsScore(Similarity similarity, double qdrant_score);

}  // namespace turnpike::search::qdrant
