// The store thread's bridge back to a worker's event loop, its bounded queues, and the
// call-log buffer's full-queue policies (a dropped row never drops spend).
#include "store/store_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <thread>

#include "null_engine.h"
#include "store/call_log_buffer.h"

namespace turnpike::store {
namespace {

struct Written {
  std::mutex mu;
  std::vector<CallRecord> rows;
  size_t batches = 0;
};

StoreThread::WriteFn Recorder(Written& w) {
  return [&w](CallLogStore&, CallBatchParts transaction) {
    std::lock_guard lock(w.mu);
    ++w.batches;
    for (const CallBatchPart& part : transaction) {
      for (size_t i = part.begin; i < part.end; ++i)
        w.rows.push_back(RecordOf(part.batch->record(i)));
    }
  };
}

CallRecord Row(const std::string& key, int64_t cost) {
  CallRecord r;
  r.tenant_id = "t";
  r.key_id = key;
  r.cost_micros = cost;
  return r;
}

boost::asio::awaitable<void> AskThread(StoreThread* thread, std::thread::id* ran_on,
                                       std::thread::id* resumed_on, int* answer) {
  auto job = [ran_on](Engine&) -> Result<int> {
    *ran_on = std::this_thread::get_id();
    return 42;
  };
  Result<int> result = co_await thread->Call<int>(std::move(job));
  *resumed_on = std::this_thread::get_id();
  *answer = result.ok() ? result.value() : -1;
}

TEST(StoreThreadTest, CallRunsOnTheStoreThreadAndResumesOnTheCallersLoop) {
  NullEngine store;
  Written written;
  StoreThread thread(store, {});
  thread.Start(Recorder(written), nullptr);
  boost::asio::io_context io;
  std::thread::id ran_on, resumed_on;
  int answer = 0;
  boost::asio::co_spawn(io, AskThread(&thread, &ran_on, &resumed_on, &answer),
                        boost::asio::detached);
  io.run();
  EXPECT_EQ(answer, 42);
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(resumed_on, std::this_thread::get_id());
  thread.Stop();
}

// A job that answers only once `release` is set (a server that does not answer).
boost::asio::awaitable<void> AskStuck(StoreThread* thread, std::atomic<bool>* release,
                                      std::atomic<int>* ran, Result<int>* answer) {
  auto job = [release, ran](Engine&) -> Result<int> {
    while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++*ran;
    return 7;
  };
  Result<int> result = co_await thread->Call<int>(std::move(job));
  *answer = std::move(result);
}

TEST(StoreThreadTest, CallDeadlineAnswersUnavailableWhileTheJobStillRuns) {
  NullEngine store;
  Written written;
  StoreThreadOptions options;
  options.call_deadline = std::chrono::milliseconds(20);
  StoreThread thread(store, options);
  thread.Start(Recorder(written), nullptr);
  boost::asio::io_context io;
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  Result<int> answer = 0;
  boost::asio::co_spawn(io, AskStuck(&thread, &release, &ran, &answer), boost::asio::detached);
  io.run();  // returns once the caller resumed: the deadline answered, the job is still held
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(ran.load(), 0);
  release = true;
  thread.Stop();  // the job ran after all; its late answer went nowhere
  EXPECT_EQ(ran.load(), 1);
  io.restart();
  EXPECT_EQ(io.run(), 0u);  // nothing was posted to the caller a second time
}

TEST(StoreThreadTest, CallDeadlineLetsAnAnsweredJobThrough) {
  NullEngine store;
  Written written;
  StoreThreadOptions options;
  options.call_deadline = std::chrono::milliseconds(60'000);
  StoreThread thread(store, options);
  thread.Start(Recorder(written), nullptr);
  boost::asio::io_context io;
  std::atomic<bool> release{true};
  std::atomic<int> ran{0};
  Result<int> answer = 0;
  boost::asio::co_spawn(io, AskStuck(&thread, &release, &ran, &answer), boost::asio::detached);
  io.run();  // not 60 s: the cancelled timer holds nothing up
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer.value(), 7);
  EXPECT_EQ(ran.load(), 1);
  thread.Stop();
}

TEST(StoreThreadTest, ClosedJobQueueRefusesWithUnavailable) {
  NullEngine store;
  Written written;
  StoreThread thread(store, {});
  thread.Start(Recorder(written), nullptr);
  thread.CloseJobs();
  boost::asio::io_context io;
  std::thread::id ran_on, resumed_on;
  int answer = 0;
  boost::asio::co_spawn(io, AskThread(&thread, &ran_on, &resumed_on, &answer),
                        boost::asio::detached);
  io.run();
  EXPECT_EQ(answer, -1);
  EXPECT_EQ(ran_on, std::thread::id{});
}

TEST(StoreThreadTest, StopWritesEveryQueuedRecordInBatches) {
  NullEngine store;
  Written written;
  StoreThreadOptions options;
  options.batch_rows = 10;
  StoreThread thread(store, options);
  CallBatch rows;
  for (int i = 0; i < 25; ++i) rows.Add(ViewOf(Row("k", 1)));
  ASSERT_EQ(thread.SubmitRecords(rows), SubmitResult::kAccepted);
  EXPECT_TRUE(rows.empty());
  CallBatch more;
  for (int i = 0; i < 7; ++i) more.Add(ViewOf(Row("k", 1)));
  ASSERT_EQ(thread.SubmitRecords(more), SubmitResult::kAccepted);
  thread.Start(Recorder(written), nullptr);
  thread.Stop();
  EXPECT_EQ(written.rows.size(), 32u);
  EXPECT_EQ(written.batches, 4u);  // 10 + 10 + (5 + 5 of the next batch) + 2
  CallBatch late;
  late.Add(ViewOf(Row("k", 1)));
  EXPECT_EQ(thread.SubmitRecords(late), SubmitResult::kClosed);
}

TEST(CallLogBufferTest, DropPolicyKeepsSpendAsOneStandInPerKey) {
  NullEngine store;
  Written written;
  StoreThreadOptions options;
  options.max_records = 2;  // the queue takes two rows, then is full
  StoreThread thread(store, options);
  CallLogBufferOptions buffer_options;
  buffer_options.batch_rows = 1'000;
  buffer_options.drop_when_full = true;
  {
    CallBatch fill;
    fill.Add(ViewOf(Row("k1", 0)));
    fill.Add(ViewOf(Row("k1", 0)));
    ASSERT_EQ(thread.SubmitRecords(fill), SubmitResult::kAccepted);
    CallLogBuffer buffer(thread, buffer_options);
    buffer.Add(ViewOf(Row("k1", 100)));
    buffer.Add(ViewOf(Row("k1", 200)));
    buffer.Add(ViewOf(Row("k2", 50)));
    buffer.Flush();
    EXPECT_EQ(buffer.dropped_rows(), 3u);
  }
  thread.Start(Recorder(written), nullptr);
  thread.Stop();
  int64_t cost = 0;
  int64_t standins = 0;
  int64_t represented = 0;
  for (const CallRecord& r : written.rows) {
    cost += r.cost_micros;
    if (r.dropped_rows > 0) {
      ++standins;
      represented += r.dropped_rows;
      EXPECT_EQ(r.error, "log_rows_dropped");
    }
  }
  EXPECT_EQ(cost, 350);  // nothing of the spend was lost
  EXPECT_EQ(standins, 2);
  EXPECT_EQ(represented, 3);
}

TEST(CallLogBufferTest, WaitPolicyKeepsRowsUntilTheQueueHasRoom) {
  NullEngine store;
  Written written;
  StoreThreadOptions options;
  options.max_records = 1;
  StoreThread thread(store, options);
  CallLogBufferOptions buffer_options;
  buffer_options.max_wait = std::chrono::seconds(60);
  CallBatch fill;
  fill.Add(ViewOf(Row("k", 0)));
  ASSERT_EQ(thread.SubmitRecords(fill), SubmitResult::kAccepted);
  CallLogBuffer buffer(thread, buffer_options);
  buffer.Add(ViewOf(Row("k", 5)));
  buffer.Flush();
  EXPECT_EQ(buffer.buffered(), 1u);  // kept, not dropped
  EXPECT_EQ(buffer.dropped_rows(), 0u);
  thread.Start(Recorder(written), nullptr);
  ASSERT_TRUE([&] {
    for (int i = 0; i < 200 && thread.queued_records() != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return thread.queued_records() == 0;
  }());
  buffer.Flush();
  EXPECT_EQ(buffer.buffered(), 0u);
  thread.Stop();
  EXPECT_EQ(written.rows.size(), 2u);
}

// Texts bound a worker's buffer as rows do: a batch goes once its texts pass
// batch_text_bytes, before batch_rows is reached.
TEST(CallLogBufferTest, ABatchGoesOnceItsTextsPassTheBound) {
  NullEngine store;
  Written written;
  StoreThread thread(store, {});
  CallLogBufferOptions buffer_options;
  buffer_options.batch_rows = 1'000;
  buffer_options.batch_text_bytes = 100;
  CallLogBuffer buffer(thread, buffer_options);
  CallRecord r = Row("k", 1);
  r.request_body = std::string(60, 'b');
  buffer.Add(ViewOf(r));
  buffer.Add(ViewOf(r));  // 60 bytes held: under the bound, kept
  EXPECT_EQ(buffer.buffered(), 2u);
  EXPECT_EQ(thread.queued_records(), 0u);
  buffer.Add(ViewOf(r));  // 120 bytes held: the two go first
  EXPECT_EQ(buffer.buffered(), 1u);
  EXPECT_EQ(thread.queued_records(), 2u);
  thread.Start(Recorder(written), nullptr);
  thread.Stop();
}

// A worker waiting for room drops its rows (spend kept in stand-ins) once their texts pass
// 16 times batch_text_bytes, without waiting for max_wait.
TEST(CallLogBufferTest, AWaitingBufferDropsPastItsTextBound) {
  NullEngine store;
  Written written;
  StoreThreadOptions options;
  options.max_records = 1;
  StoreThread thread(store, options);
  CallBatch fill;
  fill.Add(ViewOf(Row("k", 0)));
  ASSERT_EQ(thread.SubmitRecords(fill), SubmitResult::kAccepted);  // the queue is full
  CallLogBufferOptions buffer_options;
  buffer_options.max_wait = std::chrono::seconds(60);
  buffer_options.batch_text_bytes = 10;
  CallLogBuffer buffer(thread, buffer_options);
  CallRecord r = Row("k", 5);
  r.request_body = std::string(100, 'b');
  buffer.Add(ViewOf(r));
  buffer.Flush();
  EXPECT_EQ(buffer.dropped_rows(), 0u);  // 100 bytes: waits
  EXPECT_EQ(buffer.buffered(), 1u);
  buffer.Add(ViewOf(r));  // the add flushes first: still refused, still under 160
  EXPECT_EQ(buffer.dropped_rows(), 0u);
  buffer.Flush();  // 200 bytes: past 16 * 10, dropped
  EXPECT_EQ(buffer.dropped_rows(), 2u);
  EXPECT_EQ(buffer.buffered(), 0u);
  thread.Start(Recorder(written), nullptr);
  thread.Stop();
  int64_t cost = 0;
  for (const CallRecord& row : written.rows) cost += row.cost_micros;
  EXPECT_EQ(cost, 10);  // the spend of both dropped rows, in their stand-in
}

// A record reads back from its batch exactly as it went in: numbers, texts and route, also
// when consecutive records share a route (stored once) or change it.
TEST(CallBatchTest, RecordsReadBackAsAdded) {
  CallBatch batch;
  std::vector<CallRecord> rows;
  for (int i = 0; i < 6; ++i) {
    CallRecord r = Row(i < 2 || i == 5 ? "k1" : "k2", 10 + i);
    r.request_id = "req-" + std::to_string(i) + std::string(30, 'x');  // past the small string
    r.model = i == 3 ? "other-model" : "m";
    r.deployment = "d";
    r.month = 300 + (i == 4 ? 1 : 0);
    r.status = i == 2 ? 502 : 200;
    r.error = i == 2 ? "upstream_error" : "";
    r.request_body = i == 1 ? "{\"messages\":[]}" : "";
    r.ttft_ms = i * 1.5;
    r.overhead_us = i;
    r.estimated = i % 2 == 0;
    r.dropped_rows = i == 5 ? 3 : 0;
    rows.push_back(r);
    batch.Add(ViewOf(r));
  }
  ASSERT_EQ(batch.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const CallRecord got = RecordOf(batch.record(i));
    const CallRecord& want = rows[i];
    EXPECT_EQ(got.request_id, want.request_id) << i;
    EXPECT_EQ(got.tenant_id, want.tenant_id) << i;
    EXPECT_EQ(got.key_id, want.key_id) << i;
    EXPECT_EQ(got.model, want.model) << i;
    EXPECT_EQ(got.deployment, want.deployment) << i;
    EXPECT_EQ(got.month, want.month) << i;
    EXPECT_EQ(got.status, want.status) << i;
    EXPECT_EQ(got.error, want.error) << i;
    EXPECT_EQ(got.request_body, want.request_body) << i;
    EXPECT_EQ(got.cost_micros, want.cost_micros) << i;
    EXPECT_EQ(got.ttft_ms, want.ttft_ms) << i;
    EXPECT_EQ(got.overhead_us, want.overhead_us) << i;
    EXPECT_EQ(got.estimated, want.estimated) << i;
    EXPECT_EQ(got.dropped_rows, want.dropped_rows) << i;
    const RouteView route = batch.route(batch.route_of(i));
    EXPECT_EQ(route.key_id, want.key_id) << i;
    EXPECT_EQ(route.month, want.month) << i;
  }
  // Rows 0 and 1 share their route, stored once; every change of route is a new one.
  EXPECT_EQ(batch.route_of(0), batch.route_of(1));
  EXPECT_NE(batch.route_of(1), batch.route_of(2));
  EXPECT_NE(batch.route_of(2), batch.route_of(3));
  EXPECT_NE(batch.route_of(3), batch.route_of(4));
}

// A cleared batch keeps the room its records took (entries and texts), so a warm worker's
// batch allocates nothing; a text buffer grown past kMaxKeptText (opted-in bodies) is freed.
TEST(CallBatchTest, ClearKeepsRoomButNotLargeTexts) {
  CallBatch batch;
  CallRecord r = Row("k", 1);
  r.request_id = std::string(40, 'r');
  for (int i = 0; i < 100; ++i) batch.Add(ViewOf(r));
  const size_t capacity = batch.capacity();
  const size_t text_capacity = batch.text_capacity();
  batch.Clear();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.text_bytes(), 0u);
  EXPECT_EQ(batch.capacity(), capacity);
  EXPECT_EQ(batch.text_capacity(), text_capacity);
  batch.Add(ViewOf(r));
  EXPECT_EQ(RecordOf(batch.record(0)).request_id, r.request_id);
  EXPECT_EQ(RecordOf(batch.record(0)).cost_micros, 1);

  r.request_body = std::string(CallBatch::kMaxKeptText + 1, 'b');
  batch.Add(ViewOf(r));
  EXPECT_GT(batch.text_bytes(), CallBatch::kMaxKeptText);
  batch.Clear();
  EXPECT_LE(batch.text_capacity(), CallBatch::kMaxKeptText);  // the large buffer freed
  batch.Add(ViewOf(Row("k", 2)));
  EXPECT_EQ(RecordOf(batch.record(0)).request_body, "");
  EXPECT_EQ(RecordOf(batch.record(0)).cost_micros, 2);
}

// Batches come back: after the thread wrote a batch, the next SubmitRecords hands it back
// (with its slots) in exchange for the one submitted.
TEST(StoreThreadTest, WrittenBatchesAreHandedBackForReuse) {
  NullEngine store;
  Written written;
  StoreThread thread(store, {});
  thread.Start(Recorder(written), nullptr);
  CallBatch batch;
  for (int i = 0; i < 100; ++i) batch.Add(ViewOf(Row("k", 1)));
  ASSERT_EQ(thread.SubmitRecords(batch), SubmitResult::kAccepted);
  EXPECT_EQ(batch.capacity(), 0u);  // a new batch: there was no spare yet
  ASSERT_TRUE([&] {
    for (int i = 0; i < 1000 && thread.spare_batches() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return thread.spare_batches() == 1;
  }());
  batch.Add(ViewOf(Row("k", 2)));
  ASSERT_EQ(thread.SubmitRecords(batch), SubmitResult::kAccepted);
  EXPECT_TRUE(batch.empty());
  EXPECT_GE(batch.capacity(), 100u);  // the first batch, with its room, handed back
  thread.Stop();
}

}  // namespace
}  // namespace turnpike::store
