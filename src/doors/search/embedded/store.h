// The embedded search store: every index of every tenant in one SQLite file, and in memory.
//
//   SQLite   search_indices (tenant, name, mapping): the catalog; per index s_docs_<id>
//            (rowid, doc_id, source, version): the documents, vectors included in `_source`;
//            s_fts_<id> (FTS5, one column per text field, rowid = the document's): the text,
//            so BM25's statistics are per tenant and index.
//   memory   an Index (index.h) per (tenant, index), rebuilt from s_docs_ at Open: typed
//            columns and contiguous vectors, what filters, sorts, kNN and aggregations scan.
// Text clauses run as FTS5 MATCH statements (BM25); everything else runs over memory. A write
// is durable (committed) before it is answered, and visible to the next search: _refresh is a
// no-op.
//
// Tenancy: every operation takes the tenant from the caller (authentication) and looks the
// index up by (tenant, name); another tenant's index is "not found".
//
// Threads: single-threaded, not thread-safe; the engine (engine.h) runs it on its own thread.
// Errors: es_error.h's convention; SQLite failures are kInternal.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "doors/search/backend.h"
#include "doors/search/embedded/index.h"
#include "store/sqlite/sqlite.h"
#include "store/statements.h"

namespace turnpike::search::embedded {

class Store {
 public:
  // Opens (creating) the file and loads every index into memory.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();

  Status CreateIndex(std::string_view tenant, std::string_view name, Mapping mapping);
  Result<IndexInfo> GetIndex(std::string_view tenant, std::string_view name);
  // Every index of `tenant` ("" = every tenant's), by tenant then name.
  std::vector<IndexListing> ListIndices(std::string_view tenant) const;
  Status DeleteIndex(std::string_view tenant, std::string_view name);
  Status PutMapping(std::string_view tenant, std::string_view name, Mapping mapping);
  Result<std::vector<WriteResult>> Write(std::string_view tenant, std::string_view name,
                                         std::vector<WriteOp> ops);
  Result<std::optional<StoredDocument>> Get(std::string_view tenant, std::string_view name,
                                            std::string_view id);
  // `request` (Scope::request): legs with the same non-zero value, the same query and no write
  // in between evaluate it once.
  Result<Page> Search(std::string_view tenant, std::string_view name, const SearchRequest& r,
                      uint64_t request = 0);
  Result<Total> Count(std::string_view tenant, std::string_view name, const Query& query,
                      const search::Knn* knn, int64_t up_to, uint64_t request = 0);
  Result<std::vector<AggResult>> Aggregate(std::string_view tenant, std::string_view name,
                                           const Query& query, const std::vector<Aggregation>& aggs,
                                           uint64_t request = 0);
  Result<Coverage> Cover(std::string_view tenant, std::string_view name);

  // Statements executed, for the per-request budgets in tests.
  const store::StatementCounts& counts() const { return counts_; }

 private:
  Store() = default;
  using Key = std::pair<std::string, std::string>;  // (tenant, index)
  Result<Index*> Find(std::string_view tenant, std::string_view name);
  Status Load();
  Status CreateTables(const Index& index);
  // Match scores of `query` (and of knn when given) by slot.
  Result<std::vector<float>> Scores(Index& index, const Query& query, const search::Knn* knn,
                                    uint64_t request);
  Result<std::vector<float>> Evaluate(Index& index, const Query& query, const search::Knn* knn);
  Result<std::vector<float>> TextScores(const Index& index, const Query& clause);
  Result<WriteResult> Apply(Index& index, WriteOp& op);
  Status Insert(Index& index, Document doc, int64_t version);
  Status Delete(Index& index, size_t slot);
  std::string NewId();

  // Each index's write statements, prepared on first use; dropped with the index or when
  // its text columns change.
  struct Statements {
    std::unique_ptr<store::sqlite::Statement> insert_doc, insert_text, delete_doc, delete_text;
  };
  std::map<int64_t, Statements> statements_;

  // The last evaluation of a search's legs (see Search).
  struct Evaluated {
    uint64_t request = 0;
    int64_t index = -1;
    uint64_t writes = 0;
    const Query* query = nullptr;
    const search::Knn* knn = nullptr;
    std::vector<float> scores;
  };
  Evaluated last_;
  uint64_t writes_ = 0;  // bumped by every change to any index

  store::StatementCounts counts_;
  std::unique_ptr<store::sqlite::Database> db_;
  std::map<Key, std::unique_ptr<Index>> indices_;
  std::mt19937_64 random_;
};

}  // namespace turnpike::search::embedded
