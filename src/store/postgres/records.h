// The PostgreSQL engine's governance records (store/records.h), with the statements the
// engines share (store/records_sql.h).
//
// Change feed: a trigger on every records table bumps records_version and NOTIFYs channel
// turnpike_records in the writing transaction (migrations.h), whoever writes (any replica, or
// psql). Two ways to learn of it:
//   Notified()     reads the LISTEN connection's socket without waiting (no round trip, not a
//                  statement): true when a notification from another backend than this
//                  engine's own arrived. Called on every tick of the store thread that runs
//                  the feed, which also ticks as soon as the socket is readable (ChangeFd), so
//                  a change reaches this replica in one notification plus one reload.
//   PollChanges()  one statement (kChangeCheck): has records_version moved since the previous
//                  poll? Called once per snapshot_ttl: the bound when a notification is lost
//                  (the LISTEN connection broke, or notify_url points at the wrong server).
// This engine's own writes are reported by neither: their writer publishes them (store/records.h),
// and a reload would read every record again for nothing. A write runs in a transaction of its
// own that first locks records_version's row (SELECT ... FOR UPDATE), then writes (its triggers
// move the version, one or two steps: an upsert fires both the INSERT and the UPDATE statement
// triggers), then reads the version again, and commits: five round trips, for a write that is
// rare. No other writer can move the version between the two reads, so when the first equals
// the poll's mark (nobody wrote since the previous poll), the second becomes the mark. When it
// does not, the mark stays, and the next poll reports a change: another writer's, which must
// be reloaded. A write that fails, or finds no row to update or delete, rolls back.
// A LISTEN connection that breaks is reconnected at the next tick and reports true (what was
// sent meanwhile is lost).
//
// Ownership: part of PostgresEngine (engine.h); borrows its connections.
// Threads: the engine's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/postgres/pg.h"
#include "store/records.h"

namespace turnpike::store::postgres {

class Records : public GovernanceRecords {
 public:
  Records(Connection& db, Connection& listen);

  Result<GovernanceRows> LoadAll() override;
  Result<bool> PollChanges() override;
  Result<bool> Notified() override;
  int ChangeFd() const override;
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
  // Runs a write; with `missing`, kNotFound unless it returned a row.
  Status Write(const std::string& sql, const Params& params, std::string missing = "");
  static constexpr const char* kVersionSql = "SELECT version FROM records_version WHERE id = 1";
  static constexpr const char* kLockVersionSql =
      "SELECT version FROM records_version WHERE id = 1 FOR UPDATE";

  Connection& db_;
  Connection& listen_;
  bool listening_ = false;
  int64_t seen_version_ = -1;  // records_version at the previous poll; -1: none yet
  // The shared statements, numbered once.
  const std::string upsert_plan_, insert_tenant_, update_tenant_, insert_key_, set_key_status_,
      upsert_price_, delete_price_, delete_key_;
};

}  // namespace turnpike::store::postgres
