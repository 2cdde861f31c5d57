// The store thread's cost per call-log row, on a real SQLite file opened as the gateway opens
// it (WAL, synchronous NORMAL), in a temporary directory:
//   BM_WriteCalls/R     the real write: the SQLite engine's WriteCalls of R-row batches (the
//                       rows, the spend they add and the coarse index, one transaction each), rows
//                       shaped like the governance cell's, each first added to a CallBatch as
//                       a worker adds it (included in the time);
//   BM_InsertColumns/N  what a narrower row would cost: 640-row transactions of 32-row INSERTs
//                       into a table of N columns (every third one text, seven integers that
//                       change from row to row, the rest repeating), bound as WriteCalls binds.
// Rates are rows per second. CPU time includes the kernel's (the WAL's pwrite, the checkpoints'
// pread and pwrite, the locks' fcntl): about half of the total in the 2-core VM of
// docs/BENCHMARKS.md. The database grows across iterations, so checkpoints are included.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/sqlite/engine.h"
#include "store/sqlite/sqlite.h"

namespace {

using namespace turnpike;

constexpr int kRowsPerBatch = 640;
constexpr int kRowsPerInsert = 32;
constexpr int kChangingInts = 7;

// A fresh directory for one benchmark's database, removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("turnpike-call-log-bench-" + std::to_string(::getpid()) + "-" + name)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void BM_WriteCalls(benchmark::State& state) {
  TempDir dir("write-calls");
  auto opened = store::sqlite::OpenEngine(dir.File("calls.db"), {});
  if (!opened.ok() || !opened.value()->Migrate().ok()) {
    state.SkipWithError("cannot open the store");
    return;
  }
  store::CallLogStore& db = opened.value()->call_log();
  const int64_t rows_per_transaction = state.range(0);
  const governance::MonthId month = governance::MonthOf(1'796'000'000);
  store::CallBatch batch;
  store::CallRecordView r;
  std::string request_id;
  int64_t n = 0;
  for (auto _ : state) {
    batch.Clear();
    for (int64_t i = 0; i < rows_per_transaction; ++i) {
      ++n;
      r.time_ms = 1'796'000'000'000 + n / 30;
      request_id = "0000506c92a26074" + std::to_string(10'000'000 + n);  // 24 characters
      r.request_id = request_id;
      r.tenant_id = "bench";
      r.key_id = "d5u5n7ibziut";
      r.model = "bench-model";
      r.deployment = "http://127.0.0.1:36527/v1";
      r.status = 200;
      r.prompt_tokens = 12 + n % 5;
      r.completion_tokens = 20;
      r.cost_micros = 14 + n % 3;
      r.total_ms = 1.2 + static_cast<double>(n % 100) / 100;
      r.overhead_us = 60 + n % 40;
      r.month = month;
      batch.Add(r);
    }
    const store::CallBatchPart whole[] = {{&batch, 0, batch.size()}};
    if (!db.WriteCalls(whole, true, {}).ok()) {
      state.SkipWithError("write failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * rows_per_transaction);
}
// 1,024: call_log.batch_rows' default; 640 as measured before; 4,096: four times as many rows
// per commit.
BENCHMARK(BM_WriteCalls)
    ->Arg(640)
    ->Arg(1'024)
    ->Arg(4'096)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2);

bool IsText(int column) { return column % 3 == 1; }

void BM_InsertColumns(benchmark::State& state) {
  const int columns = static_cast<int>(state.range(0));
  TempDir dir("columns-" + std::to_string(columns));
  store::StatementCounts counts;
  auto opened = store::sqlite::Database::Open(dir.File("columns.db"), false, &counts);
  if (!opened.ok()) {
    state.SkipWithError("cannot open the database");
    return;
  }
  store::sqlite::Database& db = *opened.value();
  std::string ddl = "CREATE TABLE t (id INTEGER PRIMARY KEY";
  std::string insert = "INSERT INTO t (";
  for (int c = 0; c < columns; ++c) {
    ddl += ", c" + std::to_string(c) + (IsText(c) ? " TEXT NOT NULL" : " INTEGER NOT NULL");
    insert += (c == 0 ? "c" : ", c") + std::to_string(c);
  }
  ddl += ")";
  insert += ") VALUES ";
  for (int r = 0; r < kRowsPerInsert; ++r) {
    insert += r == 0 ? "(" : ", (";
    for (int c = 0; c < columns; ++c) insert += c == 0 ? "?" : ", ?";
    insert += ")";
  }
  auto q = db.Exec(ddl, store::StoreOp::kMigrate).ok()
               ? db.Prepare(insert, store::StoreOp::kCallLogInsert)
               : turnpike::Result<store::sqlite::Statement>(Error{ErrorCode::kInternal, "ddl", ""});
  if (!q.ok()) {
    state.SkipWithError("cannot prepare the insert");
    return;
  }
  store::sqlite::Statement& statement = q.value();
  const std::string text = "bench-model";
  int64_t n = 0;
  for (auto _ : state) {
    if (!db.Begin().ok()) {
      state.SkipWithError("BEGIN failed");
      return;
    }
    for (int s = 0; s < kRowsPerBatch / kRowsPerInsert; ++s) {
      for (int r = 0; r < kRowsPerInsert; ++r, ++n) {
        int changing = 0;
        for (int c = 0; c < columns; ++c) {
          const int p = r * columns + c + 1;
          if (IsText(c)) {
            statement.BindTextIfChanged(p, text);
          } else {
            statement.BindIfChanged(p, changing++ < kChangingInts ? n * 7 + c : c);
          }
        }
      }
      if (!statement.Run(store::sqlite::Statement::Bindings::kKeep).ok()) {
        state.SkipWithError("insert failed");
        return;
      }
    }
    if (!db.Commit().ok()) {
      state.SkipWithError("COMMIT failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * kRowsPerBatch);
  state.counters["columns"] = columns;
}
BENCHMARK(BM_InsertColumns)->Arg(21)->Arg(14)->Arg(10)->Unit(benchmark::kMicrosecond)->MinTime(2);

}  // namespace
