// The JSON bodies the Qdrant backend sends (Qdrant REST 1.19), built from the door's typed
// values. Pure functions; the golden tests (tests/doors/search/qdrant/) pin their output and
// the integration tests validate them against Qdrant's OpenAPI document.
//
// Paths (relative to the configured URL): see the backend (qdrant_backend.cc); every body here
// is for one of: PUT /collections/{c}, PUT /collections/{c}/index, PUT /collections/{c}/points,
// POST /collections/{c}/points (retrieve), .../points/delete, .../points/count,
// .../points/scroll, .../points/query, /collections/{c}/facet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "doors/search/backend.h"
#include "doors/search/document.h"

namespace turnpike::search::qdrant {

// PUT /collections/{c}: one named vector per dense_vector field; the rendered ES mapping
// (`mapping_json`, an object) and the creation time kept in the collection's metadata.
std::string CreateCollectionBody(const Mapping& mapping, std::string_view mapping_json,
                                 int64_t created_ms);

// PATCH /collections/{c}: the new metadata after a PUT _mapping.
std::string UpdateMetadataBody(std::string_view mapping_json, int64_t created_ms);

// PUT /collections/{c}/index bodies: the tenant key (keyword, is_tenant), the id key
// (keyword), then one per mapped non-vector field.
std::vector<std::string> IndexBodies(const Mapping& mapping);

struct PointWrite {
  const Document* doc = nullptr;
  int64_t version = 1;
};
// PUT /collections/{c}/points?wait=true: the points of `writes` (payload per layout.h).
std::string UpsertBody(Scope scope, const Mapping& mapping, const std::vector<PointWrite>& writes);

// POST /collections/{c}/points: the points of these ES ids, with `payload_keys`.
std::string RetrieveBody(Scope scope, const std::vector<std::string>& ids,
                         const std::vector<std::string_view>& payload_keys);

// POST /collections/{c}/points/delete?wait=true
std::string DeleteBody(Scope scope, const std::vector<std::string>& ids);

// POST .../points/count: an exact count of `filter`.
std::string CountBody(std::string_view filter);

struct OrderBy {
  std::string key;  // payload key (layout.h FieldKey)
  bool descending = false;
};
// POST .../points/scroll: `limit` points of `filter` with `payload_keys`, in id order or
// ordered by one range-indexed key (then without offset, a Qdrant rule).
std::string ScrollBody(std::string_view filter, int64_t limit,
                       const std::vector<std::string>& payload_keys,
                       const std::optional<OrderBy>& order_by = std::nullopt,
                       std::string_view offset = {});

// POST .../points/query: the `limit` nearest points of `filter` to `vector` in the named
// vector `using_vector`.
std::string NearestBody(std::string_view filter, std::string_view using_vector,
                        const std::vector<float>& vector, int64_t limit,
                        const std::vector<std::string>& payload_keys);

// POST /collections/{c}/facet: the counts of the values of `key` among `filter`'s points
// (exact, at most `limit` values).
std::string FacetBody(std::string_view filter, std::string_view key, int64_t limit);

}  // namespace turnpike::search::qdrant
