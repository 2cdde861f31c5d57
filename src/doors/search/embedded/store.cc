#include "doors/search/embedded/store.h"

#include <chrono>

#include "common/base64.h"
#include "doors/search/es_error.h"

namespace turnpike::search::embedded {
namespace {

using store::StoreOp;
using store::sqlite::Statement;

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS search_indices (
  id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  name TEXT NOT NULL,
  mapping TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  UNIQUE (tenant, name));
)sql";

std::string DocsTable(int64_t id) { return "s_docs_" + std::to_string(id); }
std::string FtsTable(int64_t id) { return "s_fts_" + std::to_string(id); }

// The text fields of a mapping, in mapping order: the FTS5 table's columns t0, t1, ...
std::vector<int> TextFields(const Mapping& m) {
  std::vector<int> out;
  for (size_t f = 0; f < m.fields.size(); ++f) {
    if (m.fields[f].type == FieldType::kText) out.push_back(static_cast<int>(f));
  }
  return out;
}

Error NotFound(std::string_view name) {
  return EsError(kIndexNotFound, "no such index [" + std::string(name) + "]", ErrorCode::kNotFound);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  std::unique_ptr<Store> store(new Store());
  Result<std::unique_ptr<store::sqlite::Database>> db =
      store::sqlite::Database::Open(path, /*synchronous_full=*/false, &store->counts_);
  if (!db.ok()) return db.error();
  store->db_ = std::move(*db);
  Status s = store->db_->Exec(kSchema, StoreOp::kMigrate);
  if (!s.ok()) return s.error();
  s = store->Load();
  if (!s.ok()) return s.error();
  store->random_.seed(std::random_device{}());
  return store;
}

Status Store::Load() {
  Result<Statement> catalog = db_->Prepare(
      "SELECT id, tenant, name, mapping, created_ms FROM search_indices", StoreOp::kMigrate);
  if (!catalog.ok()) return catalog.error();
  for (;;) {
    Result<bool> row = catalog->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    Result<Mapping> mapping = ParseMapping(catalog->Text(3));
    if (!mapping.ok()) return mapping.error();
    auto index = std::make_unique<Index>(catalog->Int(0), catalog->Text(1), catalog->Text(2),
                                         std::move(*mapping), catalog->Int(4));
    Result<Statement> docs = db_->Prepare(
        "SELECT rowid, doc_id, source, version FROM " + DocsTable(index->id()) + " ORDER BY rowid",
        StoreOp::kMigrate);
    if (!docs.ok()) return docs.error();
    for (;;) {
      Result<bool> d = docs->Step();
      if (!d.ok()) return d.error();
      if (!*d) break;
      Result<Document> doc = ExtractDocument(index->mapping(), docs->Text(1), docs->Text(2));
      if (!doc.ok()) return doc.error();
      index->Put(std::move(*doc), docs->Int(0), docs->Int(3));
    }
    indices_[{index->tenant(), index->name()}] = std::move(index);
  }
  return Ok{};
}

Result<Index*> Store::Find(std::string_view tenant, std::string_view name) {
  if (tenant.empty()) return Error{ErrorCode::kInternal, "search call without a tenant", ""};
  auto it = indices_.find(Key{tenant, name});
  if (it == indices_.end() || it->second->tenant() != tenant) return NotFound(name);
  return it->second.get();
}

Status Store::CreateTables(const Index& index) {
  std::string sql = "CREATE TABLE " + DocsTable(index.id()) +
                    " (rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE, source TEXT NOT "
                    "NULL, version INTEGER NOT NULL);";
  const std::vector<int> text = TextFields(index.mapping());
  if (!text.empty()) {
    sql += "CREATE VIRTUAL TABLE " + FtsTable(index.id()) + " USING fts5(";
    for (size_t i = 0; i < text.size(); ++i) sql += (i ? ", t" : "t") + std::to_string(i);
    sql += ");";
  }
  return db_->Exec(sql, StoreOp::kAdminWrite);
}

Status Store::CreateIndex(std::string_view tenant, std::string_view name, Mapping mapping) {
  if (tenant.empty()) return Error{ErrorCode::kInternal, "search call without a tenant", ""};
  if (indices_.count(Key{tenant, name}) != 0) {
    return EsError(kResourceExists, "index [" + std::string(name) + "] already exists");
  }
  const int64_t created = NowMs();
  int64_t id = 0;
  Status s = store::sqlite::InTransaction(*db_, [&]() -> Status {
    Result<Statement> insert = db_->Prepare(
        "INSERT INTO search_indices (tenant, name, mapping, created_ms) VALUES (?, ?, ?, ?)",
        StoreOp::kAdminWrite);
    if (!insert.ok()) return insert.error();
    insert->Bind(1, tenant).Bind(2, name).Bind(3, RenderMapping(mapping)).Bind(4, created);
    Status run = insert->Run();
    if (!run.ok()) return run;
    id = db_->LastInsertId();
    return CreateTables(Index(id, std::string(tenant), std::string(name), mapping, created));
  });
  if (!s.ok()) return s;
  indices_[Key{tenant, name}] = std::make_unique<Index>(id, std::string(tenant), std::string(name),
                                                        std::move(mapping), created);
  return Ok{};
}

Result<IndexInfo> Store::GetIndex(std::string_view tenant, std::string_view name) {
  Result<Index*> index = Find(tenant, name);
  if (!index.ok()) return index.error();
  return IndexInfo{(*index)->mapping(), (*index)->live(), (*index)->created_ms()};
}

std::vector<IndexListing> Store::ListIndices(std::string_view tenant) const {
  std::vector<IndexListing> out;
  auto it = tenant.empty() ? indices_.begin() : indices_.lower_bound(Key{tenant, ""});
  for (; it != indices_.end() && (tenant.empty() || it->first.first == tenant); ++it) {
    const Index& index = *it->second;
    out.push_back({index.tenant(), index.name(), index.live(), index.created_ms()});
  }
  return out;
}

Status Store::DeleteIndex(std::string_view tenant, std::string_view name) {
  Result<Index*> found = Find(tenant, name);
  if (!found.ok()) return found.error();
  const int64_t id = (*found)->id();
  Status s = store::sqlite::InTransaction(*db_, [&]() -> Status {
    Status drop = db_->Exec("DROP TABLE IF EXISTS " + DocsTable(id) + "; DROP TABLE IF EXISTS " +
                                FtsTable(id) +
                                "; DELETE FROM search_indices WHERE id = " + std::to_string(id),
                            StoreOp::kAdminWrite);
    return drop;
  });
  if (!s.ok()) return s;
  ++writes_;
  statements_.erase(id);
  indices_.erase(Key{tenant, name});
  return Ok{};
}

Status Store::PutMapping(std::string_view tenant, std::string_view name, Mapping mapping) {
  Result<Index*> found = Find(tenant, name);
  if (!found.ok()) return found.error();
  Index& index = **found;
  const bool text_changed = TextFields(index.mapping()).size() != TextFields(mapping).size();
  Status s = store::sqlite::InTransaction(*db_, [&]() -> Status {
    Result<Statement> update =
        db_->Prepare("UPDATE search_indices SET mapping = ? WHERE id = ?", StoreOp::kAdminWrite);
    if (!update.ok()) return update.error();
    update->Bind(1, RenderMapping(mapping)).Bind(2, index.id());
    return update->Run();
  });
  if (!s.ok()) return s;
  ++writes_;
  index.Remap(std::move(mapping));
  if (!text_changed) return Ok{};
  statements_.erase(index.id());
  // FTS5 cannot add a column: the text table is rebuilt from the documents.
  return store::sqlite::InTransaction(*db_, [&]() -> Status {
    Status drop = db_->Exec("DROP TABLE IF EXISTS " + FtsTable(index.id()), StoreOp::kAdminWrite);
    if (!drop.ok()) return drop;
    const std::vector<int> text = TextFields(index.mapping());
    std::string sql = "CREATE VIRTUAL TABLE " + FtsTable(index.id()) + " USING fts5(";
    for (size_t i = 0; i < text.size(); ++i) sql += (i ? ", t" : "t") + std::to_string(i);
    Status create = db_->Exec(sql + ")", StoreOp::kAdminWrite);
    if (!create.ok()) return create;
    std::string insert = "INSERT INTO " + FtsTable(index.id()) + " (rowid";
    std::string values = ") VALUES (?";
    for (size_t i = 0; i < text.size(); ++i) {
      insert += ", t" + std::to_string(i);
      values += ", ?";
    }
    Result<Statement> stmt = db_->Prepare(insert + values + ")", StoreOp::kAdminWrite);
    if (!stmt.ok()) return stmt.error();
    for (size_t slot = 0; slot < index.slots(); ++slot) {
      if (index.SlotOf(index.IdAt(slot)) != static_cast<int64_t>(slot)) continue;
      Result<Document> doc =
          ExtractDocument(index.mapping(), index.IdAt(slot), index.SourceAt(slot));
      if (!doc.ok()) continue;
      stmt->Bind(1, index.RowidOf(slot));
      for (size_t i = 0; i < text.size(); ++i) {
        std::string joined;
        for (const FieldValues& fv : doc->fields) {
          if (fv.field != text[i]) continue;
          for (const Value& v : fv.values) joined += std::get<std::string>(v) + "\n";
        }
        stmt->Bind(static_cast<int>(i) + 2, joined);
      }
      Status run = stmt->Run();
      if (!run.ok()) return run;
    }
    return Ok{};
  });
}

Result<Coverage> Store::Cover(std::string_view tenant, std::string_view name) {
  Result<Index*> index = Find(tenant, name);
  if (!index.ok()) return index.error();
  Coverage c;
  c.doc_count = (*index)->live();
  return c;
}

std::string Store::NewId() {
  constexpr size_t kIdBytes = 15;  // 20 base64url characters, as ES's auto ids
  std::string raw(kIdBytes, '\0');
  for (size_t i = 0; i < kIdBytes; i += 8) {
    const uint64_t r = random_();
    for (size_t b = 0; b < 8 && i + b < kIdBytes; ++b) raw[i + b] = static_cast<char>(r >> (8 * b));
  }
  std::string id;
  AppendBase64(id, raw);
  for (char& c : id) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return id;
}

}  // namespace turnpike::search::embedded
