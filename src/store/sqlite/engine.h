// The embedded Store: one SQLite file in WAL mode, opened by the store thread.
//
// Schema: versioned migrations (sqlite_store.cc, kMigrations) recorded in schema_migrations,
// applied in order at start-up, each in its own transaction; a database newer than this
// binary is refused. Hot statements (call-log insert, spend upsert) are prepared once. The
// call-log side (writing, paging, reconcile sums) is in sqlite_call_log.cc.
//
// Ownership and threads: owned by the store thread, used only there (store.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/call_routes.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace turnpike::store {

class SqliteStore : public Store {
 public:
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, bool synchronous_full,
                                                   StatementCounts* counts);

  Status Migrate() override;
  // Applies migrations up to schema `version` only (tests of a migration over old data).
  Status MigrateTo(int version);
  int SchemaVersion() override;
  Result<GovernanceRows> LoadGovernance() override;
  Result<int64_t> ChangeVersion() override;
  Status UpsertPlan(const governance::Plan& plan) override;
  Status InsertTenant(const governance::Tenant& tenant) override;
  Status UpdateTenant(const governance::Tenant& tenant) override;
  Status InsertKey(const governance::Key& key) override;
  Status SetKeyStatus(std::string_view public_id, governance::KeyStatus status,
                      int64_t at) override;
  Status UpsertPrice(const PriceOverride& price) override;
  Status DeletePrice(std::string_view model) override;
  Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string> months) override;
  Status WriteCalls(CallBatchParts parts, bool log_rows,
                    std::span<const SpendRow> extra_spend) override;
  Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) override;
  Result<std::vector<SpendRow>> SumCallLog(const std::string& month) override;
  Status SetSpend(std::span<const SpendRow> rows) override;

 private:
  explicit SqliteStore(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  // Runs `body` inside BEGIN IMMEDIATE / COMMIT; ROLLBACK if it fails.
  template <typename Body>
  Status InTransaction(Body&& body);
  // Records [first_id, last_id] as an id range holding rows of `tenant_id` (call_log_blocks).
  Status NoteTenantBlock(std::string_view tenant_id, int64_t first_id, int64_t last_id);
  // Records `first_id` as the first call-log row of `month` (call_log_months).
  Status NoteMonth(std::string_view month, int64_t first_id);
  Status AddSpend(SpendScope scope, std::string_view scope_id, std::string_view month,
                  int64_t micros);

  // A record WriteCalls is inserting, with its position in the transaction's TxRoutes.
  struct Row {
    const CallBatch* batch;
    size_t index;  // in batch
    size_t route;  // in TxRoutes
  };
  // The distinct routes of one transaction's rows, in first-seen order (sqlite_call_log.cc).
  struct TxRoutes;

  std::unique_ptr<Database> db_;
  // Inserts rows_ into the call log, filling each route's id and id range in `routes`; months
  // whose first row it inserted go to `noting`.
  Status InsertCalls(TxRoutes& routes, std::vector<governance::MonthId>& noting);

  std::unique_ptr<Statement> insert_call_;   // one row
  std::unique_ptr<Statement> insert_calls_;  // kRowsPerInsert rows (sqlite_call_log.cc)
  std::unique_ptr<Statement> insert_month_;
  std::unique_ptr<Statement> insert_block_;
  std::vector<Row> rows_;  // the rows WriteCalls is inserting
  CallRoutes routes_;      // their routes' ids
  // Months whose first call-log row is in call_log_months (committed).
  std::vector<governance::MonthId> months_noted_;
  std::unique_ptr<Statement> add_spend_;
  std::unique_ptr<Statement> set_spend_;
  std::unique_ptr<Statement> data_version_;
};

template <typename Body>
Status SqliteStore::InTransaction(Body&& body) {
  Status begun = db_->Begin();
  if (!begun.ok()) return begun;
  Status done = body();
  if (!done.ok()) {
    db_->Rollback();
    return done;
  }
  Status committed = db_->Commit();
  if (!committed.ok()) db_->Rollback();
  return committed;
}

}  // namespace turnpike::store
