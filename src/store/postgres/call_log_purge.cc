// Retention (store/call_log.h PurgeBefore) on PostgreSQL: rows live in chunks (call_log_chunks,
// up to 4,096 rows per tuple), so whole chunks go: the oldest, by first_id, up to the first
// chunk whose last row is at or after the cutoff (found walking the primary key from the
// oldest: it reads about what it deletes), until `limit` rows are reached (a chunk is never
// split: a call deletes at most limit + 4,095 rows). Ids come from a sequence, so nothing is
// reused even if every chunk goes. Tenant id ranges wholly below what is left go too. One
// transaction.
#include "store/postgres/call_log.h"

namespace turnpike::store::postgres {

Result<int64_t> CallLog::PurgeBefore(int64_t cutoff_ms, int64_t limit) {
  static constexpr std::string_view kPurge =
      "WITH fresh AS (SELECT first_id FROM call_log_chunks WHERE time_ms[n] >= $1 "
      "ORDER BY first_id LIMIT 1), "
      "old AS (SELECT first_id, n, SUM(n) OVER (ORDER BY first_id) AS upto FROM "
      "(SELECT first_id, n FROM call_log_chunks WHERE first_id < "
      "COALESCE((SELECT first_id FROM fresh), 9223372036854775807) ORDER BY first_id LIMIT $2) c), "
      "gone AS (DELETE FROM call_log_chunks k USING old WHERE k.first_id = old.first_id "
      "AND old.upto - old.n < $2 RETURNING k.n) "
      "SELECT COALESCE(SUM(n), 0)::BIGINT FROM gone";
  static constexpr std::string_view kBlocks =
      "DELETE FROM call_log_blocks WHERE last_id < "
      "COALESCE((SELECT MIN(first_id) FROM call_log_chunks), 9223372036854775807)";
  Status begun = db_.Script("BEGIN", StoreOp::kTransaction);
  if (!begun.ok()) return begun.error();
  Params p;
  p.Add(cutoff_ms).Add(limit);
  Result<Rows> rows = db_.Run(kPurge, p, StoreOp::kCallLogPurge);
  const int64_t deleted = rows.ok() && rows->size() > 0 ? rows->Int(0, 0) : 0;
  Result<Rows> blocks = rows.ok() && deleted > 0
                            ? db_.Run(kBlocks, Params{}, StoreOp::kCallLogPurge)
                            : Result<Rows>(Rows{});
  const bool ok = rows.ok() && blocks.ok();
  Status ended = db_.Script(ok ? "COMMIT" : "ROLLBACK", StoreOp::kTransaction);
  if (!rows.ok()) return rows.error();
  if (!blocks.ok()) return blocks.error();
  if (!ended.ok()) return ended.error();
  return deleted;
}

}  // namespace turnpike::store::postgres
