// The embedded store's writes and reads of single documents.
#include "doors/search/embedded/store.h"
#include "doors/search/es_error.h"

namespace turnpike::search::embedded {
namespace {

using store::StoreOp;
using store::sqlite::Statement;

std::string DocsTable(int64_t id) { return "s_docs_" + std::to_string(id); }
std::string FtsTable(int64_t id) { return "s_fts_" + std::to_string(id); }

WriteResult Failed(std::string id, Error error) {
  WriteResult r{std::move(id), WriteResult::Outcome::kFailed};
  r.error = std::move(error);
  return r;
}

}  // namespace

Status Store::Insert(Index& index, Document doc, int64_t version) {
  Statements& cached = statements_[index.id()];
  Result<Statement*> insert = db_->Cached(
      cached.insert_doc,
      "INSERT INTO " + DocsTable(index.id()) + " (doc_id, source, version) VALUES (?, ?, ?)",
      StoreOp::kAdminWrite);
  if (!insert.ok()) return insert.error();
  (*insert)->BindView(1, doc.id).BindView(2, doc.source).Bind(3, version);
  Status s = (*insert)->Run();
  if (!s.ok()) return s;
  const int64_t rowid = db_->LastInsertId();
  std::vector<int> text;
  for (size_t f = 0; f < index.mapping().fields.size(); ++f) {
    if (index.mapping().fields[f].type == FieldType::kText) text.push_back(static_cast<int>(f));
  }
  if (!text.empty()) {
    std::string sql = "INSERT INTO " + FtsTable(index.id()) + " (rowid";
    std::string values = ") VALUES (?";
    for (size_t i = 0; i < text.size(); ++i) {
      sql += ", t" + std::to_string(i);
      values += ", ?";
    }
    Result<Statement*> fts =
        db_->Cached(cached.insert_text, sql + values + ")", StoreOp::kAdminWrite);
    if (!fts.ok()) return fts.error();
    (*fts)->Bind(1, rowid);
    for (size_t i = 0; i < text.size(); ++i) {
      std::string joined;
      for (const FieldValues& fv : doc.fields) {
        if (fv.field != text[i]) continue;
        for (const Value& v : fv.values) joined += std::get<std::string>(v) + "\n";
      }
      (*fts)->Bind(static_cast<int>(i) + 2, joined);
    }
    s = (*fts)->Run();
    if (!s.ok()) return s;
  }
  index.Put(std::move(doc), rowid, version);
  return Ok{};
}

Status Store::Delete(Index& index, size_t slot) {
  Statements& cached = statements_[index.id()];
  const int64_t rowid = index.RowidOf(slot);
  Result<Statement*> del =
      db_->Cached(cached.delete_doc, "DELETE FROM " + DocsTable(index.id()) + " WHERE rowid = ?",
                  StoreOp::kAdminWrite);
  if (!del.ok()) return del.error();
  (*del)->Bind(1, rowid);
  Status s = (*del)->Run();
  if (!s.ok()) return s;
  for (const FieldMapping& f : index.mapping().fields) {
    if (f.type != FieldType::kText) continue;
    Result<Statement*> text =
        db_->Cached(cached.delete_text, "DELETE FROM " + FtsTable(index.id()) + " WHERE rowid = ?",
                    StoreOp::kAdminWrite);
    if (!text.ok()) return text.error();
    (*text)->Bind(1, rowid);
    s = (*text)->Run();
    if (!s.ok()) return s;
    break;
  }
  index.Remove(slot);
  return Ok{};
}

Result<WriteResult> Store::Apply(Index& index, WriteOp& op) {
  using Outcome = WriteResult::Outcome;
  if (op.doc.id.empty()) op.doc.id = NewId();
  const int64_t slot = index.SlotOf(op.doc.id);
  const int64_t version = slot >= 0 ? index.VersionAt(static_cast<size_t>(slot)) + 1 : 1;
  std::string id = op.doc.id;
  switch (op.kind) {
    case WriteOp::Kind::kCreate:
      if (slot >= 0) {
        return Failed(
            std::move(id),
            EsError(kVersionConflict, "[" + id + "]: version conflict, document already exists",
                    ErrorCode::kConflict));
      }
      [[fallthrough]];
    case WriteOp::Kind::kIndex: {
      if (slot >= 0) {
        Status d = Delete(index, static_cast<size_t>(slot));
        if (!d.ok()) return d.error();
      }
      Status s = Insert(index, std::move(op.doc), version);
      if (!s.ok()) return s.error();
      return WriteResult{std::move(id), slot >= 0 ? Outcome::kUpdated : Outcome::kCreated, version};
    }
    case WriteOp::Kind::kDelete: {
      if (slot < 0) return WriteResult{std::move(id), Outcome::kNotFound, 1};
      Status s = Delete(index, static_cast<size_t>(slot));
      if (!s.ok()) return s.error();
      return WriteResult{std::move(id), Outcome::kDeleted, version};
    }
    case WriteOp::Kind::kUpdate: {
      if (slot < 0) {
        return Failed(std::move(id), EsError(kDocumentMissing, "[" + id + "]: document missing",
                                             ErrorCode::kNotFound));
      }
      Result<std::string> merged =
          MergeSource(index.SourceAt(static_cast<size_t>(slot)), op.doc.source);
      if (!merged.ok()) return Failed(std::move(id), merged.error());
      if (*merged == index.SourceAt(static_cast<size_t>(slot))) {
        return WriteResult{std::move(id), Outcome::kNoop, version - 1};
      }
      Result<Document> doc = ExtractDocument(index.mapping(), id, std::move(*merged));
      if (!doc.ok()) return Failed(std::move(id), doc.error());
      Status d = Delete(index, static_cast<size_t>(slot));
      if (!d.ok()) return d.error();
      Status s = Insert(index, std::move(*doc), version);
      if (!s.ok()) return s.error();
      return WriteResult{std::move(id), Outcome::kUpdated, version};
    }
  }
  return Error{ErrorCode::kInternal, "unknown write", ""};
}

Result<std::vector<WriteResult>> Store::Write(std::string_view tenant, std::string_view name,
                                              std::vector<WriteOp> ops) {
  Result<Index*> found = Find(tenant, name);
  if (!found.ok()) return found.error();
  ++writes_;
  std::vector<WriteResult> results;
  results.reserve(ops.size());
  Status s = store::sqlite::InTransaction(*db_, [&]() -> Status {
    for (WriteOp& op : ops) {
      Result<WriteResult> r = Apply(**found, op);
      if (!r.ok()) return r.error();
      r->seq_no = static_cast<int64_t>(results.size());
      results.push_back(std::move(*r));
    }
    return Ok{};
  });
  if (!s.ok()) {
    // The memory side went ahead of a rolled-back transaction: rebuild it from the file.
    indices_.clear();
    Status reload = Load();
    if (!reload.ok()) return reload.error();
    return s.error();
  }
  // Between writes, no slot held: the replaced documents' slots may go (index.h).
  (*found)->MaybeCompact();
  return results;
}

Result<std::optional<StoredDocument>> Store::Get(std::string_view tenant, std::string_view name,
                                                 std::string_view id) {
  Result<Index*> found = Find(tenant, name);
  if (!found.ok()) return found.error();
  const int64_t slot = (*found)->SlotOf(id);
  if (slot < 0) return std::optional<StoredDocument>();
  const auto s = static_cast<size_t>(slot);
  return std::optional<StoredDocument>(StoredDocument{
      std::string(id), (*found)->SourceAt(s), (*found)->VersionAt(s), (*found)->RowidOf(s)});
}

}  // namespace turnpike::search::embedded
