#include "doors/search/qdrant/qdrant_backend.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <map>
#include <tuple>

#include "doors/search/es_error.h"
#include "doors/search/qdrant/filter.h"
#include "doors/search/qdrant/layout.h"
#include "doors/search/qdrant/legs.h"
#include "doors/search/qdrant/payload.h"
#include "doors/search/qdrant/requests.h"

namespace turnpike::search::qdrant {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr size_t kUpsertBatch = 256;  // points per upsert call

// The search's mapping no longer types its fields as the collection does (mapping_cache.h).
Error Recreated(Scope scope) {
  return EsError(kSearchPhase,
                 "index [" + std::string(scope.index) +
                     "] was re-created with another mapping while this search ran; retry",
                 ErrorCode::kUnavailable);
}

Error AlreadyExists(Scope scope) {
  return EsError(kResourceExists, "index [" + std::string(scope.index) + "] already exists");
}

struct CollectionMeta {
  IndexInfo info;
  std::string status;
};

Result<CollectionMeta> ParseInfo(const boost::json::value& result) {
  const Error bad{ErrorCode::kUpstreamBadResponse, "qdrant: collection info without metadata", ""};
  if (!result.is_object()) return bad;
  const auto& info = result.get_object();
  const auto* config = info.if_contains("config");
  const auto* metadata = config != nullptr && config->is_object()
                             ? config->get_object().if_contains("metadata")
                             : nullptr;
  if (metadata == nullptr || !metadata->is_object()) return bad;
  const auto* mapping = metadata->get_object().if_contains("es_mapping");
  const auto* created = metadata->get_object().if_contains("created_ms");
  if (mapping == nullptr) return bad;
  auto parsed = ParseMapping(boost::json::serialize(*mapping));
  if (!parsed.ok()) return bad;
  CollectionMeta meta;
  meta.info.mapping = std::move(*parsed);
  if (created != nullptr && created->is_int64()) meta.info.created_ms = created->get_int64();
  if (const auto* points = info.if_contains("points_count"); points && points->is_int64()) {
    meta.info.doc_count = points->get_int64();
  }
  if (const auto* status = info.if_contains("status"); status && status->is_string()) {
    meta.status = std::string(status->get_string());
  }
  return meta;
}

// What Write knows about an id while it applies the ops in order.
struct DocState {
  bool exists = false;
  int64_t version = 0;
  std::string source;
  bool touched = false;
  Document doc;  // the last written document, when exists
};

}  // namespace

QdrantBackend::QdrantBackend(upstream::Pool& pool, std::shared_ptr<const Settings> settings,
                             std::shared_ptr<MappingCache> mappings)
    : settings_(std::move(settings)), mappings_(std::move(mappings)), client_(pool, *settings_) {
  capabilities_.bm25 = false;
  capabilities_.phrase = true;          // filter only (match.phrase)
  capabilities_.prefix = true;          // keyword fields (match.prefix)
  capabilities_.multi_key_sort = true;  // over candidates (qdrant_search.cc)
  capabilities_.keyword_sort = true;    // over candidates
  capabilities_.search_after = true;    // over candidates
  capabilities_.exact_count = true;
  capabilities_.terms_aggs = true;
  capabilities_.range_aggs = true;
  capabilities_.histogram_aggs = true;  // over candidates
  capabilities_.filtered_knn = true;
  capabilities_.max_candidates = settings_->max_candidates;
  capabilities_.cached_mappings = mappings_ != nullptr;
}

QdrantBackend::~QdrantBackend() = default;

void QdrantBackend::ForgetIfMissing(Scope scope, const Error& error) {
  if (mappings_ != nullptr && error.code == ErrorCode::kNotFound) {
    mappings_->Erase(scope.tenant, scope.index);
  }
}

Awaitable<Status> QdrantBackend::CreateIndex(Scope scope, Mapping mapping, Deadline deadline) {
  const std::string exists_path = CollectionPath(scope, "/exists");
  auto exists = co_await client_.Call("GET", exists_path, "", deadline);
  if (!exists.ok()) co_return exists.error();
  const auto* flag = exists->is_object() ? exists->get_object().if_contains("exists") : nullptr;
  if (flag != nullptr && flag->is_bool() && flag->get_bool()) co_return AlreadyExists(scope);
  for (const FieldMapping& f : mapping.fields) {
    if (f.path.find_first_of("[]\"") != std::string::npos) {
      co_return Unsupported("a field name with '[', ']' or '\"'");
    }
  }
  std::string body = CreateCollectionBody(mapping, RenderMapping(mapping), NowMs());
  const std::string created_path = CollectionPath(scope);
  auto created = co_await client_.Call("PUT", created_path, body, deadline);
  if (mappings_ != nullptr) mappings_->Erase(scope.tenant, scope.index);
  if (!created.ok()) co_return created.error();
  const std::vector<std::string> indexes = IndexBodies(mapping);
  for (const std::string& index : indexes) {
    const std::string made_path = CollectionPath(scope, "/index?wait=true");
    auto made = co_await client_.Call("PUT", made_path, index, deadline);
    if (!made.ok()) co_return made.error();
  }
  co_return Ok{};
}

Awaitable<Result<IndexInfo>> QdrantBackend::GetIndex(Scope scope, Deadline deadline) {
  if (scope.request != 0 && mappings_ != nullptr) {
    std::shared_ptr<const IndexInfo> cached =
        mappings_->Find(scope.tenant, scope.index, MappingCache::Clock::now());
    if (cached != nullptr) co_return IndexInfo(*cached);
  }
  const std::string info_path = CollectionPath(scope);
  auto info = co_await client_.Call("GET", info_path, "", deadline);
  if (!info.ok()) {
    ForgetIfMissing(scope, info.error());
    co_return OnIndex(scope, info.error());
  }
  auto meta = ParseInfo(*info);
  if (!meta.ok()) co_return meta.error();
  if (mappings_ != nullptr) {
    mappings_->Store(scope.tenant, scope.index, meta->info, MappingCache::Clock::now());
  }
  co_return std::move(meta->info);
}

Awaitable<Status> QdrantBackend::DeleteIndex(Scope scope, Deadline deadline) {
  const std::string deleted_path = CollectionPath(scope);
  auto deleted = co_await client_.Call("DELETE", deleted_path, "", deadline);
  if (mappings_ != nullptr) mappings_->Erase(scope.tenant, scope.index);
  if (!deleted.ok()) co_return OnIndex(scope, deleted.error());
  if (!deleted->is_bool() || !deleted->get_bool()) co_return NotFound(scope);
  co_return Ok{};
}

Awaitable<Result<std::vector<IndexListing>>> QdrantBackend::ListIndices(std::string tenant,
                                                                        Deadline deadline) {
  const Error bad{ErrorCode::kUpstreamBadResponse, "qdrant: a collection list without names", ""};
  auto listed = co_await client_.Call("GET", "/collections", "", deadline);
  if (!listed.ok()) co_return listed.error();
  const auto* collections =
      listed->is_object() ? listed->get_object().if_contains("collections") : nullptr;
  if (collections == nullptr || !collections->is_array()) co_return bad;
  std::vector<IndexListing> out;
  for (const boost::json::value& c : collections->get_array()) {
    const auto* name = c.is_object() ? c.get_object().if_contains("name") : nullptr;
    if (name == nullptr || !name->is_string()) co_return bad;
    auto owner = ParseCollectionName(name->get_string());
    if (!owner || (!tenant.empty() && owner->first != tenant)) continue;
    out.push_back({std::move(owner->first), std::move(owner->second), 0, 0});
  }
  std::sort(out.begin(), out.end(), [](const IndexListing& a, const IndexListing& b) {
    return std::tie(a.tenant, a.index) < std::tie(b.tenant, b.index);
  });
  std::vector<IndexListing> found;
  for (IndexListing& listing : out) {
    const Scope scope{listing.tenant, listing.index, 0};
    const std::string info_path = CollectionPath(scope);
    auto info = co_await client_.Call("GET", info_path, "", deadline);
    if (!info.ok() && info.error().code == ErrorCode::kNotFound) continue;  // deleted since
    if (!info.ok()) co_return info.error();
    Result<CollectionMeta> meta = ParseInfo(*info);
    // A name like the gateway's without its metadata: another application's collection.
    if (!meta.ok()) continue;
    listing.doc_count = meta->info.doc_count;
    listing.created_ms = meta->info.created_ms;
    found.push_back(std::move(listing));
  }
  co_return found;
}

Awaitable<Status> QdrantBackend::PutMapping(Scope scope, Mapping mapping, Deadline deadline) {
  auto current = co_await GetIndex(scope, deadline);
  if (!current.ok()) co_return current.error();
  for (const FieldMapping& f : mapping.fields) {
    if (f.type != FieldType::kDenseVector) continue;
    bool known = false;
    for (const FieldMapping& old : current->mapping.fields) known = known || old.path == f.path;
    if (!known) co_return Unsupported("adding a dense_vector field to an existing index");
  }
  std::string body = UpdateMetadataBody(RenderMapping(mapping), current->created_ms);
  const std::string patched_path = CollectionPath(scope);
  auto patched = co_await client_.Call("PATCH", patched_path, body, deadline);
  // Dropped, not updated: the payload indexes below may still fail; the next read is fresh.
  if (mappings_ != nullptr) mappings_->Erase(scope.tenant, scope.index);
  if (!patched.ok()) co_return OnIndex(scope, patched.error());
  // Creating an existing payload index again is a no-op in Qdrant: every field is (re)sent.
  const std::vector<std::string> indexes = IndexBodies(mapping);
  for (const std::string& index : indexes) {
    const std::string made_path = CollectionPath(scope, "/index?wait=true");
    auto made = co_await client_.Call("PUT", made_path, index, deadline);
    if (!made.ok()) co_return made.error();
  }
  co_return Ok{};
}

Awaitable<Status> QdrantBackend::Refresh(Scope scope, Deadline deadline) {
  // Writes are sent with wait=true: visible once acknowledged. Refresh only checks the index.
  const std::string exists_path = CollectionPath(scope, "/exists");
  auto exists = co_await client_.Call("GET", exists_path, "", deadline);
  if (!exists.ok()) co_return exists.error();
  const auto* flag = exists->is_object() ? exists->get_object().if_contains("exists") : nullptr;
  if (flag == nullptr || !flag->is_bool() || !flag->get_bool()) co_return NotFound(scope);
  co_return Ok{};
}

Awaitable<Result<std::vector<WriteResult>>> QdrantBackend::Write(Scope scope,
                                                                 std::vector<WriteOp> ops,
                                                                 Deadline deadline) {
  auto index = co_await GetIndex(scope, deadline);
  if (!index.ok()) co_return index.error();
  const Mapping& mapping = index->mapping;
  std::map<std::string, DocState> state;
  std::vector<std::string> ids;
  bool need_sources = false;
  for (const WriteOp& op : ops) {
    if (state.emplace(op.doc.id, DocState{}).second) ids.push_back(op.doc.id);
    need_sources = need_sources || op.kind == WriteOp::Kind::kUpdate;
  }
  std::vector<std::string_view> keys{kIdKey, kVersionKey};
  if (need_sources) keys.push_back(kSourceKey);
  const std::string existing_path = CollectionPath(scope, "/points");
  const std::string existing_body = RetrieveBody(scope, ids, keys);
  auto existing = co_await client_.Call("POST", existing_path, existing_body, deadline);
  if (!existing.ok()) co_return OnIndex(scope, existing.error());
  if (existing->is_array()) {
    for (const auto& record : existing->get_array()) {
      const auto* payload =
          record.is_object() ? record.get_object().if_contains("payload") : nullptr;
      if (payload == nullptr || !payload->is_object()) continue;
      const auto& p = payload->get_object();
      auto it = state.find(std::string(PayloadString(p, kIdKey)));
      if (it == state.end()) continue;
      it->second.exists = true;
      const auto* v = p.if_contains(kVersionKey);
      it->second.version = v != nullptr && v->is_int64() ? v->get_int64() : 1;
      it->second.source = std::string(PayloadString(p, kSourceKey));
    }
  }
  std::vector<WriteResult> results;
  results.reserve(ops.size());
  for (WriteOp& op : ops) {
    DocState& s = state[op.doc.id];
    WriteResult r{op.doc.id, WriteResult::Outcome::kFailed};
    if (op.kind == WriteOp::Kind::kDelete) {
      r.outcome = s.exists ? WriteResult::Outcome::kDeleted : WriteResult::Outcome::kNotFound;
      r.version = s.version + 1;
      if (s.exists) s.touched = true;
      s.exists = false;
    } else if (op.kind == WriteOp::Kind::kCreate && s.exists) {
      r.version = s.version;
      r.error = EsError(kVersionConflict,
                        "[" + op.doc.id + "]: version conflict, document already exists",
                        ErrorCode::kConflict);
    } else if (op.kind == WriteOp::Kind::kUpdate && !s.exists) {
      r.error =
          EsError(kDocumentMissing, "[" + op.doc.id + "]: document missing", ErrorCode::kNotFound);
    } else {
      Document doc = std::move(op.doc);
      if (op.kind == WriteOp::Kind::kUpdate) {
        auto merged = MergeSource(s.source, doc.source);
        auto extracted = merged.ok() ? ExtractDocument(mapping, doc.id, std::move(*merged))
                                     : Result<Document>(merged.error());
        if (!extracted.ok()) {
          r.error = extracted.error();
          results.push_back(std::move(r));
          continue;
        }
        doc = std::move(*extracted);
      }
      r.outcome = s.exists ? WriteResult::Outcome::kUpdated : WriteResult::Outcome::kCreated;
      r.version = s.exists ? s.version + 1 : 1;
      s.exists = true;
      s.touched = true;
      s.source = doc.source;
      s.doc = std::move(doc);
    }
    if (r.outcome != WriteResult::Outcome::kFailed) s.version = r.version;
    r.seq_no = r.version - 1;
    results.push_back(std::move(r));
  }
  std::vector<PointWrite> upserts;
  std::vector<std::string> deletes;
  for (const std::string& id : ids) {
    const DocState& s = state[id];
    if (!s.touched) continue;
    if (s.exists) {
      upserts.push_back({&s.doc, s.version});
    } else {
      deletes.push_back(id);
    }
  }
  // Upserts in batches: Qdrant bounds a request's size (32 MiB by default), which a bulk of
  // documents with large vectors would pass in one body.
  const std::string put_path = CollectionPath(scope, "/points?wait=true");
  for (size_t begin = 0; begin < upserts.size(); begin += kUpsertBatch) {
    const size_t end = std::min(upserts.size(), begin + kUpsertBatch);
    const std::vector<PointWrite> batch(upserts.begin() + static_cast<ptrdiff_t>(begin),
                                        upserts.begin() + static_cast<ptrdiff_t>(end));
    const std::string put_body = UpsertBody(scope, mapping, batch);
    auto put = co_await client_.Call("PUT", put_path, put_body, deadline);
    if (!put.ok()) co_return OnIndex(scope, put.error());
  }
  if (!deletes.empty()) {
    const std::string del_path = CollectionPath(scope, "/points/delete?wait=true");
    const std::string del_body = DeleteBody(scope, deletes);
    auto del = co_await client_.Call("POST", del_path, del_body, deadline);
    if (!del.ok()) co_return OnIndex(scope, del.error());
  }
  co_return results;
}

Awaitable<Result<std::optional<StoredDocument>>> QdrantBackend::Get(Scope scope, std::string id,
                                                                    Deadline deadline) {
  std::vector<std::string> ids{id};
  const std::vector<std::string_view> keys{kTenantKey, kIdKey, kVersionKey, kSourceKey};
  std::string body = RetrieveBody(scope, ids, keys);
  const std::string found_path = CollectionPath(scope, "/points");
  auto found = co_await client_.Call("POST", found_path, body, deadline);
  if (!found.ok()) co_return OnIndex(scope, found.error());
  if (!found->is_array()) co_return std::optional<StoredDocument>{};
  for (const auto& record : found->get_array()) {
    const auto* payload = record.is_object() ? record.get_object().if_contains("payload") : nullptr;
    if (payload == nullptr || !payload->is_object()) continue;
    const auto& p = payload->get_object();
    // The tenant asserted again: a point of another tenant is not this index's document.
    if (PayloadString(p, kTenantKey) != scope.tenant || PayloadString(p, kIdKey) != id) continue;
    StoredDocument doc;
    doc.id = id;
    doc.source = std::string(PayloadString(p, kSourceKey));
    const auto* v = p.if_contains(kVersionKey);
    doc.version = v != nullptr && v->is_int64() ? v->get_int64() : 1;
    doc.seq_no = doc.version - 1;
    co_return std::optional<StoredDocument>(std::move(doc));
  }
  co_return std::optional<StoredDocument>{};
}

Awaitable<Result<Coverage>> QdrantBackend::Cover(Scope scope, Deadline deadline) {
  const std::string info_path = CollectionPath(scope);
  auto info = co_await client_.Call("GET", info_path, "", deadline);
  if (!info.ok()) {
    ForgetIfMissing(scope, info.error());
    co_return OnIndex(scope, info.error());
  }
  auto meta = ParseInfo(*info);
  if (!meta.ok()) co_return meta.error();
  // This leg reads the collection anyway: it verifies the search's cached mapping for free.
  if (mappings_ != nullptr &&
      mappings_->Observe(scope.tenant, scope.index, meta->info, MappingCache::Clock::now()) ==
          MappingCache::Seen::kRetyped) {
    co_return Recreated(scope);
  }
  Coverage coverage;
  coverage.doc_count = meta->info.doc_count;
  // green: ready; yellow: optimising but answering; grey: optimisations pending, answering;
  // red: an operation failed, the collection's answers cannot be trusted.
  if (meta->status == "red") {
    coverage.shards_successful = 0;
    coverage.shards_failed = 1;
  }
  co_return coverage;
}

BackendFactory MakeBackendFactory(std::shared_ptr<const Settings> settings) {
  // ttl 0: no cache at all (and no Capabilities::cached_mappings re-reads).
  auto mappings =
      settings->mapping_ttl.count() > 0
          ? std::make_shared<MappingCache>(settings->mapping_ttl, settings->mapping_cache_entries)
          : nullptr;
  return [settings, mappings](int, boost::asio::io_context&,
                              upstream::Pool& pool) -> std::unique_ptr<Backend> {
    return std::make_unique<QdrantBackend>(pool, settings, mappings);
  };
}

}  // namespace turnpike::search::qdrant
