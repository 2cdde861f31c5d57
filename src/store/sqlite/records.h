// The embedded engine's governance records (store/records.h): tables plans, tenants, api_keys
// and prices. The change feed is SQLite's `PRAGMA data_version`, which changes when another
// connection (another process on the same file) commits: one statement per poll.
//
// Ownership: part of SqliteEngine (engine.h); borrows its Database.
// Threads: the engine's.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "store/records.h"
#include "store/sqlite/sqlite.h"

namespace turnpike::store::sqlite {

class Records : public GovernanceRecords {
 public:
  explicit Records(Database& db) : db_(db) {}

  Result<GovernanceRows> LoadAll() override;
  Result<bool> PollChanges() override;
  Status UpsertPlan(const governance::Plan& plan) override;
  Status InsertTenant(const governance::Tenant& tenant) override;
  Status UpdateTenant(const governance::Tenant& tenant) override;
  Status InsertKey(const governance::Key& key) override;
  Status DeleteKey(std::string_view public_id) override;
  Status SetKeyStatus(std::string_view public_id, governance::KeyStatus status,
                      int64_t at) override;
  Status UpsertPrice(const PriceOverride& price) override;
  Status DeletePrice(std::string_view model) override;

 private:
  Database& db_;
  std::unique_ptr<Statement> data_version_;
  int64_t seen_version_ = -1;  // the data version the previous poll saw; -1: none yet
};

}  // namespace turnpike::store::sqlite
