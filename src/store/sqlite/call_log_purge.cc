// Retention (store/call_log.h PurgeBefore) on the embedded engine: call_log_rows is one row per
// call under an INTEGER PRIMARY KEY, so the oldest rows are the first of the table. One DELETE
// takes the id range from the oldest row up to the first row at or after the cutoff (found by
// walking the table in id order from the start: it reads about what it deletes), at most
// `limit` ids, never the newest row (SQLite gives a new row the largest id plus one: an empty
// table would hand out ids again). Tenant id ranges wholly below what is left go too.
#include "store/sqlite/call_log.h"

namespace turnpike::store::sqlite {

Result<int64_t> CallLog::PurgeBefore(int64_t cutoff_ms, int64_t limit) {
  int64_t deleted = 0;
  Status done = InTransaction(db_, [&]() -> Status {
    Result<Statement> purge = db_.Prepare(
        "DELETE FROM call_log_rows WHERE "
        "id < COALESCE((SELECT id FROM call_log_rows WHERE time_ms >= ?1 ORDER BY id LIMIT 1), "
        "(SELECT MAX(id) FROM call_log_rows)) "
        "AND id < (SELECT MIN(id) FROM call_log_rows) + ?2",
        StoreOp::kCallLogPurge);
    if (!purge.ok()) return purge.error();
    purge->Bind(1, cutoff_ms).Bind(2, limit);
    Status ran = purge->Run();
    if (!ran.ok()) return ran;
    Result<Statement> changes = db_.Prepare("SELECT changes()", StoreOp::kCallLogPurge);
    if (!changes.ok()) return changes.error();
    Result<bool> row = changes->Step();
    if (!row.ok()) return row.error();
    deleted = row.value() ? changes->Int(0) : 0;
    changes->Reset();
    if (deleted == 0) return Ok{};
    return db_.Exec(
        "DELETE FROM call_log_blocks WHERE last_id < (SELECT MIN(id) FROM call_log_rows)",
        StoreOp::kCallLogPurge);
  });
  if (!done.ok()) return done.error();
  return deleted;
}

}  // namespace turnpike::store::sqlite
