// Spool: the call-log batches the PostgreSQL engine could not write (its server down or
// unreachable), kept in a bounded local file until they can be replayed. An entry is one
// batch's write statement parameters exactly as they were sent, so a replay sends the same
// batch with the same batch key, and the server skips a batch whose key it has (what an
// ambiguous failure, sent and then the connection broke, had in fact committed): a row is
// never written twice, and its spend is added only with the row (call_log.h).
//
// File: entries appended and fsync'd, each a header (magic, rows, parameter count) and the
// parameters (length, bytes; -1 for NULL). A torn tail (a crash mid-append) is ignored. The
// file survives a restart: the engine replays it at start-up. At most `max_bytes`: past that
// Append refuses (the caller counts the rows as lost).
//
// Threads: the store thread's; rows() and lost_rows() any thread. Errors: Append reports
// kUnavailable when the file is full or cannot be written.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/postgres/pg.h"

namespace turnpike::store::postgres {

class Spool {
 public:
  Spool(std::string path, size_t max_bytes);

  Status Append(const Params& params, size_t rows);
  // Calls `send` with each entry, oldest first, and forgets those it accepted; stops at the
  // first kUnavailable (the rest stay spooled, in order) and returns it. An entry the server
  // refuses otherwise is dropped and counted in lost_rows().
  Status Replay(const std::function<Status(const Params&, size_t rows)>& send);

  bool empty() const { return rows_ == 0; }
  size_t rows() const { return rows_; }  // rows spooled now
  size_t lost_rows() const { return lost_rows_; }
  const std::string& path() const { return path_; }

 private:
  // Reads every whole entry of the file (at start-up, and before a replay).
  struct Entry {
    Params params;
    size_t rows = 0;
  };
  std::vector<Entry> Load() const;
  Status Rewrite(const std::vector<Entry>& entries, size_t from);

  const std::string path_;
  const size_t max_bytes_;
  size_t bytes_ = 0;
  // Read by /metrics on any thread.
  std::atomic<size_t> rows_{0};
  std::atomic<size_t> lost_rows_{0};
};

}  // namespace turnpike::store::postgres
