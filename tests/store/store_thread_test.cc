// The store thread's bridge back to a worker's event loop, its bounded queues, and the
// call-log buffer's full-queue policies (a dropped row never drops spend).
#include "store/store_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "store/call_log_buffer.h"

namespace turnpike::store {
namespace {

// A Store that only records what WriteCalls received (the thread never calls anything else
// here).
class RecordingStore : public Store {
 public:
  Status Migrate() override { return Ok{}; }
  int SchemaVersion() override { return 1; }
  Result<GovernanceRows> LoadGovernance() override { return GovernanceRows{}; }
  Result<int64_t> ChangeVersion() override { return int64_t{0}; }
  Status UpsertPlan(const governance::Plan&) override { return Ok{}; }
  Status InsertTenant(const governance::Tenant&) override { return Ok{}; }
  Status UpdateTenant(const governance::Tenant&) override { return Ok{}; }
  Status InsertKey(const governance::Key&) override { return Ok{}; }
  Status SetKeyStatus(std::string_view, governance::KeyStatus, int64_t) override { return Ok{}; }
  Status UpsertPrice(const PriceOverride&) override { return Ok{}; }
  Status DeletePrice(std::string_view) override { return Ok{}; }
  Result<std::vector<SpendRow>> LoadSpend(std::span<const std::string>) override {
    return std::vector<SpendRow>{};
  }
  Status WriteCalls(CallRecordSpans, bool, std::span<const SpendRow>) override { return Ok{}; }
  Result<std::vector<CallRow>> QueryCalls(const CallQuery&) override {
    return std::vector<CallRow>{};
  }
  Result<std::vector<SpendRow>> SumCallLog(const std::string&) override {
    return std::vector<SpendRow>{};
  }
  Status SetSpend(std::span<const SpendRow>) override { return Ok{}; }
};

struct Written {
  std::mutex mu;
  std::vector<CallRecord> rows;
  size_t batches = 0;
};

StoreThread::WriteFn Recorder(Written& w) {
  return [&w](Store&, CallRecordSpans transaction) {
    std::lock_guard lock(w.mu);
    ++w.batches;
    for (std::span<const CallRecord> part : transaction) {
      w.rows.insert(w.rows.end(), part.begin(), part.end());
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
  auto job = [ran_on](Store&) -> Result<int> {
    *ran_on = std::this_thread::get_id();
    return 42;
  };
  Result<int> result = co_await thread->Call<int>(std::move(job));
  *resumed_on = std::this_thread::get_id();
  *answer = result.ok() ? result.value() : -1;
}

TEST(StoreThreadTest, CallRunsOnTheStoreThreadAndResumesOnTheCallersLoop) {
  RecordingStore store;
  Written written;
  StoreThread thread(store, {}, Recorder(written), nullptr);
  thread.Start();
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

TEST(StoreThreadTest, ClosedJobQueueRefusesWithUnavailable) {
  RecordingStore store;
  Written written;
  StoreThread thread(store, {}, Recorder(written), nullptr);
  thread.Start();
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
  RecordingStore store;
  Written written;
  StoreThreadOptions options;
  options.batch_rows = 10;
  StoreThread thread(store, options, Recorder(written), nullptr);
  CallBatch rows;
  for (int i = 0; i < 25; ++i) rows.Add() = Row("k", 1);
  ASSERT_EQ(thread.SubmitRecords(rows), SubmitResult::kAccepted);
  EXPECT_TRUE(rows.empty());
  CallBatch more;
  for (int i = 0; i < 7; ++i) more.Add() = Row("k", 1);
  ASSERT_EQ(thread.SubmitRecords(more), SubmitResult::kAccepted);
  thread.Start();
  thread.Stop();
  EXPECT_EQ(written.rows.size(), 32u);
  EXPECT_EQ(written.batches, 4u);  // 10 + 10 + (5 + 5 of the next batch) + 2
  CallBatch late;
  late.Add() = Row("k", 1);
  EXPECT_EQ(thread.SubmitRecords(late), SubmitResult::kClosed);
}

TEST(CallLogBufferTest, DropPolicyKeepsSpendAsOneStandInPerKey) {
  RecordingStore store;
  Written written;
  StoreThreadOptions options;
  options.max_records = 2;  // the queue takes two rows, then is full
  StoreThread thread(store, options, Recorder(written), nullptr);
  CallLogBufferOptions buffer_options;
  buffer_options.batch_rows = 1'000;
  buffer_options.drop_when_full = true;
  {
    CallBatch fill;
    fill.Add() = Row("k1", 0);
    fill.Add() = Row("k1", 0);
    ASSERT_EQ(thread.SubmitRecords(fill), SubmitResult::kAccepted);
    CallLogBuffer buffer(thread, buffer_options);
    buffer.Add() = Row("k1", 100);
    buffer.Add() = Row("k1", 200);
    buffer.Add() = Row("k2", 50);
    buffer.Flush();
    EXPECT_EQ(buffer.dropped_rows(), 3u);
  }
  thread.Start();
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
  RecordingStore store;
  Written written;
  StoreThreadOptions options;
  options.max_records = 1;
  StoreThread thread(store, options, Recorder(written), nullptr);
  CallLogBufferOptions buffer_options;
  buffer_options.max_wait = std::chrono::seconds(60);
  CallBatch fill;
  fill.Add() = Row("k", 0);
  ASSERT_EQ(thread.SubmitRecords(fill), SubmitResult::kAccepted);
  CallLogBuffer buffer(thread, buffer_options);
  buffer.Add() = Row("k", 5);
  buffer.Flush();
  EXPECT_EQ(buffer.buffered(), 1u);  // kept, not dropped
  EXPECT_EQ(buffer.dropped_rows(), 0u);
  thread.Start();
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

// A batch's slots are reused: the second fill allocates no string (the buffers of the first
// are kept), and every field of a reused slot starts from its default.
TEST(CallBatchTest, ReusedSlotsKeepSmallBuffersAndResetFields) {
  CallBatch batch;
  CallRecord& first = batch.Add();
  first.request_id = std::string(40, 'r');  // past the small-string buffer: heap
  first.request_body = std::string(CallBatch::kMaxKeptCapacity + 1, 'b');
  first.cost_micros = 5;
  first.estimated = true;
  const char* buffer = first.request_id.data();
  batch.Clear();
  CallRecord& again = batch.Add();
  EXPECT_TRUE(again.request_id.empty());
  EXPECT_EQ(again.request_id.data(), buffer);  // the same buffer, kept
  EXPECT_GE(again.request_id.capacity(), 40u);
  EXPECT_LE(again.request_body.capacity(), CallBatch::kMaxKeptCapacity);  // the large one freed
  EXPECT_EQ(again.cost_micros, 0);
  EXPECT_FALSE(again.estimated);
  EXPECT_EQ(again.ttft_ms, -1);
  EXPECT_EQ(batch.size(), 1u);
}

// Batches come back: after the thread wrote a batch, the next SubmitRecords hands it back
// (with its slots) in exchange for the one submitted.
TEST(StoreThreadTest, WrittenBatchesAreHandedBackForReuse) {
  RecordingStore store;
  Written written;
  StoreThread thread(store, {}, Recorder(written), nullptr);
  thread.Start();
  CallBatch batch;
  batch.Add() = Row("k", 1);
  const CallRecord* first_slots = batch.records().data();
  ASSERT_EQ(thread.SubmitRecords(batch), SubmitResult::kAccepted);
  ASSERT_TRUE([&] {
    for (int i = 0; i < 1000 && thread.spare_batches() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return thread.spare_batches() == 1;
  }());
  batch.Add() = Row("k", 2);
  ASSERT_EQ(thread.SubmitRecords(batch), SubmitResult::kAccepted);
  EXPECT_TRUE(batch.empty());
  batch.Add() = Row("k", 3);
  EXPECT_EQ(batch.records().data(), first_slots);  // the first batch's slots, reused
  thread.Stop();
}

}  // namespace
}  // namespace turnpike::store
