// The embedded Store: one SQLite file in WAL mode, opened by the store thread.
//
// Schema: versioned migrations (sqlite_store.cc, kMigrations) recorded in schema_migrations,
// applied in order at start-up, each in its own transaction; a database newer than this
// binary is refused. Hot statements (call-log insert, spend upsert) are prepared once.
//
// Ownership and threads: owned by the store thread, used only there (store.h).
#pragma once

#include <memory>
#include <string>

#include "store/sqlite.h"
#include "store/store.h"

namespace turnpike::store {

class SqliteStore : public Store {
 public:
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, bool synchronous_full,
                                                   StatementCounts* counts);

  Status Migrate() override;
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
  Status WriteCalls(std::span<const CallRecord> records, bool log_rows,
                    std::span<const SpendRow> extra_spend) override;
  Result<std::vector<CallRow>> QueryCalls(const CallQuery& query) override;
  Result<std::vector<SpendRow>> SumCallLog(const std::string& month) override;
  Status SetSpend(std::span<const SpendRow> rows) override;

 private:
  explicit SqliteStore(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  // The prepared statement in `slot`, preparing it on first use.
  Result<Statement*> Cached(std::unique_ptr<Statement>& slot, std::string_view sql, StoreOp op);
  // Runs `body` inside BEGIN IMMEDIATE / COMMIT; ROLLBACK if it fails.
  template <typename Body>
  Status InTransaction(Body&& body);
  Status AddSpend(SpendScope scope, const std::string& scope_id, const std::string& month,
                  int64_t micros);

  std::unique_ptr<Database> db_;
  std::unique_ptr<Statement> insert_call_;
  std::unique_ptr<Statement> add_spend_;
  std::unique_ptr<Statement> set_spend_;
  std::unique_ptr<Statement> data_version_;
};

}  // namespace turnpike::store
